"""
Clutter: the backscatter of the air itself as echoes (docs/physics-weather.md).

Continuous media (fog, haze) return one pulse-integrated soft echo per beam (soft_target.py);
granular ones (rain drops, snow flakes) a Poisson number of particles of random brightness per
slab along each beam. Randomness only from the Generators passed.
"""

import math
from typing import Dict, Optional

import numpy as np

from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics import snow
from ubot_lidar_sim.core.physics import soft_target
from ubot_lidar_sim.core.physics.atmosphere import Atmosphere
from ubot_lidar_sim.core.physics.echoes import Contributions
from ubot_lidar_sim.core.world.materials import OTHER


def _unique_small(values):
    """np.unique(values, return_inverse=True) for small non-negative ints (ring numbers), O(N)."""
    if values.size == 0 or values.min() < 0 or values.max() > 1 << 20:
        return np.unique(values, return_inverse=True)
    present = np.bincount(values) > 0
    rank = np.cumsum(present) - 1
    return np.flatnonzero(present), rank[values]


def beam_area_m2(cfg, range_m) -> np.ndarray:
    """Return the beam cross-section pi / 4 (D_exit + R divergence)^2, m^2."""
    d = cfg.exit_diameter_m + np.asarray(range_m, dtype=np.float64) * cfg.divergence_mrad * 1e-3
    return math.pi / 4.0 * d * d


def clutter(cfg, atm: Optional[Atmosphere], n_beams: int, beam_limit_range_m: np.ndarray,
            beam_ring: np.ndarray, rng: np.random.Generator,
            streams: Optional[Dict[str, np.random.Generator]] = None) -> Contributions:
    """
    Return the backscatter Contributions of the air of a scan (material other, atm's class).

    Continuous media (fog, haze): one pulse-integrated soft return per beam at its peak
    (soft_target.py). Granular media (rain drops, snow flakes; n particles per m^3): slabs of
    length dR = min_separation_m from min_range_m to min(clutter_max_range_m, the beam's nearest
    solid hit), slab centre r; N ~ Poisson(n A(r) dR) particles, X = E^2 / 2 with E ~ Exp(1),
    rho = pi beta dR sum(X) / (n A dR). Power includes exp(-2 alpha r) and the form factor. Slabs
    whose mean signal is hopeless (soft_target.hopeless) are skipped before any draw. Each
    granular medium draws one Poisson array and one exponential array, beam-major then slab
    order: the Poisson counts from streams[medium.name] when given (snow: its own stream),
    else the first shared medium's from rng (the clutter stream) and the others' from jumps of
    rng; the exponentials from a jump of the Poisson stream.
    """
    if atm is None or not atm.active or not cfg.weather:
        return Contributions.empty()
    streams = streams or {}
    limit = np.minimum(np.asarray(beam_limit_range_m, dtype=np.float64), cfg.clutter_max_range_m)
    ring = np.asarray(beam_ring)
    out = []
    beta_soft = _sum_beta(m for m in atm.media if not m.granular)
    if beta_soft > 0.0:
        b, r, s = soft_target.soft_returns(cfg, beta_soft, atm.alpha, limit, ring,
                                           cfg.clutter_max_range_m)
        gain = radiometry.counts_per_reflectance(
            cfg, r, None if radiometry.uniform_r10(cfg) else ring[b])
        out.append(_contributions(atm, b, r, s, s / gain))
    discrete = [m for m in atm.media if m.granular and m.beta_per_m_sr > 0.0]
    if discrete:
        out.append(_granular(cfg, atm, n_beams, limit, ring, rng, streams, discrete))
    return Contributions.concat(*out) if out else Contributions.empty()


def _sum_beta(media):
    """Sum the backscatter of media in order from 0.0."""
    total = 0.0
    for m in media:
        total += m.beta_per_m_sr
    return total


def _contributions(atm, beam, range_m, power, rho_app):
    """Clutter Contributions (material other, atm's class, no stretch)."""
    m = beam.size
    return Contributions(
        beam=beam, range_m=range_m, power_counts=power, rho_app=rho_app, stretch=np.ones(m),
        material=np.full(m, OTHER, np.uint8), class_id=np.full(m, atm.clutter_class, np.uint8))


def _granular(cfg, atm, n_beams, limit, beam_ring, rng, streams, discrete):
    """Return the Contributions of the granular media (drops, flakes) in slabs."""
    dr = cfg.min_separation_m
    n_slab = int(math.ceil((cfg.clutter_max_range_m - cfg.min_range_m) / dr))
    if n_slab <= 0:
        return Contributions.empty()
    centre = cfg.min_range_m + (np.arange(n_slab) + 0.5) * dr
    two_way = atm.two_way_transmission(centre)
    # The skip test depends only on (ring, slab): decide it on that small grid first.
    rings, ring_of = _unique_small(np.asarray(beam_ring, dtype=np.int64))
    mean_rho = math.pi * _sum_beta(discrete) * dr
    gain_rj = radiometry.counts_per_reflectance(cfg, centre[None, :], rings[:, None]) \
        * two_way[None, :]
    keep_rj = ~soft_target.hopeless(cfg, mean_rho * gain_rj)
    live = keep_rj[ring_of.reshape(n_beams)] & (centre[None, :] < limit.reshape(n_beams, 1))
    flat = np.flatnonzero(live)  # beam-major, then slab
    b_idx, j_idx = flat // n_slab, flat % n_slab
    gain = gain_rj.reshape(-1)[ring_of.reshape(n_beams)[b_idx] * n_slab + j_idx]
    rho = np.zeros(b_idx.shape)
    area_j = beam_area_m2(cfg, centre)
    # Each medium's Poisson and exponential draws come from streams of their own, all derived
    # before any draw (jumps of the given stream's state), so that adding a medium leaves the
    # others' draws as they were. The first shared medium's Poisson draws are rng's own.
    gens, shared = [], 0
    for medium in discrete:
        own = streams.get(medium.name)
        if own is not None:
            gens.append((own, _jumped(own, 1)))
        else:
            gens.append((_jumped(rng, 2 * shared), _jumped(rng, 2 * shared + 1)))
            shared += 1
    for medium, (poisson_rng, exponential_rng) in zip(discrete, gens):
        rho += _particles(poisson_rng, exponential_rng, medium, area_j, b_idx, j_idx, dr)
    power = rho * gain
    nz = np.flatnonzero(power > 0.0)
    j_nz = j_idx[nz]
    return _contributions(atm, b_idx[nz], centre[j_nz], power[nz], rho[nz] * two_way[j_nz])


def _jumped(rng, jumps):
    """Return rng itself (jumps 0) or a new Generator jumps x 2^128 x phi draws ahead of it."""
    return rng if jumps == 0 else np.random.Generator(rng.bit_generator.jumped(jumps))


def _particles(poisson_rng, exponential_rng, medium, area_j, b_idx, j_idx, dr):
    """
    Return the rho (cells,) of one discrete medium.

    area_j (slabs,) beam cross-section at the slab centres, m^2; cells are (b_idx, j_idx).
    """
    expected = (medium.particles_per_m3 * area_j * dr)[j_idx]
    count = poisson_rng.poisson(expected)
    e = exponential_rng.exponential(size=int(count.sum()))
    sum_x = np.bincount(np.repeat(np.arange(b_idx.size), count), 0.5 * e * e, b_idx.size)
    with np.errstate(invalid='ignore', divide='ignore'):
        return np.where(expected > 0, math.pi * medium.beta_per_m_sr * dr
                        * sum_x / expected, 0.0)


def describe_air(cfg):
    """Return the weather and near-range model of a config in plain text (for ``describe``)."""
    if not cfg.weather:
        return 'Weather off: clear air whatever the environment says.'
    length = soft_target.soft_pulse_length_m(cfg)
    slope, intercept, b = snow.SNOW_LAWS[cfg.snow_type]
    return (
        f'Near range: form factor 1 - exp(-(R / {cfg.overlap_range_m:g} m)^2) on every signal; '
        f'receiver blanking below min_range_m = {cfg.min_range_m:g} m. Two-way exp(-2 alpha R) '
        'on every contribution. Fog/haze: visibility (Koschmieder 3.912 / V) minus its rain '
        f'and snow parts ({cfg.rain_visibility_model}), Kim et al. (2001) to '
        f'{cfg.wavelength_nm:g} nm, lidar ratio {cfg.fog_lidar_ratio_sr:g} sr (fog, V <= 0.5 km) '
        f'to {cfg.haze_lidar_ratio_sr:g} sr (haze, V >= 1 km); one pulse-integrated soft return '
        f'per beam (Hahner et al. 2021), pulse length {length:g} m ('
        + ('pulse_length_m' if cfg.pulse_length_m > 0.0 else 'min_separation_m')
        + f'), at its peak between min_range_m and the nearest solid hit, up to '
        f'{cfg.clutter_max_range_m:g} m. Rain: alpha = {cfg.rain_db_per_km:g} R^'
        f'{cfg.rain_exponent:g} dB/km, lidar ratio {cfg.rain_lidar_ratio_sr:g} sr, drops '
        f'{cfg.rain_drops_per_m3:g} R^{cfg.rain_drops_exponent:g} /m^3. Snow ({cfg.snow_type}, '
        f'ITU-R): alpha = {slope * cfg.wavelength_nm + intercept:.4g} S^{b:g} dB/km (S mm/h '
        f'water), lidar ratio {cfg.snow_lidar_ratio_sr:g} sr, Gunn-Marshall flakes '
        f'{snow.GM_N0 / snow.GM_LAMBDA:.0f} S^{snow.GM_N0_EXP - snow.GM_LAMBDA_EXP:.2f} /m^3 on '
        'their own stream; snow_depth_m > 0 turns ground into snow. Drops and flakes: '
        f'Poisson counts per {cfg.min_separation_m:g} m slab, brightness E^2 / 2. Wetness from '
        f'the environment or 1 - exp(-R / 1 mm/h); puddles >= {cfg.pond_threshold_m:g} m turn '
        'ground into water. Smoke volumes stop the rays'
        + (' (enabled).' if cfg.smoke_enabled else ' (disabled).'))
