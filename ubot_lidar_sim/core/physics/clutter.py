"""
Clutter: the backscatter of the air itself as echoes (document 001 with the physics-notes fix).

Slabs along each beam; continuous media (fog, haze) return pi beta dR, granular ones (rain
drops, snow flakes) a Poisson number of particles of random brightness. Randomness only from
the Generator passed (and, for a sweep in parts, the peer that hands it on).
"""

import math
from typing import Optional

import numpy as np

from ubot_lidar_sim.core.execution import parts
from ubot_lidar_sim.core.physics import radiometry
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
            beam_ring: np.ndarray, rng: np.random.Generator, peer=parts.SOLO) -> Contributions:
    """
    Return the backscatter Contributions of the air of a scan (material other, atm's class).

    Slabs of length dR = min_separation_m from min_range_m to min(clutter_max_range_m, the beam's
    nearest solid hit); slab centre r. Continuous media (fog): rho = pi beta dR. Each granular
    medium (rain; n particles per m^3): N ~ Poisson(n A(r) dR) particles, X = E^2 / 2 with
    E ~ Exp(1), rho = pi beta dR sum(X) / (n A dR). Power includes exp(-2 alpha r). Slabs whose
    mean signal S satisfies S + 5 sqrt(S + ambient) < T are skipped before any draw. rng (the
    clutter stream) draws, per granular medium in order, one Poisson array and one exponential
    array, beam-major then slab order. For a part of a sweep (parts.py) the beams are the
    part's and peer hands the stream on, so the draws are those of the whole sweep.
    """
    if atm is None or not atm.active or not cfg.weather:
        return Contributions.empty()
    dr = cfg.min_separation_m
    n_slab = int(math.ceil((cfg.clutter_max_range_m - cfg.min_range_m) / dr))
    if n_slab <= 0:
        return Contributions.empty()
    limit = np.minimum(np.asarray(beam_limit_range_m, dtype=np.float64), cfg.clutter_max_range_m)
    centre = cfg.min_range_m + (np.arange(n_slab) + 0.5) * dr
    two_way = atm.two_way_transmission(centre)
    # The skip test depends only on (ring, slab): decide it on that small grid first.
    rings, ring_of = _unique_small(np.asarray(beam_ring, dtype=np.int64))
    mean_rho = math.pi * atm.beta * dr
    gain_rj = radiometry.counts_per_reflectance(cfg, centre[None, :], rings[:, None]) \
        * two_way[None, :]
    s_mean = mean_rho * gain_rj
    keep_rj = s_mean + 5.0 * np.sqrt(s_mean + cfg.ambient_counts) \
        >= cfg.detection_threshold_counts
    live = keep_rj[ring_of.reshape(n_beams)] & (centre[None, :] < limit.reshape(n_beams, 1))
    flat = np.flatnonzero(live)  # beam-major, then slab
    b_idx, j_idx = flat // n_slab, flat % n_slab
    gain = gain_rj.reshape(-1)[ring_of.reshape(n_beams)[b_idx] * n_slab + j_idx]
    beta_continuous = 0.0
    for medium in atm.media:
        if not medium.granular:
            beta_continuous += medium.beta_per_m_sr
    rho = np.full(b_idx.shape, math.pi * beta_continuous * dr)
    area_j = beam_area_m2(cfg, centre)
    discrete = [m for m in atm.media if m.granular and m.beta_per_m_sr > 0.0]
    for k, medium in enumerate(discrete):
        tag = f'clutter{k}' if k else 'clutter'
        if k:   # the stream goes on from where the last part's draws of the medium before left it
            rng = parts.wrap_to_first(peer, f'{tag}_start', rng)
        rho_k, rng = _particles(peer, tag, rng, medium, area_j, b_idx, j_idx, dr)
        rho += rho_k
    power = rho * gain
    nz = np.flatnonzero(power > 0.0)
    j_nz = j_idx[nz]
    m = nz.size
    return Contributions(
        beam=b_idx[nz], range_m=centre[j_nz], power_counts=power[nz],
        rho_app=rho[nz] * two_way[j_nz], stretch=np.ones(m),
        material=np.full(m, OTHER, np.uint8), class_id=np.full(m, atm.clutter_class, np.uint8))


def _particles(peer, tag, rng, medium, area_j, b_idx, j_idx, dr):
    """
    Return the rho (cells,) of one discrete medium and the generator after this part's draws.

    area_j (slabs,) beam cross-section at the slab centres, m^2; cells are (b_idx, j_idx).
    Every part takes part in the hand-on, also with no cells (empty draws take nothing).
    """
    expected = (medium.particles_per_m3 * area_j * dr)[j_idx]
    count, after = parts.draw_in_turn(peer, f'{tag}_poisson', rng,
                                      lambda g: g.poisson(expected))
    # The exponentials follow the last part's Poisson draws, again from part 0 on.
    e, after = parts.draw_in_turn(
        peer, f'{tag}_exponential', parts.wrap_to_first(peer, f'{tag}_wrap', after),
        lambda g: g.exponential(size=int(count.sum())))
    sum_x = np.bincount(np.repeat(np.arange(b_idx.size), count), 0.5 * e * e, b_idx.size)
    with np.errstate(invalid='ignore', divide='ignore'):
        return np.where(expected > 0, math.pi * medium.beta_per_m_sr * dr
                        * sum_x / expected, 0.0), after
