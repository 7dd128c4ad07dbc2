"""
2D laser scanner: a line trace (model geometric) or a one-channel LiDAR (physical).

Rays every resolution_deg, ceil(fov / resolution) of them (docs/presets.md, "laser_scan: two
models"; planar_and_rosette.planar_azimuths_rad): a full circle from 0 deg, a partial field of
view centred on +x. angle_increment is the resolution, len(ranges) = round((angle_max -
angle_min) / angle_increment) + 1, and ray k is traced at exactly angle_min + k angle_increment.
The scanner spins counter-clockwise, ray k firing k x time_increment after the header stamp
(traced from its own pose). REP 117: no return +inf, a return nearer than range_min -inf (rays
are traced from 0 and classified), valid readings in [range_min, range_max].

geometric: the first surface each ray meets (World.cast, foliage included, smoke not), no
detection statistics, noise or weather; the range is the cast's, rounded once to float32, so
it is exact to the float on spheres and cylinders (float64 roots) and within a few float32 ulps
on flat faces (open3d intersects float32 rays with float32 triangles; test_laser_models.py).
physical: LidarSimulator with the radiometric model of docs/physics.md on these rays.
"""

from dataclasses import dataclass, field
import math
from typing import Mapping, Optional

import numpy as np

from ubot_lidar_sim.core.beams.firing import planar_beams
from ubot_lidar_sim.core.beams.planar_and_rosette import planar_azimuths_rad, planar_times_s
from ubot_lidar_sim.core.class_ids import CLASS_DTYPE
from ubot_lidar_sim.core.config import replace
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep


@dataclass(frozen=True, eq=False)
class LaserScanResult:
    """
    One LaserScan: ranges (N,) float32, intensities (N,) float32 (empty: model geometric).

    The sensor_msgs/LaserScan scalars; hit (N,) bool rays with a valid or too-close return;
    hit_xyz (N, 3) float64 the returns in the sensor frame at each ray's firing instant (NaN
    without one; offline output only: the node draws its ~/rays markers from ranges and the
    rays' poses); stamp_s; sensor_pose (4, 4).
    """

    ranges: np.ndarray
    intensities: np.ndarray
    angle_min: float
    angle_max: float
    angle_increment: float
    time_increment: float
    scan_time: float
    range_min: float
    range_max: float
    stamp_s: float
    sensor_pose: np.ndarray
    hit: np.ndarray
    hit_xyz: np.ndarray
    timing_ms: dict = field(default_factory=dict)
    class_id: np.ndarray | None = None     # (N,) CLASS_DTYPE class of each ray's return (0: none)


class LaserScanner:
    """Simulates the LaserScans of a LaserScanConfig (model geometric or physical)."""

    def __init__(self, cfg, world, materials, azimuth_rad=None):
        """
        Build the scanner of cfg in world.

        azimuth_rad: the rays' azimuths (N,) rad, evenly spaced and rising, instead of the
        config's fov_deg and resolution_deg (a Gazebo sensor's min_angle + k step, core/robot).
        """
        self.cfg = cfg
        self.world = world
        planar = cfg.pattern
        resolution_deg = planar.resolution_deg
        if azimuth_rad is None:
            self.azimuth_rad = planar_azimuths_rad(planar.fov_deg, planar.resolution_deg,
                                                   planar.fov_centre_deg)
        else:
            self.azimuth_rad = np.asarray(azimuth_rad, np.float64)
            n = len(self.azimuth_rad)
            resolution_deg = (math.degrees((self.azimuth_rad[-1] - self.azimuth_rad[0])
                                           / (n - 1)) if n > 1 else 0.0)
        n = len(self.azimuth_rad)
        self.angle_min = float(self.azimuth_rad[0])
        self.angle_increment = math.radians(resolution_deg)
        self.angle_max = float(self.azimuth_rad[-1])
        self.scan_time = 1.0 / cfg.rate_hz
        self.time_increment = self.scan_time * resolution_deg / 360.0 if n > 1 else 0.0
        # Ray k fires k x time_increment after the stamp (all at the stamp without distortion).
        self.ray_time_s = (planar_times_s(n, resolution_deg, self.scan_time)
                           if cfg.motion_distortion else np.zeros(n))
        self._local = np.stack([np.cos(self.azimuth_rad), np.sin(self.azimuth_rad),
                                np.zeros(n)], axis=1)
        # Both models are LidarSimulator's over the planar rays (one path for the geometric
        # model of the lidar and the laser), traced from 0 so that returns nearer than
        # range_min can be reported as -inf.
        self.lidar_cfg = replace(cfg.to_lidar_config(), min_range_m=0.0)
        self.sim = LidarSimulator(self.lidar_cfg, world, materials,
                                  beams=planar_beams(self.azimuth_rad, self.ray_time_s))

    @property
    def n_rays(self) -> int:
        """Return the number of rays (len(ranges))."""
        return len(self.azimuth_rad)

    def scan(self, pose_at: PoseAt, stamp_s: float, weather: Optional[Weather] = None,
             scan_index: int = 0,
             actor_poses: Optional[Mapping[str, PoseAt]] = None) -> LaserScanResult:
        """
        Simulate one scan stamped at its first ray; returns a LaserScanResult.

        pose_at(times (N + 1,)) -> (N + 1, 4, 4) world-from-sensor at [stamp, stamp + ray times]
        (as for LidarSimulator.scan); weather and scan_index matter to the physical model only.
        The world's actors are met at each ray's time (actor_poses: LidarSimulator.scan).
        """
        return self.scan_sweep(pose_at, Sweep(stamp_s, weather, scan_index, actor_poses))

    def scan_sweep(self, pose_at: PoseAt, sweep: Sweep) -> LaserScanResult:
        """Simulate the scan of a Sweep (core/sensors/sweep.py) as scan does: LaserScanResult."""
        res = self.sim.scan_sweep(pose_at, sweep)
        r = np.full(self.n_rays, np.inf)
        r[res.beam] = res.points['range']
        intens = np.zeros(0, dtype=np.float32)
        if self.cfg.model == 'physical':
            intens = np.zeros(self.n_rays)
            intens[res.beam] = res.points['intensity']
        cfg = self.cfg
        ranges = np.full(self.n_rays, np.inf, dtype=np.float32)
        near = r < cfg.min_range_m
        valid = ~near & (r <= cfg.max_range_m)
        ranges[valid] = r[valid]
        ranges[near] = -np.inf
        if intens.size:
            intens = np.where(valid, intens, 0.0).astype(np.float32)
        hit = near | valid
        xyz = np.full((self.n_rays, 3), np.nan)
        xyz[hit] = self._local[hit] * r[hit, None]
        classes = np.zeros(self.n_rays, CLASS_DTYPE)
        classes[res.beam] = res.points['class_id']
        return LaserScanResult(
            ranges=ranges, intensities=intens, angle_min=self.angle_min,
            angle_max=self.angle_max, angle_increment=self.angle_increment,
            time_increment=self.time_increment, scan_time=self.scan_time,
            range_min=cfg.min_range_m, range_max=cfg.max_range_m, stamp_s=sweep.stamp_s,
            sensor_pose=res.sensor_pose, hit=hit, hit_xyz=xyz, timing_ms=res.timing_ms,
            class_id=np.where(hit, classes, 0).astype(CLASS_DTYPE))
