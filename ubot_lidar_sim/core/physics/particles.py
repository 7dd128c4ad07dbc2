"""
Raindrops and snowflakes as discrete scatterers in the beam volume (docs/physics-weather.md).

Size distributions, exponential in the melted (water-equivalent) diameter D, N(D) = N0
exp(-Lambda D) m^-3 mm^-1: rain Marshall & Palmer (1948), N0 = 8000, Lambda = 4.1 R^-0.21;
snow Gunn & Marshall (1958), N0 = 3.8e3 S^-0.87, Lambda = 2.55 S^-0.48 (snow.py). A flake's
maximum diameter D follows from its mass and the Brandes et al. (2007) density of snowflakes,
rho_s = 0.178 D^-0.922 g cm^-3 (D in mm), never denser than ice; an aggregate is mostly air, so
its optical cross-section is Mitchell's (1996) aggregate area law of D seen from the side
(0.6 of it, Hogan et al. 2012; snow_optics.py, the default, whatever the rate) or, with
snow_flake_optics itu_matched, the area ratio A_r times its disc pi / 4 D^2, A_r set so that
the flakes' extinction 2 sum(a) equals the snow law's (flake_area_ratio). A particle of optical
cross-section a in a beam of cross-section A(r) covers the share f = a / A(r) of the footprint
and returns as a Lambertian target of reflectance 2 pi / S f (backscatter cross-section
2 a / S for the lidar ratio S, extinction efficiency 2); it shadows what lies behind it by
(1 - f)^2 (Hahner et al. 2022 split the beam the same way). Only the
particles large enough to be detected somewhere along the beam are drawn (memorylessness of the
exponential: the rest of their diameter above the cut is again exponential); the others act
through the mean extinction only.
"""

import math
from typing import Protocol, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.optics import OpticsConfig
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics import snow_optics
from ubot_lidar_sim.core.physics import soft_target
from ubot_lidar_sim.core.physics.sensor_part import SensorPart


class ParticleMedium(Protocol):
    """What the particle laws read of an atmosphere.Medium (which imports this module)."""

    @property
    def alpha_per_m(self) -> float:
        """Return the extinction coefficient, 1/m."""

    @property
    def beta_per_m_sr(self) -> float:
        """Return the backscatter coefficient, 1/(m sr)."""

    @property
    def particles_per_m3(self) -> float:
        """Return the number density, 1/m^3."""

    @property
    def slope_per_mm(self) -> float:
        """Return the size distribution's slope Lambda, 1/mm (melted diameter)."""

    @property
    def particle(self) -> str:
        """Return the particle kind: 'drop', 'dry' or 'wet' (snow)."""


#: Marshall & Palmer (1948): N0 of raindrops, m^-3 mm^-1.
MP_N0 = 8000.0
#: Brandes et al. (2007, J. Appl. Meteor. Climatol. 46, 634; Colorado snowstorms, video
#: disdrometer): flake density rho = 0.178 D^-0.922 g cm^-3, D the maximum diameter in mm.
BRANDES_RHO, BRANDES_EXP = 0.178, 0.922
#: The mass of a flake (water, 1 g cm^-3): D_melted^3 = 0.178 D^(3 - 0.922).
FLAKE_MASS_EXP = 3.0 - BRANDES_EXP
#: A particle is never denser than ice (0.917 g cm^-3): D_geom >= D_melted (1 / 0.917)^(1/3).
ICE_DIAMETER_FACTOR = (1.0 / 0.917) ** (1.0 / 3.0)
#: The melted diameter, mm, below which the Brandes density would exceed ice's.
ICE_MELTED_MM = (BRANDES_RHO * ICE_DIAMETER_FACTOR ** FLAKE_MASS_EXP) ** (1.0 / BRANDES_EXP)
#: Terms of the incomplete-gamma series: x = Lambda D_ice <= 12 for S >= 0.001 mm/h, error < 1e-12.
SERIES_TERMS = 60
#: Range samples of the search for the most favourable range (the detectable-size cut).
CUT_GRID = 512
#: The cut is lowered by this factor of the diameter: the grid's maximum may miss the true one.
CUT_MARGIN = 0.98


def divergence_rad(optics: OpticsConfig) -> float:
    """Return the full divergence sqrt(horizontal x vertical), rad: the elliptic beam's area."""
    vertical = optics.divergence_v_mrad or optics.divergence_mrad
    return math.sqrt(optics.divergence_mrad * vertical) * 1e-3


def beam_diameter_m(optics: OpticsConfig, range_m: ArrayLike) -> np.ndarray:
    """Return the beam diameter D_exit + R divergence, m, at ranges range_m, m."""
    return optics.exit_diameter_m + np.asarray(range_m, dtype=np.float64) * divergence_rad(optics)


def beam_area_m2(optics: OpticsConfig, range_m: ArrayLike) -> np.ndarray:
    """Return the beam cross-section pi / 4 (D_exit + R divergence)^2, m^2."""
    d = beam_diameter_m(optics, range_m)
    return math.pi / 4.0 * d * d


def beam_volume_m3(optics: OpticsConfig, r1_m: ArrayLike, r2_m: ArrayLike) -> np.ndarray:
    """
    Return the beam volume between ranges r1 <= r2, m^3: int A(r) dr.

    pi / 12 (r2 - r1) (a^2 + a b + b^2), a = D0 + theta r2 and b = D0 + theta r1, for the exit
    diameter D0 and the divergence theta (the cone frustum; no cancellation as theta -> 0).
    """
    r1 = np.asarray(r1_m, dtype=np.float64)
    r2 = np.asarray(r2_m, dtype=np.float64)
    a, b = beam_diameter_m(optics, r2), beam_diameter_m(optics, r1)
    return math.pi / 12.0 * (r2 - r1) * (a * a + a * b + b * b)


def ranges_in_volume(optics: OpticsConfig, r1_m: ArrayLike, r2_m: ArrayLike, u: np.ndarray,
                     ) -> np.ndarray:
    """
    Return ranges, m, of points uniform in the beam volume from r1 to r2 for uniforms u.

    The cube w^3 = b^3 + u (a^3 - b^3) of the diameter, written r = r1 + u (r2 - r1) (a^2 + a b +
    b^2) / (w^2 + w b + b^2) so that a thin or parallel beam stays exact.
    """
    r1 = np.asarray(r1_m, dtype=np.float64)
    r2 = np.asarray(r2_m, dtype=np.float64)
    a, b = beam_diameter_m(optics, r2), beam_diameter_m(optics, r1)
    s = a * a + a * b + b * b
    w = np.cbrt(b ** 3 + u * (a - b) * s)
    den = w * w + w * b + b * b
    # den = 0 only at w = b = 0 (u = 0 at a sensor without exit diameter): r = r1 there.
    with np.errstate(invalid='ignore', divide='ignore'):
        ratio = np.where(den > 0.0, s / den, 1.0)
    return r1 + u * (r2 - r1) * ratio


def geometric_diameter_mm(kind: str, melted_mm: ArrayLike) -> NDArray[np.float64]:
    """
    Return the geometric (maximum) diameter, mm, of particles of a melted diameter, mm.

    kind 'drop': the same; 'dry' / 'wet' snow: the mass at the Brandes et al. density, D =
    (D_melted^3 / 0.178)^(1 / 2.078), at least the diameter of solid ice.
    """
    d = np.asarray(melted_mm, dtype=np.float64)
    if kind == 'drop':
        return d
    return np.maximum((d ** 3 / BRANDES_RHO) ** (1.0 / FLAKE_MASS_EXP), ICE_DIAMETER_FACTOR * d)


def melted_diameter_mm(kind: str, geometric_mm: ArrayLike) -> NDArray[np.float64]:
    """Return the melted diameter, mm, of a geometric diameter (inverse of the above)."""
    g = np.asarray(geometric_mm, dtype=np.float64)
    if kind == 'drop':
        return g
    return np.minimum(np.cbrt(BRANDES_RHO * g ** FLAKE_MASS_EXP), g / ICE_DIAMETER_FACTOR)


def flake_area_ratio(medium: ParticleMedium) -> float:
    """
    Return the area ratio A_r of a medium's particles: optical / disc cross-section (<= 1).

    Drops: 1 (solid spheres). Flakes: alpha / (2 int N(D) pi / 4 D_geom(D)^2 dD), the share
    of their discs that makes the drawn flakes' extinction (efficiency 2) the snow law's alpha
    (an aggregate's projected ice area is a fraction of its disc); capped at 1. Closed form
    over the exponential N0 exp(-Lambda D) with the ice-density floor below ICE_MELTED_MM.
    """
    if medium.particle == 'drop' or medium.slope_per_mm <= 0.0 or medium.particles_per_m3 <= 0.0:
        return 1.0
    lam, x = medium.slope_per_mm, medium.slope_per_mm * ICE_MELTED_MM
    n0 = medium.particles_per_m3 * lam
    k = 6.0 / FLAKE_MASS_EXP + 1.0
    # int_0^Dx D^2 e^(-lam D) and int_Dx^inf D^(6 / 2.078) e^(-lam D), mm^3 and mm^(k).
    ice = ICE_DIAMETER_FACTOR ** 2 / lam ** 3 * (2.0 - math.exp(-x) * (x * x + 2.0 * x + 2.0))
    fluffy = (BRANDES_RHO ** (-2.0 / FLAKE_MASS_EXP) / lam ** k
              * (math.gamma(k) - _lower_incomplete_gamma(k, x)))
    discs_m2_per_m3 = math.pi / 4.0 * n0 * (ice + fluffy) * 1e-6
    return min(medium.alpha_per_m / (2.0 * discs_m2_per_m3), 1.0)


def _lower_incomplete_gamma(k, x):
    """Return int_0^x t^(k-1) e^-t dt = x^k e^-x sum x^n / (k (k+1) ... (k+n)), x <= ~12."""
    x = float(x)
    terms = x ** np.arange(SERIES_TERMS) / np.cumprod(k + np.arange(SERIES_TERMS))
    return float(x ** k * math.exp(-x) * terms.sum())


def particle_reflectance(lidar_ratio_sr: float) -> float:
    """Return 2 pi / S: the Lambertian reflectance of a particle over its own cross-section."""
    return 2.0 * math.pi / lidar_ratio_sr


# detectable_cut_mm and sample read the optics, the radiometry and the atmosphere (the physical
# model) and the sensor's min_range_m.
def detectable_cut_mm(model: PhysicalModel, sensor: SensorPart, medium: ParticleMedium,
                      two_way_alpha_per_m: float, r10_max_m: float) -> float:
    """
    Return the smallest melted diameter, mm, of a particle that can be detected (inf: none).

    Over ranges min_range_m to clutter_max_range_m and the most sensitive ring (R10 r10_max_m),
    a particle covering its whole optical cross-section: a = P_min / (2 pi / S K O(r) T^2(r) /
    (r^2 A(r))) at the most favourable r, a = A_r pi / 4 D^2, D lowered by CUT_MARGIN.
    """
    optics, spec, air = model.optics, model.radiometry, model.atmosphere
    r1 = max(sensor.min_range_m, 1e-3)
    if air.clutter_max_range_m <= r1 or float(beam_area_m2(optics, r1)) <= 0.0:
        return math.inf
    r = np.linspace(r1, air.clutter_max_range_m, CUT_GRID)
    gain = (radiometry.counts_per_reflectance(spec, r)
            * (r10_max_m / spec.range_at_10pct_m) ** 2
            * np.exp(-two_way_alpha_per_m * r) / beam_area_m2(optics, r))
    best = float(gain.max()) * particle_reflectance(medium.alpha_per_m / medium.beta_per_m_sr)
    if best <= 0.0:
        return math.inf
    area_m2 = soft_target.weakest_detectable_counts(spec) / best
    if snow_optics.uses_area_law(air, medium):
        geometric = float(snow_optics.side_diameter_mm(area_m2)) * CUT_MARGIN
    else:
        geometric = 2.0 * math.sqrt(area_m2 / (math.pi * flake_area_ratio(medium))) * 1e3 \
            * CUT_MARGIN
    return float(melted_diameter_mm(medium.particle, geometric))


def sample(model: PhysicalModel, sensor: SensorPart, medium: ParticleMedium, limit_m: ArrayLike,
           two_way_alpha_per_m: float, r10_max_m: float, count_rng: np.random.Generator,
           draw_rng: np.random.Generator,
           ) -> Tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64],
                      NDArray[np.float64]]:
    """
    Draw one medium's detectable particles in every beam: (beam, range_m, share, rho) (K,).

    limit_m (B,): the particles lie from min_range_m to min(limit, clutter_max_range_m); counts
    Poisson(n_cut V) per beam, n_cut = N0 / Lambda exp(-Lambda D_cut) (count_rng, one draw per
    beam); then per particle (beam order) a uniform for its range in the beam volume and an
    exponential for its diameter above the cut (draw_rng, in that order). share = min(A_r a /
    A(r), 1) (a the disc of the geometric diameter); rho = 2 pi / S share.
    """
    limit, optics = np.asarray(limit_m, dtype=np.float64), model.optics
    r1 = max(sensor.min_range_m, 1e-3)
    cut = detectable_cut_mm(model, sensor, medium, two_way_alpha_per_m, r10_max_m)
    empty = np.zeros(0)
    if not math.isfinite(cut) or medium.particles_per_m3 <= 0.0 or medium.slope_per_mm <= 0.0:
        return np.zeros(0, np.int64), empty, empty, empty
    slope = medium.slope_per_mm
    n_cut = medium.particles_per_m3 * math.exp(-slope * cut)
    r2 = np.maximum(np.minimum(limit, model.atmosphere.clutter_max_range_m), r1)
    count = count_rng.poisson(n_cut * beam_volume_m3(optics, r1, r2))
    beam = np.repeat(np.arange(limit.size, dtype=np.int64), count)
    u = draw_rng.random(beam.size)
    e = draw_rng.exponential(size=beam.size)
    r = ranges_in_volume(optics, r1, r2[beam], u)
    d_mm = geometric_diameter_mm(medium.particle, cut + e / slope)
    if snow_optics.uses_area_law(model.atmosphere, medium):
        optical_m2 = snow_optics.side_area_m2(d_mm)
    else:
        optical_m2 = flake_area_ratio(medium) * math.pi / 4.0 * (d_mm * 1e-3) ** 2
    share = np.minimum(optical_m2 / beam_area_m2(optics, r), 1.0)
    rho = particle_reflectance(medium.alpha_per_m / medium.beta_per_m_sr) * share
    return beam, r, share, rho


def shadow_factor(p_beam: NDArray[np.int64], p_range: NDArray[np.float64],
                  p_share: NDArray[np.float64], c_beam: ArrayLike,
                  c_range: ArrayLike) -> NDArray[np.float64]:
    """
    Return the two-way shadow of particles on contributions: prod (1 - f)^2 (M,).

    Over the particles (K,) of the contribution's beam nearer than its range.
    """
    c_beam = np.asarray(c_beam, dtype=np.int64)
    out = np.ones(c_beam.shape)
    if p_beam.size == 0 or c_beam.size == 0:
        return out
    c_range = np.asarray(c_range, dtype=np.float64)
    span = 2.0 * max(float(p_range.max()), float(c_range.max()), 0.0) + 2.0
    # Only the contributions of beams that hold a particle are searched (the others keep 1):
    # a sweep has hundreds of particles against hundreds of thousands of contributions.
    holds = np.zeros(int(max(p_beam.max(), c_beam.max())) + 1, bool)
    holds[p_beam] = True
    rows = np.flatnonzero(holds[c_beam])
    key = p_beam * span + p_range
    order = np.argsort(key, kind='stable')
    log_t = 2.0 * np.log1p(-np.minimum(p_share[order], 1.0 - 1e-12))
    cum = np.concatenate([[0.0], np.cumsum(log_t)])
    ks = key[order]
    base = c_beam[rows] * span
    lo = np.searchsorted(ks, base, side='left')
    hi = np.searchsorted(ks, base + np.clip(c_range[rows], 0.0, span - 1.0), side='left')
    out[rows] = np.exp(cum[hi] - cum[lo])
    return out
