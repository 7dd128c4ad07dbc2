"""
One 3D LiDAR sweep: beams -> poses -> world.trace -> contributions -> echoes -> points.

LidarSimulator wires a sweep (or its column blocks, column_blocks.py) through the physics and
packs the points in the full layout (point_layouts.py); the other layouts are converted from it.
Points are in the sensor frame at the instant their column fired, so a moving sensor shows the
skew of a spinning LiDAR. Randomness comes from the streams of random_streams.py only.
"""

from dataclasses import dataclass, field, replace
import time
from typing import Dict, Mapping, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.core.memory import keep_freed_memory
from ubot_lidar_sim.core.physics import (echoes, false_alarms, imperfections, radiometry,
                                         smoke_inside, snow, sunlight, weather_effects)
from ubot_lidar_sim.core.physics.clutter import clutter
from ubot_lidar_sim.core.physics.footprint import sub_ray_directions, sub_ray_pattern
from ubot_lidar_sim.core.physics.return_selection import FLAG_FIRST, FLAG_LAST, FLAG_STRONGEST
from ubot_lidar_sim.core.physics.weather import scan_weather
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import poses_at
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt
from ubot_lidar_sim.core.raycast.ray_times import RayTimes
from ubot_lidar_sim.core.sensors import column_blocks, ghosts
from ubot_lidar_sim.core.sensors.adaptive_footprint import AdaptiveFootprint
from ubot_lidar_sim.core.sensors.column_blocks import BlockPlan
from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE
from ubot_lidar_sim.core.sensors.random_streams import (
    scan_rng, STREAM, STREAM_CALIBRATION, STREAM_CLUTTER, STREAM_FALSE_ALARM, STREAM_NOISE,
    STREAM_ROUGHNESS)
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.sensors.sweep_cast import SweepCast
from ubot_lidar_sim.core.sensors.sweep_passes import (beam_minimum, pack_points, rotate_sub_rays,
                                                      rough_ranges)
from ubot_lidar_sim.core.world.query import TraceSettings

_NO_INSTANCE = np.zeros(1, np.uint16)          # pack_points: every point the static world


@dataclass(frozen=True, eq=False)
class ScanResult:
    """
    One sweep: points (P,) FULL_DTYPE, sensor frame at each column's firing instant.

    beam (P,) int64 index of each point's beam; stamp_s header stamp; sensor_pose (4, 4)
    world-from-sensor at the stamp; n_beams; too_close (B,) bool (an echo nearer than
    min_range_m); hit_range_m (B,) nearest surface of each beam's centre ray (inf: none);
    n_echoes formed before detection; timing_ms {'rays_ms', 'trace_ms', 'radiometry_ms',
    'echoes_ms', 'pack_ms', 'total_ms'}.
    """

    points: np.ndarray
    beam: np.ndarray
    stamp_s: float
    sensor_pose: np.ndarray
    n_beams: int
    too_close: np.ndarray
    hit_range_m: np.ndarray
    n_echoes: int
    timing_ms: Dict[str, float] = field(default_factory=dict)


class LidarSimulator:
    """
    Simulates sweeps of one LidarConfig in one World with one MaterialTable.

    beams: fixed Beams to use instead of the config's pattern (the 2D scanner's planar rays).
    A rosette's beams change every sweep (build_beams(cfg, scan_index)); a grid's never do.
    With n_column_blocks n > 1, ``blocks`` holds one simulator per column block (block: its
    index, keying its random streams) and ``block_columns`` their columns (column_blocks.py).
    """

    def __init__(self, cfg, world, materials, beams=None, block=None):
        keep_freed_memory()
        self.cfg = cfg
        self.world = world
        self.materials = materials
        # The geometric model traces each beam's centre ray only.
        self.offsets, self.weights = sub_ray_pattern(
            1 if cfg.model == 'geometric' else cfg.sub_rays, cfg.divergence_mrad)
        self._repeats = beams is not None or cfg.pattern.kind != 'rosette'
        self._normals = ghosts.possible(cfg, world, materials) or world.sun_direction is not None
        self._scan_index = None
        # ScanError over max_rays_per_scan, before any work.
        self._use_beams(build_beams(cfg) if beams is None else beams, 0)
        self._block = block
        # A block's simulator (beams given) is one block of its own.
        self.blocks, self.block_columns = [], BlockPlan.of(
            self.beams.column_time_s,
            cfg.n_column_blocks if beams is None and block is None else 1)
        if len(self.block_columns) > 1:
            self.blocks = [LidarSimulator(cfg, world, materials, column_blocks.column_beams(
                self.beams, cols), block=j) for j, cols in enumerate(self.block_columns)]

    def _rng(self, scan_index, stream):
        """Return the Generator of one random stream of sweep scan_index (of this block)."""
        return scan_rng(self.cfg.seed, self.cfg.sensor_id, scan_index, stream, self._block)

    def _use_beams(self, beams, scan_index):
        """Make ``beams`` the geometry of sweep ``scan_index``."""
        self.beams = beams
        self._scan_index = scan_index
        # Sensor-frame sub-ray directions (R, C, S, 3), and as (R, C, S) planes for the rotation.
        cfg = self.cfg
        self._calibration = imperfections.instance(cfg.physical, beams.channels, lambda: scan_rng(
            cfg.calibration_serial, cfg.sensor_id, 0, STREAM_CALIBRATION))
        self._sub_dirs = sub_ray_directions(imperfections.fired(beams, self._calibration),
                                            self.offsets).reshape(
            beams.channels, beams.columns, len(self.weights), 3)
        self._sub_planes = [np.ascontiguousarray(self._sub_dirs[..., k]) for k in range(3)]
        # Each beam's firing time after the stamp (its points' time) and column: where the
        # world's actors are when its sub-rays fire (none: not needed).
        self._beam_late_s = self._beam_column = None
        if self.world.actors:
            self._beam_column = np.asarray(beams.column, np.int64)
            self._beam_late_s = (beams.column_time_s[beams.column]
                                 + beams.ring_time_offset_s[beams.ring])
        # footprint adaptive (physical model, 7 sub-rays): the centres first (adaptive_footprint).
        self._adaptive = None
        if self.cfg.model == 'physical' and self.cfg.footprint == 'adaptive' \
                and len(self.weights) > 1:
            self._adaptive = AdaptiveFootprint(beams, self._sub_planes, self.offsets,
                                               self.weights, along_rings=self._repeats)

    def ray_times(self, stamp_s: float,
                  beam: Optional[NDArray[np.int64]] = None) -> Optional[RayTimes]:
        """
        Return the RayTimes of a cast of the sweep stamped stamp_s (None: no actors).

        beam (N,) int: the beam of each ray cast; None: every sub-ray in sweep order (beam
        major, S per beam).
        """
        return self._cast(Sweep(stamp_s)).times(beam)

    def _cast(self, sweep, max_range_m=np.inf, settings=TraceSettings()):
        """Return the SweepCast of sweep (max_range_m, settings: World.trace_rays')."""
        return SweepCast(self.world, sweep, self._beam_late_s, self._beam_column,
                         self.beams.column_time_s, len(self.weights), max_range_m, settings)

    def _sweep_geometry(self, scan_index):
        """Switch to the beams of sweep scan_index (a rosette moves on; a grid stays)."""
        if not self._repeats and scan_index != self._scan_index:
            self._use_beams(build_beams(self.cfg, scan_index), scan_index)

    def pose_times(self, stamp_s: float) -> NDArray[np.float64]:
        """Return the times (C + 1,) s at which a sweep stamped stamp_s needs its pose."""
        return np.concatenate([[stamp_s], stamp_s + self.beams.column_time_s])

    def rays(self, pose_at: PoseAt, stamp_s: float,
             ) -> Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """
        World origins and unit directions (B * S, 3) of every sub-ray, and the stamp pose.

        pose_at is called once with [stamp, stamp + column times] and returns (C + 1, 4, 4).
        """
        poses = poses_at(pose_at, self.pose_times(stamp_s))
        origins, dirs = self._sub_rays(poses)
        return origins, dirs, poses[0]

    def _sub_rays(self, poses, rays32=None, planes=None):
        """
        Origins and directions (B * S, 3) of the sweep's sub-rays, from poses (C + 1, 4, 4).

        rays32 (B * S, 6) float32, when given, receives their first cast's rays; planes (three
        (R, C, S') arrays) the sub-rays to turn instead of all (the centres: S' = 1).
        """
        cols = self.beams.columns
        if poses.shape != (cols + 1, 4, 4):     # the compiled rotation does not check indices
            raise ValueError(f'poses of shape {poses.shape}: expected ({cols + 1}, 4, 4), the '
                             'pose at the stamp and at each column')
        # World component i = (dx R_i0 + dy R_i1) + dz R_i2 of each column's rotation.
        dx, dy, dz = self._sub_planes if planes is None else planes
        return rotate_sub_rays(dx, dy, dz, np.ascontiguousarray(poses[1:]), 0,
                               self.beams.n_beams * dx.shape[2], rays32)

    def scan(self, pose_at: PoseAt, stamp_s: float, weather: Optional[Weather] = None,
             scan_index: int = 0,
             actor_poses: Optional[Mapping[str, PoseAt]] = None) -> ScanResult:
        """
        Simulate the sweep whose header stamp is stamp_s (s); returns a ScanResult.

        pose_at(times (C,)) -> (C, 4, 4) world-from-sensor at absolute times; weather a Weather
        (None = clear, dry); scan_index keys the random streams (noise, clutter, roughness).
        The world's actors are met at each sub-ray's firing time (stamp + its point's time;
        trajectories count from t = 0 s); actor_poses {actor name: pose_at} poses them
        instead (World.actor_frame).
        """
        return self.scan_sweep(pose_at, Sweep(stamp_s, weather, scan_index, actor_poses))

    def scan_sweep(self, pose_at: PoseAt, sweep: Sweep) -> ScanResult:
        """Simulate a Sweep (core/sensors/sweep.py) as scan does; returns a ScanResult."""
        t0 = time.perf_counter()
        poses = poses_at(pose_at, self.pose_times(sweep.stamp_s))
        if self.blocks:
            return self.scan_blocks(poses, sweep)
        return self._scan_beams(poses, sweep, t0)

    def block_pose_times(self, stamp_s: float, j0: int,
                         j1: Optional[int]) -> NDArray[np.float64]:
        """Return the times (1 + columns,) s of blocks j0..j1's poses: the stamp, then columns."""
        cols = self.block_columns.union(j0, j1)
        return np.concatenate([[stamp_s], stamp_s + self.beams.column_time_s[cols]])

    def scan_blocks(self, poses: NDArray[np.float64], sweep: Sweep, j0: int = 0,
                    j1: Optional[int] = None) -> ScanResult:
        """
        Simulate the column blocks j0..j1 (None: all) of a Sweep; their merged ScanResult.

        poses at block_pose_times(sweep.stamp_s, j0, j1), or (C + 1, 4, 4) at pose_times for the
        whole sweep. The result covers the blocks' columns (sorted): beams ring-major over
        them; for all blocks it is the sweep. Without blocks: the whole sweep.
        """
        if not self.blocks:
            return self._scan_beams(poses, sweep)
        j1 = len(self.blocks) if j1 is None else j1
        columns = self.block_columns[j0:j1]
        union = self.block_columns.union(j0, j1)
        results = []
        for blk, cols in zip(self.blocks[j0:j1], columns):
            rows = np.concatenate([[0], 1 + np.searchsorted(union, cols)])
            results.append(blk._scan_beams(poses[rows], sweep))
        return column_blocks.merge_columns(results, columns, self.beams.channels)[0]

    def _scan_beams(self, poses, sweep, t0=None):
        """Simulate every beam of this simulator (a sweep or one column block): ScanResult."""
        self._sweep_geometry(sweep.scan_index)
        cfg, beams = self.cfg, self.beams
        weather = scan_weather(cfg.atmosphere, sweep.weather)
        n_beams, n_sub = beams.n_beams, len(self.weights)
        t0 = time.perf_counter() if t0 is None else t0
        # The first cast's rays, in one pass: every sub-ray, or the centres (adaptive).
        planes = None if self._adaptive is None else self._adaptive.centre_planes
        rays32 = np.empty((n_beams * (n_sub if planes is None else 1), 6), np.float32)
        origins, dirs = self._sub_rays(poses, rays32, planes)
        sensor_pose = poses[0]
        t_rays = time.perf_counter()
        if cfg.model == 'geometric':
            actors = {'times': self.ray_times(sweep.stamp_s), 'actor_poses': sweep.actor_poses}
            ret, centre, t1 = self._geometric(origins, dirs, rays32, n_beams, actors)
            t2 = t3 = t1
        else:
            ret, centre, (t1, t2, t3) = self._physical(
                origins, dirs, rays32, beams.ring, n_beams, n_sub, weather, sweep, poses)
        beam = ret.beam
        points = self._pack(ret, beam)
        if cfg.self_filter:     # the robot's own body (core/robot/body.py), masked as a driver
            keep = points['class_id'] != SELF_CLASS
            points, beam = points[keep], beam[keep]
        t4 = time.perf_counter()
        timing = {'rays_ms': (t_rays - t0) * 1e3, 'trace_ms': (t1 - t_rays) * 1e3,
                  'radiometry_ms': (t2 - t1) * 1e3, 'echoes_ms': (t3 - t2) * 1e3,
                  'pack_ms': (t4 - t3) * 1e3, 'total_ms': (t4 - t0) * 1e3}
        return ScanResult(points=points, beam=beam, stamp_s=sweep.stamp_s,
                          sensor_pose=sensor_pose, n_beams=n_beams, too_close=ret.too_close,
                          hit_range_m=centre, n_echoes=ret.n_echoes, timing_ms=timing)

    def _geometric(self, origins, dirs, rays32, n_beams, actors):
        """
        Run the geometric model: (Returns, centre range (B,), time), one ray per beam.

        The first surface each ray meets (World.first_surfaces: foliage included, smoke not)
        within max_range_m; nearer than min_range_m it is too close, otherwise a point with
        intensity, reflectivity and signal 0 that is its beam's first, strongest and last return.
        actors: the times and actor_poses of World.first_surfaces.
        """
        cfg = self.cfg
        beam, r, material, class_id, instance = self.world.first_surfaces(
            origins, dirs, rays32, cfg.max_range_m, ignored=tuple(cfg.ignored_objects),
            glass=cfg.glass, **actors)
        t1 = time.perf_counter()
        centre = np.full(n_beams, np.inf)
        centre[beam] = r                                  # one ray per beam
        hits = beam.size
        near = r < cfg.min_range_m
        too_close = np.zeros(n_beams, dtype=bool)
        if near.any():
            too_close[beam[near]] = True
            p = np.flatnonzero(~near)
            beam, r, material, class_id, instance = (beam[p], r[p], material[p], class_id[p],
                                                     instance[p])
        n = beam.size
        ret = echoes.Returns(
            beam=beam, range_m=r, reflectivity=np.zeros(n), signal=np.zeros(n, np.uint16),
            intensity=np.zeros(n, np.uint8), class_id=class_id, material=material,
            return_index=np.ones(n, np.uint8), return_count=np.ones(n, np.uint8),
            return_flags=np.full(n, FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST, np.uint8),
            n_echoes=hits, too_close=too_close,
            instance_id=instance if self.world.actors else None)
        return ret, centre, t1

    def _physical(self, origins, dirs, rays32, ring, n_beams, n_sub, weather, sweep, poses):
        """
        Run the radiometric model (docs/physics.md): (Returns, centre range (B,), times).

        origins, dirs, rays32: every sub-ray, or with footprint adaptive the beams' centres;
        the world's actors are met at each ray's firing time (ray_times; sweep.actor_poses).
        weather: the sweep's, clear where it had none.
        """
        cfg, table, scan_index = self.cfg, self.materials, sweep.scan_index
        model, sensor = cfg.physical_model, cfg.sensor      # the parts the laws read
        cast = self._cast(sweep, cfg.max_range_m, TraceSettings(
            max_hits=cfg.max_hits_per_sub_ray, continue_step_m=cfg.continue_step_m,
            ignored=tuple(cfg.ignored_objects), smoke=weather.smoke,
            smoke_density=weather.smoke_density, smoke_radius_scale=cfg.smoke_cell_radius_scale,
            smoke_density_threshold=cfg.smoke_density_threshold,
            smoke_enabled=cfg.smoke_enabled, materials=table, with_points=False,
            glass=cfg.glass, with_normals=cfg.pulse_length_m > 0.0 or self._normals))
        # Each beam's centre ray (B, 3): the smoke around the sensor and mirror ghosts.
        rows = slice(None) if origins.shape[0] == n_beams else slice(None, None, n_sub)
        centre = (origins[rows], dirs[rows])
        smoke = smoke_inside.beams_in_smoke(cfg.optics, cfg.atmosphere, self.world, weather,
                                            *centre)
        refined = None
        if self._adaptive is None:
            hits = cast.trace(origins, dirs, rays32)
        else:
            hits, dirs, refined = self._adaptive.trace(
                cast, origins, dirs, rays32, poses, cfg.echoes, table, cfg.pulse_length_m > 0.0)
        t1 = time.perf_counter()

        hit_beam = np.asarray(hits.ray) // n_sub
        hits = self._roughen(hits, hit_beam, weather, scan_index)
        atm = weather_effects.atmosphere(model, weather)
        contrib = echoes.contributions_from_hits(
            model, sensor, table, hits, self.weights, ring, atm=atm, wetness=weather.wetness,
            puddle_depth_m=weather.puddle_depth_m, ray_dirs=dirs,
            snow_depth_m=weather.snow_depth_m)
        if refined is not None:
            contrib = self._adaptive.full_footprint(contrib, refined)
        contrib = ghosts.with_ghosts(cast, cfg, table, hits, contrib, centre, n_sub, ring, atm,
                                     weather)
        # Clutter stops at the nearest solid hit; a ponded ground hit is water, hence solid.
        solid = ~np.asarray(hits.foliage, bool) | (radiometry.pond_material(
            hits.material, hits.ground, weather.puddle_depth_m, cfg.pond_threshold_m)
            == radiometry.WATER)
        limit = beam_minimum(n_beams, hit_beam, hits.range_m, solid)
        if atm.active:
            clutter_rng = self._rng(scan_index, STREAM_CLUTTER)
            # Flakes and the fog's fluctuation draw from their own streams: each leaves the
            # others' draws as they were. Particles shadow the surfaces behind them.
            streams = weather_effects.clutter_streams(
                lambda name: self._rng(scan_index, STREAM[name]))
            contrib = clutter(model, sensor, atm, n_beams, limit, ring, clutter_rng,
                              streams=streams, surfaces=contrib)
        contrib = smoke_inside.inside_smoke(cfg.radiometry, sensor, table, smoke, contrib, limit,
                                            ring, atm.alpha if atm.active else 0.0)
        t2 = time.perf_counter()
        a = sunlight.beam_background(cfg.radiometry, weather, self.world, table, hits,
                                     centre[1], n_sub, solid)
        ret = false_alarms.with_false_alarms(model, sensor, ghosts.flag_ghosts(
            echoes.process_beams(model, sensor, contrib, n_beams,
                                 self._rng(scan_index, STREAM_NOISE), ring, a)),
            a, ring, self._rng(scan_index, STREAM_FALSE_ALARM))
        t3 = time.perf_counter()

        centre = beam_minimum(n_beams, hit_beam, hits.range_m, centre_of=(hits.ray, n_sub))
        return ret, centre, (t1, t2, t3)

    def _roughen(self, hits, hit_beam, weather, scan_index):
        """
        Ground-relief range noise: RoughnessM |cos|^-1.5 z, one z ~ N(0, 1) per beam.

        hit_beam (H,); z is the sweep's stream of one draw per beam, drawn up to the last hit
        beam (a stream's first draws do not depend on how many follow).
        """
        cfg, table = self.cfg, self.materials
        ground = np.asarray(hits.ground, dtype=bool)
        if not cfg.noise_enabled or not ground.any():
            return hits
        z = self._rng(scan_index, STREAM_ROUGHNESS).standard_normal(int(hit_beam.max()) + 1)
        # A ground hit's material under the weather (puddle, then snow), per traced material.
        traced = np.arange(table.roughness_m.size, dtype=np.uint8)
        material = snow.ground_material(traced, True, weather.puddle_depth_m,
                                        cfg.pond_threshold_m, weather.snow_depth_m)
        # Only ground hits move (the others would add 0.0, exactly nothing).
        range_m = rough_ranges(np.asarray(hits.range_m, np.float64), ground,
                               np.asarray(hits.material, np.uint8),
                               np.asarray(hits.cos_inc),
                               table.roughness_m[material], z, np.asarray(hit_beam, np.int64))
        return replace(hits, range_m=range_m)

    def _pack(self, ret, beam):
        """Pack Returns (beam (P,): their beams in the sweep) into FULL_DTYPE points."""
        beams = self.beams
        pts = np.empty(len(ret), dtype=FULL_DTYPE)
        pack_points(pts, beams.dir_sensor, beams.ring, beams.column, beams.column_time_s,
                    beams.ring_time_offset_s, np.asarray(beam, np.int64),
                    imperfections.reported_range(ret.range_m, beams, beam, self._calibration),
                    ret.intensity, ret.reflectivity, ret.signal, ret.return_index,
                    ret.return_count, ret.return_flags, ret.material, ret.class_id,
                    _NO_INSTANCE if ret.instance_id is None else ret.instance_id)
        return pts
