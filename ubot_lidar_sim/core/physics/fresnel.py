"""
Fresnel's equations for panes, water and metals (docs/physics.md, "Glass and mirrors").

Each material's optics are its properties (config/materials.yaml): specular_reflectance R0 (what
it reflects as a mirror ray at normal incidence), transmission t0 (what a pane passes there) and
refractive_index n (0: a metal).

A pane's (MaterialTable.panes) two faces with their multiple reflections, F(0), times the
internal transmittance tau of its bulk give t0 = F(0) tau. At incidence theta the faces pass
F(theta), the unpolarised mean over s and p of (1 - R) / (1 + R) (a non-absorbing slab's
incoherent sum of reflections), and the bulk tau^(1 / cos theta_t) over the longer refracted path
(Snell: sin theta_t = sin theta / n), so

    t(theta) = F(theta) tau^(1 / cos theta_t),  tau = t0 / F(0).

It reflects the mean over s and p of R + (1 - R)^2 R T^2 / (1 - R^2 T^2), T = tau^(1 / cos
theta_t) (the front face, and the back face's reflection twice through the bulk); a folding
dielectric (water: what enters is absorbed) reflects its one face's mean of R_s and R_p; a metal
(n = 0) reflects R0 at every incidence (aluminium's complex index, Rakic 1995, keeps it within 3 %
of R0 up to 60 deg). The dielectrics' shape is scaled to R0 at normal incidence, so that a
materials_file's specular_reflectance holds there.

R_s = ((cos i - n cos t) / (cos i + n cos t))^2, R_p = ((n cos i - cos t) / (n cos i + cos t))^2
(Born & Wolf, Principles of Optics, 7th ed., section 1.5.3). n = 1.5 at 905 nm: soda-lime
window glass (M. Rubin, "Optical properties of soda lime silica glasses", Solar Energy Materials
12, 275-288 (1985): n = 1.5130 - 0.003169 lambda^2 + 0.003962 / lambda^2, 1.515 at 0.905 um);
water 1.33 (Hale & Querry 1973: 1.328 at 0.90 um).
"""

from __future__ import annotations

from typing import Tuple, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.world.materials import MaterialTable

#: Refractive index of soda-lime glass at 905 nm (Rubin 1985, rounded as R_s uses it).
N_GLASS = 1.5


def face_reflectances(cos_i: ArrayLike, n: ArrayLike = N_GLASS) -> Tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return (R_s, R_p, cos_t) of one face of index n (> 0) at incidence cosines cos_i."""
    cos_i = np.clip(np.abs(np.asarray(cos_i, dtype=np.float64)), 0.0, 1.0)
    n = np.asarray(n, dtype=np.float64)
    cos_t = np.sqrt(1.0 - (1.0 - cos_i * cos_i) / (n * n))
    r_s = ((cos_i - n * cos_t) / (cos_i + n * cos_t)) ** 2
    r_p = ((n * cos_i - cos_t) / (n * cos_i + cos_t)) ** 2
    return r_s, r_p, cos_t


def slab_faces(cos_i: ArrayLike, n: ArrayLike = N_GLASS) -> NDArray[np.float64]:
    """Return F(theta): the unpolarised transmission of a slab's two faces (no absorption)."""
    r_s, r_p, _ = face_reflectances(cos_i, n)
    return 0.5 * ((1.0 - r_s) / (1.0 + r_s) + (1.0 - r_p) / (1.0 + r_p))


def bulk_transmittance(t0: ArrayLike, n: ArrayLike = N_GLASS) -> NDArray[np.float64]:
    """Return tau = t0 / F(0), a pane's internal transmittance at normal incidence (<= 1)."""
    return np.minimum(np.asarray(t0, dtype=np.float64) / slab_faces(1.0, n), 1.0)


def pane_transmission(t0: ArrayLike, cos_i: ArrayLike,
                      n: ArrayLike = N_GLASS) -> NDArray[np.float64]:
    """Return t(theta) of a pane passing t0 at normal incidence, at incidence cosines cos_i."""
    _, _, cos_t = face_reflectances(cos_i, n)
    return slab_faces(cos_i, n) * bulk_transmittance(t0, n) ** (1.0 / cos_t)


def pane_reflectance(t0: ArrayLike, cos_i: ArrayLike,
                     n: ArrayLike = N_GLASS) -> NDArray[np.float64]:
    """Return what a pane passing t0 reflects at incidence cosines cos_i (both faces, bulk)."""
    r_s, r_p, cos_t = face_reflectances(cos_i, n)
    bulk2 = bulk_transmittance(t0, n) ** (2.0 / cos_t)

    def one(r: NDArray[np.float64]) -> NDArray[np.float64]:
        return r + (1.0 - r) ** 2 * r * bulk2 / (1.0 - r * r * bulk2)
    return 0.5 * (one(r_s) + one(r_p))


def surface_reflectance(cos_i: ArrayLike, n: ArrayLike) -> NDArray[np.float64]:
    """Return the unpolarised reflectance (R_s + R_p) / 2 of one face of index n."""
    r_s, r_p, _ = face_reflectances(cos_i, n)
    return 0.5 * (r_s + r_p)


def specular_share(table: MaterialTable, material: ArrayLike,
                   cos_i: ArrayLike) -> NDArray[np.float64]:
    """
    Return R(theta) (H,): what each hit reflects on as a mirror ray (0 on non-folding surfaces).

    material (H,) valid indices, cos_i (H,) incidence cosines. R0 on metals (n = 0); Fresnel's
    shape scaled to R0 at normal incidence on a pane (pane_reflectance) or a folding dielectric
    (surface_reflectance); at most 1.
    """
    material = np.asarray(material)
    cos_i = np.asarray(cos_i, dtype=np.float64)
    out = table.specular_reflectance[material].astype(np.float64)
    n = table.refractive_index[material]
    pane = table.panes[material]
    dielectric = (n > 0.0) & (out > 0.0)
    k = np.flatnonzero(dielectric & pane)
    if k.size:
        t0 = table.transmission[material[k]]
        out[k] *= pane_reflectance(t0, cos_i[k], n[k]) / pane_reflectance(t0, 1.0, n[k])
    k = np.flatnonzero(dielectric & ~pane)
    if k.size:
        out[k] *= surface_reflectance(cos_i[k], n[k]) / surface_reflectance(1.0, n[k])
    return np.minimum(out, 1.0)


def pane_log_gain(table: MaterialTable, material: ArrayLike,
                  cos_i: ArrayLike) -> NDArray[np.float64]:
    """
    Return log(t(theta) / t0) per hit (H,): 0 except on panes (MaterialTable.panes, n > 0).

    material (H,) valid indices, cos_i (H,) incidence cosines; what the pass-through sum of
    radiometry_passes.hit_power adds to the pane's log t0 (exactly 0.0 elsewhere); t(theta) is
    floored at 1e-12 as the kernel floors t0.
    """
    material = np.asarray(material)
    n = table.refractive_index[material]
    pane = table.panes[material] & (n > 0.0)
    out = np.zeros(material.shape[0])
    if pane.any():
        t0 = table.transmission[material[pane]]
        t = pane_transmission(t0, np.asarray(cos_i)[pane], n[pane])
        out[pane] = np.log(np.maximum(t, 1e-12)) - np.log(t0)
    return out
