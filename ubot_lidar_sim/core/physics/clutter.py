"""
Clutter: the backscatter of the air itself as echoes (docs/physics-weather.md).

Continuous media (fog, haze) return one pulse-integrated soft echo per beam (soft_target.py)
whose fog droplets' backscatter fluctuates from pulse to pulse (haze's is steady); granular
ones (rain drops, snow flakes) one echo per particle drawn in the beam volume (particles.py),
which also shadows the surfaces behind it. Randomness only from the Generators passed.
"""

from dataclasses import replace
from typing import Dict, Optional

import numpy as np

from ubot_lidar_sim.core.class_ids import CLASS_DTYPE
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.material_ids import OTHER
from ubot_lidar_sim.core.physics import particles
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics import soft_target
from ubot_lidar_sim.core.physics.atmosphere import Atmosphere
from ubot_lidar_sim.core.physics.echoes import Contributions
from ubot_lidar_sim.core.physics.sensor_part import SensorPart

#: The fog factors' stream without one of its own: this many jumps ahead of the clutter stream
#: (the granular media use the first jumps).
FOG_JUMPS = 64


def clutter(model: PhysicalModel, sensor: SensorPart, atm: Optional[Atmosphere], n_beams: int,
            beam_limit_range_m: np.ndarray, beam_ring: np.ndarray, rng: np.random.Generator,
            streams: Optional[Dict[str, np.random.Generator]] = None,
            surfaces: Optional[Contributions] = None) -> Contributions:
    """
    Return the backscatter Contributions of the air of a scan (material other, atm's class).

    model: the physical model (its atmosphere, optics, echoes, radiometry); sensor: its
    min_range_m and per-ring R10 table.

    Continuous media (fog, haze): one pulse-integrated soft return per beam at its peak
    (soft_target.py), its backscatter times a pulse-to-pulse factor f G + 1 - f, G ~ Gamma(k,
    1 / k) (mean 1, k = the medium's fluctuation_shape; one draw per beam, beam order, from
    streams['fog'], else from a jump of rng), f the fluctuating (droplet) share of the
    backscatter (k = 0 or f = 0: 1, no draws). Granular media (rain drops, snow flakes): the
    particles of particles.sample from min_range_m to min(clutter_max_range_m, the beam's
    nearest solid hit), one contribution each; power = 2 pi / S share x
    counts_per_reflectance(r) x exp(-2 alpha r). Each granular medium draws its counts from
    streams[medium.name] when given (snow: its own stream), else the first shared medium's
    from rng (the clutter stream) and the others' from jumps of rng; its ranges and diameters
    from a jump of its count stream.
    surfaces, when given, are returned with the clutter, each shadowed by the particles in
    front of it in its beam (particles.shadow_factor).
    """
    air, spec, table = model.atmosphere, model.radiometry, sensor.ring_range_at_10pct_m
    if atm is None or not atm.active or not air.weather:
        return surfaces if surfaces is not None else Contributions.empty()
    streams = streams or {}
    limit = np.minimum(np.asarray(beam_limit_range_m, dtype=np.float64), air.clutter_max_range_m)
    ring = np.asarray(beam_ring)
    out = []
    soft = [m for m in atm.media if not m.granular]
    beta_soft = _sum_beta(soft)
    if beta_soft > 0.0:
        # k of the fluctuating medium (fog_microphysics: it widens as the fog thins).
        # fog_fluctuation_shape 0 turns it off whatever the medium says.
        k = max((m.fluctuation_shape for m in soft if m.fluctuating_share > 0.0), default=0.0) \
            if air.fog_fluctuation_shape > 0.0 else 0.0
        # Only the droplets' part of the backscatter fluctuates; haze aerosol is steady.
        share = sum(m.beta_per_m_sr * m.fluctuating_share for m in soft) / beta_soft
        gain_g = None
        if k > 0.0 and share > 0.0:
            fog_rng = streams.get('fog')
            fog_rng = _jumped(rng, FOG_JUMPS) if fog_rng is None else fog_rng
            gain_g = fog_rng.gamma(k, 1.0 / k, size=n_beams)
            if share < 1.0:
                gain_g = share * gain_g + (1.0 - share)
        b, r, s = soft_target.soft_returns(model, sensor, beta_soft, atm.alpha, limit, ring,
                                           air.clutter_max_range_m, gain_g,
                                           atm.background_counts)
        gain = radiometry.counts_per_reflectance(
            spec, r, None if radiometry.uniform_r10(table) else ring[b], table)
        out.append(_contributions(atm, b, r, s, s / gain))
    discrete = [m for m in atm.media if m.granular and m.beta_per_m_sr > 0.0]
    shadow = None
    if discrete:
        drawn, shadow = _granular(model, sensor, atm, limit, ring, rng, streams, discrete)
        out.append(drawn)
    if surfaces is not None:
        if shadow is not None and shadow[0].size:
            p_beam, p_range, p_share = shadow
            t = particles.shadow_factor(p_beam, p_range, p_share, surfaces.beam,
                                        surfaces.range_m)
            surfaces = replace(surfaces, power_counts=surfaces.power_counts * t,
                               rho_app=surfaces.rho_app * t)
        out.insert(0, surfaces)
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
        material=np.full(m, OTHER, np.uint8), class_id=np.full(m, atm.clutter_class, CLASS_DTYPE))


def _granular(model, sensor, atm, limit, beam_ring, rng, streams, discrete):
    """Return the Contributions of the granular media and their (beam, range, share)."""
    spec, table = model.radiometry, sensor.ring_range_at_10pct_m
    r10_max = float(np.max(radiometry.ring_r10(spec, beam_ring, table))) if beam_ring.size and \
        not radiometry.uniform_r10(table) else radiometry.ring_r10(spec)
    two_alpha = 2.0 * atm.alpha
    # Each medium's draws come from streams of their own, all derived before any draw (jumps
    # of the given stream's state), so that adding a medium leaves the others' draws as they
    # were. The first shared medium's counts are rng's own.
    gens, shared = [], 0
    for medium in discrete:
        own = streams.get(medium.name)
        if own is not None:
            gens.append((own, _jumped(own, 1)))
        else:
            gens.append((_jumped(rng, 2 * shared), _jumped(rng, 2 * shared + 1)))
            shared += 1
    parts = [particles.sample(model, sensor, medium, limit, two_alpha, r10_max, count_rng,
                              draw_rng) for medium, (count_rng, draw_rng) in zip(discrete, gens)]
    beam, r, share, rho = (np.concatenate([p[i] for p in parts]) for i in range(4))
    two_way = atm.two_way_transmission(r)
    gain = radiometry.counts_per_reflectance(
        spec, r, None if radiometry.uniform_r10(table) else beam_ring[beam], table)
    return _contributions(atm, beam, r, rho * gain * two_way, rho * two_way), (beam, r, share)


def _jumped(rng, jumps):
    """Return rng itself (jumps 0) or a new Generator jumps x 2^128 x phi draws ahead of it."""
    return rng if jumps == 0 else np.random.Generator(rng.bit_generator.jumped(jumps))
