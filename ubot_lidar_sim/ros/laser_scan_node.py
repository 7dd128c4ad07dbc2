"""
laser_scan node: the 2D scanner as a one-channel radiometric LiDAR (docs/presets.md).

Publishes ``scan`` (sensor_msgs/LaserScan, REP 117: +inf no return, -inf nearer than
range_min; the stamp is the first ray; time_increment and scan_time from rate_hz) and, while
someone subscribes, ``~/rays`` (MarkerArray in the world frame: hit rays green to the hit,
missed rays red to range_max, lifetime debug_ray_lifetime_s). Each ray is traced from the
pose interpolated from TF at its own firing time. Services ``~/sample`` (timer mode: served by
the next sweep) and ``~/get_latest`` (ubot_lidar_sim_msgs/GetLatestScan): ros/services.py.
"""

import numpy as np
from sensor_msgs.msg import LaserScan

from ubot_lidar_sim.core.config import LaserScanConfig
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.output import messages
from ubot_lidar_sim.ros.conversions import to_rclpy
from ubot_lidar_sim.ros.diagnostics import SkipScan
from ubot_lidar_sim.ros.markers import ray_markers
from ubot_lidar_sim.ros.run import run_node
from ubot_lidar_sim.ros.sensor_node import SensorNode
from ubot_lidar_sim.ros.services import LatestMessage
from ubot_lidar_sim_msgs.srv import GetLatestScan
from visualization_msgs.msg import MarkerArray


class LaserScanNode(SensorNode):
    """Publishes a LaserScan per sweep of rate_hz from the core's one-channel LiDAR."""

    default_name = 'laser_scan'
    count_unit = 'rays'

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop('node_name', self.default_name), LaserScanConfig, **kwargs)
        self.scanner = None
        self.on_config_changed(())
        self._pub = self.create_publisher(LaserScan, 'scan', self.output_qos)
        self._rays_pub = self.create_publisher(MarkerArray, '~/rays', 10)
        self.latest = LatestMessage(self, GetLatestScan, 'scan', self._input_group)
        self.start_trigger(self.config.rate_hz)

    def has_subscribers(self):
        """Return True when ``scan`` or, with debug_rays, ``~/rays`` has a listener."""
        return self._pub.get_subscription_count() > 0 or self._rays_wanted()

    def _rays_wanted(self):
        return self.config.debug_rays and self._rays_pub.get_subscription_count() > 0

    def build_sweeper(self, cfg):
        """Return the LaserScanner of cfg (built when a set is checked, see SensorNode)."""
        return LaserScanner(cfg, self.world, self.materials)

    def on_config_changed(self, names):
        """Take the scanner of the new model parameters (geometry is read-only)."""
        self.scanner = self.sweeper(self.config)

    def scan_once(self, now_ns):
        """Trace the next sweep (ros/sweep_clock.py) and publish it; return the ray count."""
        cfg = self.config
        if not cfg.enabled:
            raise SkipScan('disabled', 'parameter enabled is false')
        start_ns, end_ns = self.sweep_window(cfg.frame_id, now_ns)
        stamp_s = start_ns * 1e-9
        seen = {}

        def pose_at(times_s):
            poses = self.lookup_many(cfg.world_frame, cfg.frame_id, times_s)
            seen['poses'] = poses
            return poses

        actors = self.actor_frames.poses(self.scanner.sim.pose_times(stamp_s))
        res = self.scanner.scan_sweep(pose_at, Sweep(stamp_s, self.weather, self.scan_index,
                                                     actors))
        description = messages.laser_scan(res, cfg.frame_id, start_ns)
        ranges = description.fields['ranges']
        msg = to_rclpy(description)
        self.end_sweep(cfg.frame_id, start_ns, end_ns)
        self._pub.publish(msg)
        self.latest.remember(msg, f'{len(ranges)} rays')
        if self._rays_wanted() and 'poses' in seen:
            self._publish_rays(seen['poses'], ranges, msg.angle_min, msg.angle_increment,
                               msg.header.stamp)
        return len(ranges)

    def _publish_rays(self, poses, ranges, angle_min, inc, stamp):
        """Markers in the world frame from each ray's own pose; -inf rays are not drawn."""
        cfg = self.config
        n = len(ranges)
        if len(poses) > n:  # the simulator asks for the stamp's pose before the rays' ones
            poses = poses[-n:]
        elif len(poses) < n:  # one pose for the whole sweep
            poses = np.broadcast_to(poses[:1], (n, 4, 4))
        ang = angle_min + inc * np.arange(n)
        hit = np.isfinite(ranges)
        drawn = hit | (ranges > 0)
        length = np.where(hit, ranges, cfg.max_range_m)
        local = np.stack([np.cos(ang), np.sin(ang), np.zeros(n)], axis=1) * length[:, None]
        starts = poses[:, :3, 3]
        ends = np.einsum('nij,nj->ni', poses[:, :3, :3], local) + starts
        self._rays_pub.publish(ray_markers(starts[drawn], ends[drawn], hit[drawn],
                                           cfg.world_frame, stamp, cfg.debug_ray_lifetime_s))


def main(args=None):
    """Run the laser_scan node (console script ``laser_scan_node``)."""
    return run_node(LaserScanNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
