"""
Weather along the beams (document 001 with the physics-notes fix): extinction, clutter.

Rain extinction from the Carbonneau (1998) law, fog/haze from the visibility (Koschmieder) minus
its rain part, scaled to the laser wavelength with Kim et al. (2001); backscatter from lidar
ratios; rain clutter from Marshall-Palmer drop counts. Randomness only from the Generator passed.
"""

from dataclasses import dataclass
import logging
import math

import numpy as np

from ubot_lidar_sim.core.classes import PRECIPITATION_CLASS
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.execution import parts
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics.echoes import Contributions
from ubot_lidar_sim.core.world.materials import OTHER

_LOG = logging.getLogger(__name__)
DB_PER_NEPER = 10.0 * math.log10(math.e)  # 4.343 dB per neper
KOSCHMIEDER = 3.912  # -ln(0.02): 2 % contrast visibility
_clamp_warned = False


def _check(name, value, lo=0.0, allow_inf=False):
    v = float(value)
    if math.isnan(v) or v < lo or (math.isinf(v) and not allow_inf):
        raise ConfigError(name, value, f'a finite number >= {lo}' if not allow_inf
                          else f'a number >= {lo} or inf')
    return v


def rain_extinction(cfg, rain_mm_h):
    """Return alpha = rain_db_per_km R^rain_exponent / 4.343 / 1000, 1/m (R <= 0: 0)."""
    r = np.asarray(rain_mm_h, dtype=np.float64)
    out = cfg.rain_db_per_km * np.maximum(r, 0.0) ** cfg.rain_exponent / DB_PER_NEPER / 1000.0
    return np.where(r > 0, out, 0.0) if out.ndim else float(out if r > 0 else 0.0)


def kim_q(visibility_km):
    """Return the Kim, McArthur & Korevaar (2001) exponent q for a visibility in km."""
    v = float(visibility_km)
    if v > 50.0:
        return 1.6
    if v > 6.0:
        return 1.3
    if v > 1.0:
        return 0.16 * v + 0.34
    if v > 0.5:
        return v - 0.5
    return 0.0


def rain_part_550(cfg, rain_mm_h):
    """
    Return the rain part of the 550 nm extinction the visibility contains, 1/m.

    'rain_law' (default, physics-notes fix): the same law as rain_extinction (drops are large,
    extinction is wavelength-neutral). 'acres': document 001's V_rain = 11.1 km R^-0.63.
    """
    if rain_mm_h <= 0.0:
        return 0.0
    if getattr(cfg, 'rain_visibility_model', 'rain_law') == 'acres':
        return KOSCHMIEDER / (11100.0 * rain_mm_h ** -0.63)
    return float(rain_extinction(cfg, rain_mm_h))


def fog_residual_550(cfg, visibility_m, rain_mm_h):
    """
    Return the fog/haze part of the 550 nm extinction, 3.912 / V minus its rain part, 1/m.

    Clamped at >= 0; a clamp beyond rounding (the visibility is clearer than the rain alone
    implies) is logged once per process.
    """
    global _clamp_warned
    if not math.isfinite(visibility_m):
        return 0.0
    total = KOSCHMIEDER / max(visibility_m, 1e-3)
    residual = total - rain_part_550(cfg, rain_mm_h)
    if residual < -1e-9 * total and not _clamp_warned:
        _LOG.warning('visibility %.0f m is clearer than rain of %.1f mm/h alone implies; '
                     'fog/haze extinction clamped to 0', visibility_m, rain_mm_h)
        _clamp_warned = True
    return residual if residual > 1e-12 * total else 0.0


def fog_extinction(cfg, visibility_m, rain_mm_h):
    """
    Return the fog/haze extinction at the laser wavelength, 1/m (0 for infinite visibility).

    fog_residual_550 scaled by (wavelength / 550 nm)^-q, q of the fog/haze-only visibility.
    """
    residual = fog_residual_550(cfg, visibility_m, rain_mm_h)
    if residual <= 0.0:
        return 0.0
    q = kim_q(KOSCHMIEDER / residual / 1000.0)
    return residual * (cfg.wavelength_nm / 550.0) ** -q


def fog_lidar_ratio(cfg, fog_visibility_m):
    """Return the fog/haze lidar ratio, sr: droplets < 0.5 km, aerosol > 1 km, 1/ratio linear."""
    v = fog_visibility_m / 1000.0
    if v <= 0.5:
        return cfg.fog_lidar_ratio_sr
    if v >= 1.0:
        return cfg.haze_lidar_ratio_sr
    a = (v - 0.5) / 0.5
    return 1.0 / ((1.0 - a) / cfg.fog_lidar_ratio_sr + a / cfg.haze_lidar_ratio_sr)


def drop_density(cfg, rain_mm_h):
    """Return the raindrop density rain_drops_per_m3 R^rain_drops_exponent, 1/m^3 (0 dry)."""
    return cfg.rain_drops_per_m3 * rain_mm_h ** cfg.rain_drops_exponent if rain_mm_h > 0 else 0.0


def marshall_palmer_drops(rain_mm_h, min_diameter_mm=0.0):
    """Return Marshall-Palmer drops above a diameter, 8000 exp(-D Lambda) / Lambda, 1/m^3."""
    lam = 4.1 * rain_mm_h ** -0.21
    return 8000.0 * math.exp(-min_diameter_mm * lam) / lam


@dataclass(frozen=True)
class Atmosphere:
    """Extinction (1/m) and backscatter (1/(m sr)) of one scan at the laser wavelength."""

    rain_mm_h: float = 0.0
    visibility_m: float = math.inf
    alpha_rain_per_m: float = 0.0
    alpha_fog_per_m: float = 0.0
    beta_rain_per_m_sr: float = 0.0
    beta_fog_per_m_sr: float = 0.0
    drops_per_m3: float = 0.0
    clutter_class: int = PRECIPITATION_CLASS

    @property
    def alpha(self):
        """Return the total extinction coefficient, 1/m."""
        return self.alpha_rain_per_m + self.alpha_fog_per_m

    @property
    def active(self):
        """Return True when there is rain or fog/haze to simulate."""
        return self.alpha > 0.0 or self.beta_rain_per_m_sr > 0.0 or self.beta_fog_per_m_sr > 0.0

    def two_way_transmission(self, range_m):
        """Return exp(-2 alpha R)."""
        return np.exp(-2.0 * self.alpha * np.asarray(range_m, dtype=np.float64))


def atmosphere(cfg, rain_mm_h=0.0, visibility_m=math.inf, clutter_class=PRECIPITATION_CLASS):
    """Build the scan's Atmosphere; cfg.weather false gives clear air, overrides >= 0 win."""
    if cfg.rain_override_mm_h >= 0.0:
        rain_mm_h = cfg.rain_override_mm_h
    if cfg.visibility_override_m >= 0.0:
        visibility_m = cfg.visibility_override_m
    rain = _check('rain_mm_h', rain_mm_h)
    vis = _check('visibility_m', visibility_m, allow_inf=True)
    if not cfg.weather:
        return Atmosphere(rain, vis, clutter_class=clutter_class)
    a_rain = float(rain_extinction(cfg, rain))
    a_fog = fog_extinction(cfg, vis, rain)
    residual = fog_residual_550(cfg, vis, rain)
    fog_vis = KOSCHMIEDER / residual if residual > 0 else math.inf
    beta_fog = a_fog / fog_lidar_ratio(cfg, fog_vis) if a_fog > 0 else 0.0
    return Atmosphere(rain, vis, a_rain, a_fog, a_rain / cfg.rain_lidar_ratio_sr, beta_fog,
                      drop_density(cfg, rain), clutter_class)


def _unique_small(values):
    """np.unique(values, return_inverse=True) for small non-negative ints (ring numbers), O(N)."""
    if values.size == 0 or values.min() < 0 or values.max() > 1 << 20:
        return np.unique(values, return_inverse=True)
    present = np.bincount(values) > 0
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present), rank[values]


def beam_area_m2(cfg, range_m):
    """Return the beam cross-section pi / 4 (D_exit + R divergence)^2, m^2."""
    d = cfg.exit_diameter_m + np.asarray(range_m, dtype=np.float64) * cfg.divergence_mrad * 1e-3
    return math.pi / 4.0 * d * d


def clutter(cfg, atm, n_beams, beam_limit_range_m, beam_ring, rng, peer=parts.SOLO):
    """
    Return the rain/fog backscatter Contributions of a scan (material other, atm class).

    Slabs of length dR = min_separation_m from min_range_m to min(clutter_max_range_m, the beam's
    nearest solid hit); slab centre r. Fog: rho = pi beta_fog dR. Rain: N ~ Poisson(n A(r) dR)
    drops, X = E^2 / 2 with E ~ Exp(1), rho = pi beta_rain dR sum(X) / (n A dR). Power includes
    exp(-2 alpha r). Slabs whose mean signal S satisfies S + 5 sqrt(S + ambient) < T are
    skipped before any draw. rng (the clutter stream) draws one Poisson array and one
    exponential array, beam-major then slab order. For a part of a sweep (parts.py) the beams are
    the part's and peer hands the stream on, so the draws are those of the whole sweep.
    """
    if atm is None or not atm.active or not cfg.weather:
        return Contributions.empty()
    dr = cfg.min_separation_m
    n_slab = int(math.ceil((cfg.clutter_max_range_m - cfg.min_range_m) / dr))
    if n_slab <= 0:
        return Contributions.empty()
    limit = np.minimum(np.asarray(beam_limit_range_m, dtype=np.float64), cfg.clutter_max_range_m)
    centre = cfg.min_range_m + (np.arange(n_slab) + 0.5) * dr
    # The skip test depends only on (ring, slab): decide it on that small grid first.
    rings, ring_of = _unique_small(np.asarray(beam_ring, dtype=np.int64))
    mean_rho = math.pi * (atm.beta_fog_per_m_sr + atm.beta_rain_per_m_sr) * dr
    gain_rj = radiometry.counts_per_reflectance(cfg, centre[None, :], rings[:, None]) \
        * atm.two_way_transmission(centre)[None, :]
    s_mean = mean_rho * gain_rj
    keep_rj = s_mean + 5.0 * np.sqrt(s_mean + cfg.ambient_counts) \
        >= cfg.detection_threshold_counts
    live = keep_rj[ring_of.reshape(n_beams)] & (centre[None, :] < limit.reshape(n_beams, 1))
    flat = np.flatnonzero(live)  # beam-major, then slab
    b_idx, j_idx = flat // n_slab, flat % n_slab
    gain = gain_rj.reshape(-1)[ring_of.reshape(n_beams)[b_idx] * n_slab + j_idx]
    rho = np.full(b_idx.shape, math.pi * atm.beta_fog_per_m_sr * dr)
    expected_j = atm.drops_per_m3 * beam_area_m2(cfg, centre) * dr
    if atm.beta_rain_per_m_sr > 0.0:
        # Every part takes part in the hand-on, also with no cells (empty draws take nothing).
        expected = expected_j[j_idx]
        n_drops, after = parts.draw_in_turn(peer, 'clutter_poisson', rng,
                                            lambda g: g.poisson(expected))
        # The exponentials follow the last part's Poisson draws, again from part 0 on.
        e, _ = parts.draw_in_turn(
            peer, 'clutter_exponential', parts.wrap_to_first(peer, 'clutter_wrap', after),
            lambda g: g.exponential(size=int(n_drops.sum())))
        sum_x = np.bincount(np.repeat(np.arange(b_idx.size), n_drops), 0.5 * e * e, b_idx.size)
        with np.errstate(invalid='ignore', divide='ignore'):
            rho += np.where(expected > 0, math.pi * atm.beta_rain_per_m_sr * dr
                            * sum_x / expected, 0.0)
    power = rho * gain
    nz = np.flatnonzero(power > 0.0)
    j_nz = j_idx[nz]
    m = nz.size
    return Contributions(
        beam=b_idx[nz], range_m=centre[j_nz], power_counts=power[nz],
        rho_app=rho[nz] * atm.two_way_transmission(centre)[j_nz], stretch=np.ones(m),
        material=np.full(m, OTHER, np.uint8), class_id=np.full(m, atm.clutter_class, np.uint8))
