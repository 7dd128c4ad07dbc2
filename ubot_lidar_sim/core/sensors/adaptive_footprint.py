"""
Adaptive footprint sampling (``footprint: adaptive``): sub-rays only where the beam straddles.

The orchestration: the centre sub-ray of every beam is traced first (its full layered trace);
the refine rules (footprint_rules.py) decide from the centre hits which beams' footprints may
hold more than one surface; their other sub-rays are traced (probes first where the rules ask)
and the hits merged in the exhaustive numbering. Control runs one way: lidar.py calls
AdaptiveFootprint.trace, which calls the sweep's SweepCast (World.trace).

Elsewhere the beam is one full-footprint echo from its centre hit: the centre hit's
contribution with the footprint's whole power (the weight of every sub-ray), its incidence and
its material; on textured ground its albedo is the mean over the sub-rays' cells.
docs/physics.md, "Adaptive footprint", and benchmarks/footprint_fidelity.py compare both modes.
"""

from dataclasses import replace
from typing import Optional, Tuple

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.config.optics import EchoesConfig
from ubot_lidar_sim.core.physics.echoes import Contributions
from ubot_lidar_sim.core.raycast.hits import concat_hits, Hits, take_hits
from ubot_lidar_sim.core.sensors.footprint_rules import (
    COS_FLOOR, DENSE_FACTOR, first_hits, GRAZING_FRACTION, neighbour_table, PROBE, PROBE_SUBS,
    probes_agree, REFINE, refine_beams, STEP_FRACTION)
from ubot_lidar_sim.core.sensors.sweep_cast import SweepCast
from ubot_lidar_sim.core.sensors.sweep_passes import rotate_rows
from ubot_lidar_sim.core.world.materials import MaterialTable


class AdaptiveFootprint:
    """
    The adaptive sampling of one simulator's beams (a sweep or one column block).

    dx, dy, dz (R, C, S) the sensor-frame sub-ray components of lidar.LidarSimulator;
    offsets (S, 2) rad the sub-ray pattern; along_rings False for patterns whose rings are not
    neighbours in space (a rosette's lines).
    """

    def __init__(self, beams, planes, offsets, weights, along_rings=True):
        self.planes = planes
        self.n_sub = len(weights)
        self.weights = np.asarray(weights, np.float64)
        # The centre's contribution carries the weight of the whole footprint.
        self.centre_gain = float(np.sum(weights)) / float(weights[0])
        self.offset_rad = float(np.max(np.hypot(offsets[:, 0], offsets[:, 1])))
        self.centre_planes = [np.ascontiguousarray(p[..., :1]) for p in planes]
        self.neighbours, self.coef, self.residual, self.edge, self.dense = neighbour_table(
            beams, along_rings, DENSE_FACTOR * self.offset_rad)

    def trace(self, cast: SweepCast, origins: NDArray[np.float64], dirs: NDArray[np.float64],
              rays32: NDArray[np.float32], poses: NDArray[np.float64], echoes: EchoesConfig,
              materials: MaterialTable, with_dirs: bool,
              ) -> Tuple[Hits, Optional[NDArray[np.float64]], NDArray[np.bool_]]:
        """
        Trace the centres (origins, dirs (B, 3), rays32 (B, 6)), then the refined beams' rest.

        cast: the sweep's SweepCast (its trace; its world's ground_albedo for the footprint's
        mean). Beams that refine_beams marks PROBE trace two sub-rays first (PROBE_SUBS: above
        and below the centre) and are refined only when those disagree with the centre.
        echoes: its min_separation_m scales the refine rules' step and grazing depths.
        Returns (Hits with ray = beam x S + sub-ray, as the exhaustive trace numbers them;
        world directions (B x S, 3) of the traced sub-rays (other rows undefined) when
        with_dirs, else None; refined (B,) bool).
        """
        n_beams, s = origins.shape[0], self.n_sub
        centre = cast.trace(origins, dirs, rays32, np.arange(n_beams))
        c_ray = np.asarray(centre.ray, np.int64)
        c_layers = (np.asarray(centre.obj, np.int32), np.asarray(centre.material, np.uint8))
        first = first_hits(n_beams, c_ray, np.asarray(centre.range_m, np.float64),
                           np.asarray(centre.cos_inc, np.float64))
        step_m = STEP_FRACTION * echoes.min_separation_m
        state = refine_beams(*first, *c_layers, self.neighbours, self.coef, self.residual,
                             self.edge, self.dense, step_m,
                             GRAZING_FRACTION * echoes.min_separation_m, self.offset_rad,
                             COS_FLOOR)
        refined = state == REFINE
        parts = [None] + self._trace_rest(cast, poses, state, first, c_layers, step_m, refined)
        parts[0] = (self._footprint_albedo(centre, refined, origins, dirs, poses,
                                           materials.reflectivity_sd, cast.world.ground_albedo),
                    c_ray * s)
        full_dirs = None
        if with_dirs:
            full_dirs = np.empty((n_beams * s, 3))
            full_dirs[::s] = dirs
            ray_dirs = self._directions(poses, refined, s)
            full_dirs[ray_dirs[0]] = ray_dirs[1]
        return concat_hits(parts), full_dirs, refined

    def _trace_rest(self, cast, poses, state, first, c_layers, step_m, refined):
        """
        Trace the sub-rays past the centres: [(Hits, ray ids)] parts (refined (B,) updated).

        The REFINE beams' other sub-rays and the PROBE beams' probes, then every other sub-ray
        of the probed beams whose probes disagree with the centre (those become refined).
        first: first_hits of the centres; c_layers: the centre hits' (obj, material).
        """
        s = self.n_sub
        full, probe = np.flatnonzero(state == REFINE), np.flatnonzero(state == PROBE)
        traced = self._trace_rows(cast, poses, full, np.arange(1, s), probe, PROBE_SUBS)
        if traced is None:
            return []
        hits, ids, local = traced
        start, count, r_first, _, cos = first
        n_full = full.size * (s - 1)
        p_rows = np.flatnonzero(local >= n_full)
        agree = probes_agree(probe.size, local[p_rows] - n_full,
                             np.asarray(hits.range_m, np.float64)[p_rows],
                             np.asarray(hits.obj, np.int32)[p_rows],
                             np.asarray(hits.material, np.uint8)[p_rows], probe, start,
                             count, r_first, cos, *c_layers, step_m, self.offset_rad,
                             len(PROBE_SUBS))
        again = probe[~agree]
        refined[again] = True
        keep = np.ones(local.size, bool)     # the probes of agreeing beams are dropped
        keep[p_rows] = ~agree[(local[p_rows] - n_full) // len(PROBE_SUBS)]
        parts = [(take_hits(hits, np.flatnonzero(keep)), ids[keep])]
        more = self._trace_rows(cast, poses, again, np.setdiff1d(np.arange(1, s), PROBE_SUBS))
        if more is not None:
            parts.append(more[:2])
        return parts

    def _trace_rows(self, cast, poses, *groups):
        """
        Trace sub-rays of beams: groups (beams (K,), subs (J,)), ...; None when there are none.

        Returns (Hits, their ray ids beam x S + sub-ray (H,), their local rows (H,): the row
        of the traced ray, group after group, beam-major then sub-ray).
        """
        beams = np.concatenate([np.repeat(b, len(j)) for b, j in zip(groups[::2],
                                                                     groups[1::2])])
        if beams.size == 0:
            return None
        subs = np.concatenate([np.tile(np.asarray(j, np.int64), b.size)
                               for b, j in zip(groups[::2], groups[1::2])])
        beams, subs = beams.astype(np.int64), subs.astype(np.int64)
        o, d, r32 = self._rotate(poses, beams, subs, with_rays32=True)
        hits = cast.trace(o, d, r32, beams)
        local = np.asarray(hits.ray, np.int64)
        return hits, beams[local] * self.n_sub + subs[local], local

    def _rotate(self, poses, beams, subs, with_rays32=False):
        """Return world origins and directions (M, 3) (and rays32) of (beam, sub-ray) pairs."""
        r32 = np.empty((beams.size, 6), np.float32)
        dx, dy, dz = self.planes
        o, d = rotate_rows(dx, dy, dz, np.ascontiguousarray(poses[1:]), beams, subs, r32)
        return (o, d, r32) if with_rays32 else (o, d)

    def _directions(self, poses, refined, s):
        """Return (ray ids, world directions) of every sub-ray of the refined beams."""
        beams, subs = _every_sub_ray(np.flatnonzero(refined), s)
        _, d = self._rotate(poses, beams, subs)
        return beams * s + subs, d

    def _footprint_albedo(self, centre, refined, origins, dirs, poses, sd, albedo_at):
        """
        Give the textured ground hits of unrefined beams the footprint's mean albedo (a copy).

        The ground texture changes every 0.1 m (raycast/ground_texture.py), finer than a far
        footprint: the sub-rays' points on the horizontal plane through the centre hit take
        their cells' albedo (albedo_at: World.ground_albedo), averaged with the sub-ray
        weights, as their hits would have given.
        """
        ray = np.asarray(centre.ray, np.int64)
        mat = np.asarray(centre.material, np.intp)
        rows = np.flatnonzero(np.asarray(centre.ground, bool) & ~refined[ray] & (sd[mat] > 0.0))
        if rows.size == 0:
            return centre
        beams = ray[rows]
        s = self.n_sub
        o_sub, d_sub = self._rotate(poses, *_every_sub_ray(beams, s))
        pts = plane_points(o_sub, d_sub, origins, dirs, beams,
                           np.asarray(centre.range_m, np.float64)[rows], s - 1)
        alb = albedo_at(pts, np.repeat(mat[rows], s - 1).astype(np.uint8), sd)
        w = self.weights
        mean = (w[0] * np.asarray(centre.albedo, np.float64)[rows]
                + alb.reshape(-1, s - 1).astype(np.float64) @ w[1:]) / np.sum(w)
        albedo = np.array(centre.albedo, np.float32)
        albedo[rows] = mean
        return replace(centre, albedo=albedo)

    def full_footprint(self, contrib: Contributions,
                       refined: NDArray[np.bool_]) -> Contributions:
        """Give the contributions of unrefined beams the footprint's whole power (a copy)."""
        power = contrib.power_counts.copy()
        one = ~refined[contrib.beam]
        power[one] *= self.centre_gain
        return replace(contrib, power_counts=power)


def _every_sub_ray(beams, s):
    """Return the (beam, sub-ray) pairs (K (S - 1),) of sub-rays 1..S-1 of beams (K,)."""
    beams = np.asarray(beams, np.int64)
    return np.repeat(beams, s - 1), np.tile(np.arange(1, s, dtype=np.int64), beams.size)


@numba.njit(cache=True, nogil=True, error_model='numpy')
def plane_points(o_sub: NDArray[np.float64], d_sub: NDArray[np.float64],
                 origins: NDArray[np.float64], dirs: NDArray[np.float64],
                 beams: NDArray[np.int64], r: NDArray[np.float64],
                 per_beam: int) -> NDArray[np.float64]:
    """
    Return where sub-rays meet the horizontal plane through their beam's centre hit (M, 3).

    o_sub, d_sub (M, 3): the sub-rays, per_beam consecutive rows per beam of beams (K,); the
    centre hit of beam beams[k] is origins + dirs r[k] (origins, dirs (B, 3), r (K,)). A
    sub-ray that never meets the plane ahead (parallel, or behind it) samples its own point at
    the centre's range (the centre hit itself when that range is not finite).
    """
    out = np.empty((o_sub.shape[0], 3))
    for i in range(o_sub.shape[0]):
        k = i // per_beam
        b = beams[k]
        z_hit = origins[b, 2] + dirs[b, 2] * r[k]
        t = (z_hit - o_sub[i, 2]) / d_sub[i, 2]
        if not (np.isfinite(t) and t > 0.0):
            t = r[k]
        for j in range(3):
            out[i, j] = o_sub[i, j] + d_sub[i, j] * t if np.isfinite(t) \
                else origins[b, j] + dirs[b, j] * r[k]
    return out
