"""
One sensor of a robot, scanned offline: its Gazebo grid, its mount on the robot, its body.

``RobotScanner(description, name, world, materials, ...)`` places the sensor at the robot's
model frame x link pose (joint positions given) x the sensor's <pose>, casts the robot's other
links (class ``self``; ``self_filter`` drops those returns, a laser's to +inf: the links are
rigid with the sensor, cast once in its frame, raycast/sensor_mount.py) and, for the
geometric model, adds Gazebo's Gaussian range noise and clamps to [range_min, range_max]
(gz-sensors src/Lidar.cc:223-238 and Clamp at 517-526).
"""

import dataclasses
from typing import Any

import numpy as np

from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.raycast.sensor_mount import MountedPose, pattern_rays, SensorFrame
from ubot_lidar_sim.core.robot.body import body_actors, link_pose_at
from ubot_lidar_sim.core.robot.description import RobotDescription
from ubot_lidar_sim.core.robot.mapping import azimuths, beams, LASER, sensor_config
from ubot_lidar_sim.core.robot.tree import link_poses
from ubot_lidar_sim.core.sensors.laser import LaserScanner, LaserScanResult
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator, ScanResult
from ubot_lidar_sim.core.sensors.random_streams import scan_rng, STREAM_NOISE


class RobotScanner:
    """Scans one range sensor of a RobotDescription in a world (see the module text)."""

    def __init__(self, description, name, world, materials, overlay=None, params_file=None,
                 self_occlusion=True, self_filter=False, sdf_geometry=None,
                 joint_positions=None):
        """overlay: {sensor name: {parameter: value}}; joint_positions {joint: rad or m}."""
        self.sensor = description.sensor(name)
        if self_filter:         # the config's self_filter: the sensors drop the self returns
            overlay = {**(overlay or {}), name: {**(overlay or {}).get(name, {}),
                                                 'self_filter': True}}
        self.kind, self.cfg = sensor_config(self.sensor, overlay, params_file)
        self.links = link_poses(description, joint_positions)
        self.model_from_sensor = self.links[self.sensor.link] @ self.sensor.link_from_sensor
        use = sdf_geometry or self.cfg.sdf_geometry     # visual by default, as worlds
        self.actors = (body_actors(description, use, skip={self.sensor.link})
                       if self_occlusion else [])
        world = world.with_actors(self.actors) if self.actors else world
        if self.kind == LASER:
            self.sim = LaserScanner(self.cfg, world, materials, azimuth_rad=azimuths(self.sensor))
        else:
            self.sim = LidarSimulator(self.cfg, world, materials, beams=beams(self.sensor))
        # The body is rigid with the sensor (the joints held): each link's sensor-from-link,
        # and the sensor's first-cast rays in its own frame (raycast/sensor_mount.py).
        sensor_from_model = np.linalg.inv(self.model_from_sensor)
        self.mounts = {a.name: sensor_from_model @ self.links[a.frame] for a in self.actors}
        lidar = self.sim.sim if self.kind == LASER else self.sim
        self.pattern = pattern_rays(lidar.rays(link_pose_at(np.eye(4)), 0.0)[1])

    def scan(self, world_from_model: np.ndarray, stamp_s: float = 0.0,
             weather: Weather | None = None, scan_index: int = 0) -> LaserScanResult | ScanResult:
        """Return the LaserScanResult or ScanResult of one scan, robot model frame posed."""
        world_from_sensor = np.asarray(world_from_model, np.float64) @ self.model_from_sensor
        res = self.sim.scan(link_pose_at(world_from_sensor), stamp_s, weather, scan_index,
                            self.body_poses(world_from_sensor))
        rng = scan_rng(self.cfg.seed, self.sensor.name, scan_index, STREAM_NOISE)
        return (self._laser(res, rng) if self.kind == LASER else self._cloud(res, rng))

    def body_poses(self, world_from_sensor: np.ndarray) -> dict[str, MountedPose] | None:
        """Return {actor: pose_at} of the body, rigid with the sensor at world_from_sensor."""
        if not self.actors:
            return None
        sensor = SensorFrame(world_from_sensor, self.pattern)
        return {name: MountedPose(sensor, mount) for name, mount in self.mounts.items()}

    def _noisy(self, r, rng):
        """Return ranges r with Gazebo's noise, clamped to the range limits (geometric model)."""
        s = self.sensor
        if self.cfg.model != 'geometric' or not self.cfg.noise_enabled or (
                s.noise_stddev_m == 0 and s.noise_mean_m == 0):
            return r
        noisy = r + rng.normal(s.noise_mean_m, s.noise_stddev_m, r.shape)
        return np.clip(noisy, self.cfg.min_range_m, self.cfg.max_range_m).astype(r.dtype)

    def _laser(self, res, rng):
        """Noise on the valid ranges."""
        ranges = res.ranges.copy()
        valid = np.isfinite(ranges)
        ranges[valid] = self._noisy(ranges[valid], rng)
        return dataclasses.replace(res, ranges=ranges)

    def _cloud(self, res, rng):
        """Noise along each point's ray."""
        pts, beam = res.points, res.beam
        r = pts['range'].astype(np.float64)
        noisy = self._noisy(r, rng)
        if noisy is not r:
            pts = pts.copy()
            scale = np.where(r > 0, noisy / np.where(r > 0, r, 1.0), 1.0)
            for axis in ('x', 'y', 'z'):
                pts[axis] = pts[axis] * scale
            pts['range'] = noisy
        return dataclasses.replace(res, points=pts, beam=beam)

    @staticmethod
    def config_only(description: RobotDescription, name: str,
                    overlay: dict[str, Any] | None = None,
                    params_file: str | None = None) -> tuple[str, object]:
        """Return (kind, config) of a sensor without building its scanner (no world)."""
        return sensor_config(description.sensor(name), overlay, params_file)
