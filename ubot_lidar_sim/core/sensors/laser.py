"""
2D laser scanner: a one-channel LiDAR (LidarSimulator) converted to LaserScan arrays.

Angles counter-clockwise from angle_min = -fov/2; len(ranges) = round((angle_max - angle_min) /
angle_increment) + 1, a full circle without its repeated endpoint. REP 117: no return +inf, an
echo nearer than range_min -inf (the rays are traced from 0 and classified), valid readings in
[range_min, range_max]. The scanner spins counter-clockwise from angle_min, ray k firing at
k x time_increment after the header stamp (per-ray motion distortion).
"""

from dataclasses import dataclass, field
import math

import numpy as np

from ubot_lidar_sim.core.config import replace
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator


@dataclass(frozen=True, eq=False)
class LaserScanResult:
    """
    One LaserScan: ranges, intensities (N,) float32 and the sensor_msgs/LaserScan scalars.

    hit (N,) bool rays with a valid or too-close return; hit_xyz (N, 3) float64 the returns in
    the sensor frame at each ray's firing instant (NaN without one; offline output only: the
    node draws its ~/rays markers from ranges and the rays' poses); stamp_s; sensor_pose (4, 4).
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


class LaserScanner:
    """Simulates LaserScans of a LaserScanConfig by reusing LidarSimulator on one channel."""

    def __init__(self, cfg, world, materials):
        self.cfg = cfg
        lidar = cfg.to_lidar_config()
        n = lidar.horizontal_samples
        full = lidar.horizontal_fov_deg >= 360.0
        step_deg = lidar.horizontal_fov_deg / n if full else (
            lidar.horizontal_fov_deg / (n - 1) if n > 1 else 0.0)
        self.angle_min = -math.radians(lidar.horizontal_fov_deg) / 2.0
        self.angle_increment = math.radians(step_deg) if n > 1 else math.radians(
            cfg.resolution_deg)
        self.angle_max = self.angle_min + (n - 1) * self.angle_increment
        # Trace from 0 so that echoes nearer than range_min can be reported as -inf; spin
        # counter-clockwise from angle_min so the rays fire in message order.
        self.lidar_cfg = replace(lidar, min_range_m=0.0, spin_direction='ccw',
                                 scan_start_azimuth_deg=math.degrees(self.angle_min),
                                 stamp_at='start')
        self.sim = LidarSimulator(self.lidar_cfg, world, materials)
        self.scan_time = 1.0 / cfg.rate_hz
        self.time_increment = self.scan_time * step_deg / 360.0 if n > 1 else 0.0

    @property
    def n_rays(self):
        """Return the number of rays (len(ranges))."""
        return self.sim.beams.n_beams

    def scan(self, pose_at, stamp_s, weather=None, scan_index=0):
        """Simulate one scan stamped at its first ray; pose_at as for LidarSimulator.scan."""
        cfg = self.cfg
        res = self.sim.scan(pose_at, stamp_s, weather, scan_index)
        n = self.n_rays
        ranges = np.full(n, np.inf, dtype=np.float32)
        intens = np.zeros(n, dtype=np.float32)
        r = res.points['range'].astype(np.float64)
        beam = res.beam
        near = r < cfg.min_range_m
        valid = ~near & (r <= cfg.max_range_m)
        ranges[beam[valid]] = r[valid]
        intens[beam[valid]] = res.points['intensity'][valid]
        ranges[beam[near]] = -np.inf
        hit = np.isfinite(ranges) | (ranges == -np.inf)
        xyz = np.full((n, 3), np.nan)
        xyz[beam] = np.stack([res.points['x'], res.points['y'], res.points['z']], axis=1)
        return LaserScanResult(
            ranges=ranges, intensities=intens, angle_min=self.angle_min,
            angle_max=self.angle_max, angle_increment=self.angle_increment,
            time_increment=self.time_increment, scan_time=self.scan_time,
            range_min=cfg.min_range_m, range_max=cfg.max_range_m, stamp_s=res.stamp_s,
            sensor_pose=res.sensor_pose, hit=hit, hit_xyz=xyz, timing_ms=res.timing_ms)
