"""
Fresnel's equations for a glass pane (docs/physics.md, "Glass and mirrors").

A pane's ``transmission`` t0 (config/materials.yaml) is what it passes at normal incidence: its
two faces with their multiple reflections, F(0), times the internal transmittance tau of its
bulk, t0 = F(0) tau. At incidence theta the faces pass F(theta), the unpolarised mean over s and
p of (1 - R) / (1 + R) (a non-absorbing slab's incoherent sum of reflections), and the bulk
tau^(1 / cos theta_t) over the longer refracted path (Snell: sin theta_t = sin theta / n), so

    t(theta) = F(theta) tau^(1 / cos theta_t),  tau = t0 / F(0).

R_s = ((cos i - n cos t) / (cos i + n cos t))^2, R_p = ((n cos i - cos t) / (n cos i + cos t))^2
(Born & Wolf, Principles of Optics, 7th ed., section 1.5.3). n = 1.5 at 905 nm: soda-lime
window glass (M. Rubin, "Optical properties of soda lime silica glasses", Solar Energy Materials
12, 275-288 (1985): n = 1.5130 - 0.003169 lambda^2 + 0.003962 / lambda^2, 1.515 at 0.905 um),
the value of the pane's specular_reflectance (R = 0.04 per face).
"""

from __future__ import annotations

from typing import Tuple, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.world.materials import MaterialTable

#: Refractive index of soda-lime glass at 905 nm (Rubin 1985, rounded as R_s uses it).
N_GLASS = 1.5


def face_reflectances(cos_i: ArrayLike, n: float = N_GLASS) -> Tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Return (R_s, R_p, cos_t) of one air-glass face at incidence cosines cos_i (any shape)."""
    cos_i = np.clip(np.abs(np.asarray(cos_i, dtype=np.float64)), 0.0, 1.0)
    cos_t = np.sqrt(1.0 - (1.0 - cos_i * cos_i) / (n * n))
    r_s = ((cos_i - n * cos_t) / (cos_i + n * cos_t)) ** 2
    r_p = ((n * cos_i - cos_t) / (n * cos_i + cos_t)) ** 2
    return r_s, r_p, cos_t


def slab_faces(cos_i: ArrayLike, n: float = N_GLASS) -> NDArray[np.float64]:
    """Return F(theta): the unpolarised transmission of a slab's two faces (no absorption)."""
    r_s, r_p, _ = face_reflectances(cos_i, n)
    return 0.5 * ((1.0 - r_s) / (1.0 + r_s) + (1.0 - r_p) / (1.0 + r_p))


def pane_transmission(t0: ArrayLike, cos_i: ArrayLike,
                      n: float = N_GLASS) -> NDArray[np.float64]:
    """Return t(theta) of a pane passing t0 at normal incidence, at incidence cosines cos_i."""
    t0 = np.asarray(t0, dtype=np.float64)
    tau = np.minimum(t0 / slab_faces(1.0, n), 1.0)
    _, _, cos_t = face_reflectances(cos_i, n)
    return slab_faces(cos_i, n) * tau ** (1.0 / cos_t)


def pane_log_gain(table: MaterialTable, material: ArrayLike,
                  cos_i: ArrayLike) -> NDArray[np.float64]:
    """
    Return log(t(theta) / t0) per hit (H,): 0 except on panes (glass-like, t0 and R_s > 0).

    material (H,) valid indices, cos_i (H,) incidence cosines; what the pass-through sum of
    radiometry_passes.hit_power adds to the pane's log t0 (exactly 0.0 elsewhere); t(theta) is
    floored at 1e-12 as the kernel floors t0.
    """
    material = np.asarray(material)
    t0 = table.transmission[material]
    pane = (t0 > 0.0) & (table.specular_reflectance[material] > 0.0)
    out = np.zeros(material.shape[0])
    if pane.any():
        t = pane_transmission(t0[pane], np.asarray(cos_i)[pane])
        out[pane] = np.log(np.maximum(t, 1e-12)) - np.log(t0[pane])
    return out
