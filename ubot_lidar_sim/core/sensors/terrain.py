"""
Vehicle terrain sensor (docs/physics.md): one forward body ray and four downward tire rays.

Ray order (TerrainSensor.msg): vehicle, FL, FR, RL, RR. The body ray runs along +x of the base
frame, the tire rays along -z. start = centre - offset x axis, end = start + length x axis;
VehHitDist = |CntrLocVh - HitLocVh| - VehCntrLngthVal, TireHitDist = |CntrLocTr - HitLocTr| -
TireRadiiVal. A miss reports the end of the trace and +inf; a disabled ray NaN. A tire whose
centre is unknown (a NaN row of tire_centres_base, e.g. its TF frame missing) takes
tire_positions_m when cfg.tire_frames_fallback, else its ray is disabled.
"""

from dataclasses import dataclass
from typing import Mapping, Optional, TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.raycast.ray_times import one_instant

if TYPE_CHECKING:       # actor_casting loads numba, which describe must not
    from ubot_lidar_sim.core.raycast.actor_casting import PoseAt

N_RAYS = 5


@dataclass(frozen=True, eq=False)
class TerrainResult:
    """
    One terrain sample, world frame; arrays indexed vehicle, FL, FR, RL, RR.

    hit_flg (5,) uint8 1 hit / 0 miss or disabled; enabled (5,) uint8; hit_loc, start_loc, end_loc
    (5, 3) float64 m (NaN when disabled; a miss gives hit_loc = end_loc); veh_hit_dist float m;
    tire_hit_dist (4,) float64 m (+inf miss, NaN disabled); centre_loc (5, 3) the centres.
    """

    hit_flg: np.ndarray
    enabled: np.ndarray
    hit_loc: np.ndarray
    start_loc: np.ndarray
    end_loc: np.ndarray
    veh_hit_dist: float
    tire_hit_dist: np.ndarray
    centre_loc: np.ndarray


class TerrainSensor:
    """Casts the five rays of a TerrainConfig in a World (one World.cast call per sample)."""

    def __init__(self, cfg, world):
        self.cfg = cfg
        self.world = world

    def sample(self, base_pose: ArrayLike, vehicle_center_to_front_m: Optional[float] = None,
               tire_radii_m: Optional[ArrayLike] = None,
               tire_centres_base: Optional[ArrayLike] = None, time_s: float = 0.0,
               actor_poses: Optional[Mapping[str, 'PoseAt']] = None) -> TerrainResult:
        """
        Trace the rays from the world-from-base pose (4, 4); returns a TerrainResult.

        time_s: the sample's time (the world's actors are where they are then; trajectories
        count from the recording start), actor_poses: as World.trace.
        vehicle_center_to_front_m and tire_radii_m (4,) default to the config's constants;
        tire_centres_base (4, 3) base-frame tire centres (e.g. from TF), default
        tire_positions_m. A NaN row (centre unknown) takes that tire's tire_positions_m when
        cfg.tire_frames_fallback, else disables that ray (enabled 0, NaN like trace_enabled).
        """
        cfg = self.cfg
        pose = np.asarray(base_pose, dtype=np.float64)
        veh_len, radii, tires, unknown = self._inputs(vehicle_center_to_front_m,
                                                      tire_radii_m, tire_centres_base)
        centres_base = np.vstack([np.asarray(cfg.vehicle_center_m, dtype=np.float64), tires])
        rot = pose[:3, :3]
        centres = centres_base @ rot.T + pose[:3, 3]
        axes = np.vstack([rot[:, 0], np.tile(-rot[:, 2], (4, 1))])
        offsets = np.asarray(cfg.trace_offsets_m, dtype=np.float64)
        lengths = np.asarray(cfg.trace_lengths_m, dtype=np.float64)
        starts = centres - offsets[:, None] * axes
        ends = starts + lengths[:, None] * axes
        enabled = np.asarray(cfg.trace_enabled, dtype=bool) & ~np.concatenate([[False], unknown])
        castable = enabled & np.all(np.isfinite(starts), axis=1)

        hit = np.zeros(N_RAYS, dtype=bool)
        hit_loc = ends.copy()
        rows = np.flatnonzero(castable)
        if rows.size:
            hits = self.world.cast(starts[rows], axes[rows], float(lengths[rows].max()),
                                   ignored=tuple(cfg.ignored_objects), glass=cfg.glass,
                                   times=one_instant(rows.size, time_s),
                                   actor_poses=actor_poses)
            ray = rows[np.asarray(hits.ray)]
            rng = np.asarray(hits.range_m, dtype=np.float64)
            # One cast serves all lengths: keep the hits inside each ray's own trace.
            keep = rng <= lengths[ray]
            hit[ray[keep]] = True
            hit_loc[ray[keep]] = np.asarray(hits.point, dtype=np.float64)[keep]
        dist = np.linalg.norm(centres - hit_loc, axis=1) - np.concatenate([[veh_len], radii])
        dist = np.where(hit, dist, np.inf)
        nan3 = np.full(3, np.nan)
        off = ~enabled
        dist[off] = np.nan
        hit_loc[off] = nan3
        start_loc = np.where(off[:, None], nan3, starts)
        end_loc = np.where(off[:, None], nan3, ends)
        return TerrainResult(
            hit_flg=hit.astype(np.uint8), enabled=enabled.astype(np.uint8), hit_loc=hit_loc,
            start_loc=start_loc, end_loc=end_loc, veh_hit_dist=float(dist[0]),
            tire_hit_dist=dist[1:].copy(), centre_loc=centres)

    def _inputs(self, vehicle_center_to_front_m, tire_radii_m, tire_centres_base):
        """Return (centre-to-front m, radii (4,), tire centres (4, 3), unknown (4,) bool)."""
        cfg = self.cfg
        veh_len = cfg.vehicle_center_to_front_m if vehicle_center_to_front_m is None \
            else float(vehicle_center_to_front_m)
        radii = np.asarray(cfg.tire_radii_m if tire_radii_m is None else tire_radii_m,
                           dtype=np.float64)
        if radii.shape != (4,):
            raise ConfigError('tire_radii_m', radii.tolist(), 'a list of 4 values')
        if not np.all(np.isfinite(radii)) or np.any(radii < 0.0):
            raise ConfigError('tire_radii_m', radii.tolist(), '4 finite values >= 0 m')
        positions = np.asarray(cfg.tire_positions_m, dtype=np.float64).reshape(4, 3)
        tires = positions if tire_centres_base is None \
            else np.asarray(tire_centres_base, dtype=np.float64)
        if tires.shape != (4, 3):
            raise ConfigError('tire_centres_base', tires.tolist(), 'a (4, 3) array')
        unknown = ~np.all(np.isfinite(tires), axis=1)
        if cfg.tire_frames_fallback:
            tires = np.where(unknown[:, None], positions, tires)
            unknown[:] = False
        return veh_len, radii, tires, unknown
