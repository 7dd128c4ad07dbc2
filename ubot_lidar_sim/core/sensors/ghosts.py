"""
Mirror ghosts (docs/physics.md, "Glass and mirrors"): a beam's specular reflection cast on.

A hit on a folding material (MaterialTable.folds: mirror, polished metal, glass, water) sends
R(theta) of the beam on along the mirrored direction d' = d - 2 (d . n) n, R(theta) its
specular reflectance at the hit's incidence (physics/fresnel.py specular_share: constant on a
metal, Fresnel's on glass and water). What that ray meets sends its echo back the same way, so
the sensor sees it along its original beam at the folded range r_mirror + r' (the ghost), with
R(theta)^2 (out and back) of the power of a surface at that range.
Up to MAX_BOUNCES reflections are followed. Each beam's centre ray carries the whole beam (a
mirror is large against a footprint). Ghost hits get class labels.GHOST_CLASS, and their points
the return flag return_selection.FLAG_GHOST.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional, Tuple, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.class_ids import CLASS_DTYPE
from ubot_lidar_sim.core.config.lidar import LidarConfig
from ubot_lidar_sim.core.labels import GHOST_CLASS
from ubot_lidar_sim.core.physics import echoes, fresnel
from ubot_lidar_sim.core.physics.atmosphere import Atmosphere
from ubot_lidar_sim.core.physics.return_selection import FLAG_GHOST
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.sensors.sweep_cast import SweepCast
from ubot_lidar_sim.core.world.materials import MaterialTable

if TYPE_CHECKING:       # annotations only: the world module loads open3d
    from ubot_lidar_sim.core.world.world import World

#: Reflections followed per beam (a ghost of a ghost at most).
MAX_BOUNCES = 2
#: Offset of a reflected ray's origin off the mirror along its new direction, m.
START_STEP_M = 1e-4


def _reflect(d, n):
    """Return the unit mirror directions (K, 3) of d (K, 3) off normals n (K, 3)."""
    n = n / np.linalg.norm(n, axis=1, keepdims=True)
    out = d - 2.0 * np.sum(d * n, axis=1, keepdims=True) * n
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _ghost_rows(h, beam, folded, gain):
    """Return the Hits of reflected rays h as ghosts: ray = beam, range folded, class ghost."""
    k = np.asarray(h.ray, np.int64)
    return Hits(beam[k], folded[k] + np.asarray(h.range_m), None, h.normal, h.cos_inc,
                h.material, np.full(k.size, GHOST_CLASS, CLASS_DTYPE), h.foliage, h.ground,
                h.albedo, h.smoke, h.obj, h.instance_id), gain[k]


def ghost_hits(cast: SweepCast, table: MaterialTable, hits: Hits,
               centre_o: NDArray[np.float64], centre_d: NDArray[np.float64], n_sub: int,
               max_range_m: float,
               ) -> Tuple[Optional[Hits], Optional[NDArray[np.float64]]]:
    """
    Return (ghost Hits sorted by (beam, range) with ray = beam, gain (G,) = prod R(theta)^2).

    cast: the sweep's SweepCast (its world and trace settings); hits: the sweep's trace (ray =
    beam x n_sub + sub-ray, normals present); centre_o, centre_d (B, 3) the beams' centre rays.
    """
    ray = np.asarray(hits.ray, np.int64)
    rows = np.flatnonzero((ray % n_sub == 0) & table.folds[np.asarray(hits.material)])
    beam = ray[rows] // n_sub
    o, d = centre_o[beam], centre_d[beam]
    r, normal = np.asarray(hits.range_m)[rows], np.asarray(hits.normal, np.float64)[rows]
    folded = r.copy()
    gain = fresnel.specular_share(table, np.asarray(hits.material)[rows],
                                  np.asarray(hits.cos_inc)[rows]) ** 2
    parts = []
    for _ in range(MAX_BOUNCES):        # loop over reflections, each over all rays at once
        if beam.size == 0:
            break
        d2 = _reflect(d, normal)
        o2 = o + r[:, None] * d + START_STEP_M * d2
        folded = folded + START_STEP_M
        limit = np.maximum(max_range_m - folded, START_STEP_M)
        h = cast.trace(o2, d2, None, beam, limit, replace(cast.settings, with_normals=True))
        parts.append(_ghost_rows(h, beam, folded, gain))
        k = np.asarray(h.ray, np.int64)
        nxt = np.flatnonzero(table.folds[np.asarray(h.material)]
                             & (folded[k] + np.asarray(h.range_m) < max_range_m))
        k_n = k[nxt]
        beam, o, d = beam[k_n], o2[k_n], d2[k_n]
        r, normal = np.asarray(h.range_m)[nxt], np.asarray(h.normal, np.float64)[nxt]
        folded, gain = folded[k_n], gain[k_n] * fresnel.specular_share(
            table, np.asarray(h.material)[nxt], np.asarray(h.cos_inc)[nxt]) ** 2
    if not parts:
        return None, None
    fields = [f for f in Hits.__dataclass_fields__ if f != 'point']
    joined = {f: (None if any(getattr(p, f) is None for p, _ in parts) else
                  np.concatenate([np.asarray(getattr(p, f)) for p, _ in parts]))
              for f in fields}
    gain = np.concatenate([g for _, g in parts])
    order = np.lexsort((joined['range_m'], joined['ray']))
    return Hits(point=None, **{f: (None if v is None else v[order]) for f, v in joined.items()}
                ), gain[order]


def ghost_contributions(cfg: LidarConfig, table: MaterialTable, ghosts: Hits,
                        gain: NDArray[np.float64], ring: ArrayLike,
                        centre_d: NDArray[np.float64], atm: Optional[Atmosphere],
                        weather: Weather) -> echoes.Contributions:
    """Return the Contributions of ghost Hits (ray = beam) with their power times gain."""
    c = echoes.contributions_from_hits(
        cfg.physical_model, cfg.sensor, table, ghosts, np.ones(1), ring, atm=atm,
        wetness=weather.wetness, puddle_depth_m=weather.puddle_depth_m, ray_dirs=centre_d,
        snow_depth_m=weather.snow_depth_m)
    return replace(c, power_counts=c.power_counts * gain, rho_app=c.rho_app * gain)


def flag_ghosts(ret: echoes.Returns) -> echoes.Returns:
    """Return Returns ret with FLAG_GHOST set on the points of class GHOST_CLASS."""
    ghost = np.asarray(ret.class_id) == GHOST_CLASS
    if not ghost.any():
        return ret
    return replace(ret, return_flags=np.where(ghost, ret.return_flags | FLAG_GHOST,
                                              ret.return_flags).astype(np.uint8))


def possible(cfg: LidarConfig, world: World, table: MaterialTable) -> bool:
    """Return True when the physical model may meet a mirror-like surface in world."""
    return cfg.model == 'physical' and any(table.folds[o.material] for o in world.objects)


def with_ghosts(cast: SweepCast, cfg: LidarConfig, table: MaterialTable, hits: Hits,
                contrib: echoes.Contributions,
                centre: Tuple[NDArray[np.float64], NDArray[np.float64]], n_sub: int,
                ring: ArrayLike, atm: Optional[Atmosphere],
                weather: Weather) -> echoes.Contributions:
    """Return contrib with the ghosts of the sweep's hits; centre = (origins, dirs) (B, 3)."""
    if hits.normal is None:             # no mirror in the world (possible() is False)
        return contrib
    ghosts, gain = ghost_hits(cast, table, hits, centre[0], centre[1], n_sub, cfg.max_range_m)
    if ghosts is None or len(ghosts) == 0:
        return contrib
    return echoes.Contributions.concat(
        contrib, ghost_contributions(cfg, table, ghosts, gain, ring, centre[1], atm, weather))
