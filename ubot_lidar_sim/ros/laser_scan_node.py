"""
laser_scan node: the 2D scanner of document 003 as a one-channel radiometric LiDAR.

Publishes ``scan`` (sensor_msgs/LaserScan, REP 117: +inf no return, -inf nearer than
range_min; the stamp is the first ray; time_increment and scan_time from rate_hz) and, while
someone subscribes, ``~/rays`` (MarkerArray in the world frame: hit rays green to the hit,
missed rays red to range_max, lifetime debug_ray_lifetime_s). Each ray is traced from the
pose interpolated from TF at its own firing time.
"""

from array import array

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
import numpy as np
from sensor_msgs.msg import LaserScan
from std_msgs.msg import ColorRGBA

from ubot_lidar_sim.core.config import LaserScanConfig
from ubot_lidar_sim.ros.conversions import ns_to_stamp
from ubot_lidar_sim.ros.sensor_node import run_node, SensorNode, SkipScan
from visualization_msgs.msg import Marker, MarkerArray

_GREEN = ColorRGBA(r=0.1, g=0.85, b=0.1, a=0.8)
_RED = ColorRGBA(r=0.9, g=0.1, b=0.1, a=0.6)


def _duration(seconds):
    ns = int(round(max(seconds, 0.0) * 1e9))
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def ray_markers(starts_m, ends_m, hit, frame_id, stamp, lifetime_s, width_m=0.01):
    """
    Return a MarkerArray of two LINE_LISTs: hit rays (ns 'hits', green), misses ('misses', red).

    starts_m, ends_m: (K, 3) in frame_id; hit: (K,) bool.
    """
    out = MarkerArray()
    for ident, (ns, color, rows) in enumerate((('hits', _GREEN, hit), ('misses', _RED, ~hit))):
        m = Marker()
        m.header.frame_id = frame_id
        m.header.stamp = stamp
        m.ns = ns
        m.id = ident
        m.type = Marker.LINE_LIST
        m.action = Marker.ADD
        m.pose.orientation.w = 1.0
        m.scale.x = float(width_m)
        m.color = color
        m.lifetime = _duration(lifetime_s)
        seg = np.empty((2 * int(np.count_nonzero(rows)), 3))
        seg[0::2], seg[1::2] = starts_m[rows], ends_m[rows]
        m.points = [Point(x=x, y=y, z=z) for x, y, z in seg.tolist()]
        out.markers.append(m)
    return out


class LaserScanNode(SensorNode):
    """Publishes a LaserScan per sweep of rate_hz from the core's one-channel LiDAR."""

    default_name = 'laser_scan'

    def __init__(self, **kwargs):
        super().__init__(kwargs.pop('node_name', self.default_name), LaserScanConfig, **kwargs)
        self.scanner = None
        self.on_config_changed(())
        self._pub = self.create_publisher(LaserScan, 'scan', self.output_qos)
        self._rays_pub = self.create_publisher(MarkerArray, '~/rays', 10)
        self.start_trigger(self.config.rate_hz)

    def has_subscribers(self):
        """Return True when ``scan`` or, with debug_rays, ``~/rays`` has a listener."""
        return self._pub.get_subscription_count() > 0 or self._rays_wanted()

    def _rays_wanted(self):
        return self.config.debug_rays and self._rays_pub.get_subscription_count() > 0

    def on_config_changed(self, names):
        """Rebuild the scanner for the new model parameters (geometry is read-only)."""
        # Imported here so that terrain_sensor_node can reuse ray_markers without the physics.
        from ubot_lidar_sim.core.sensors.laser import LaserScanner

        self.scanner = LaserScanner(self.config, self.world, self.materials)

    def scan_once(self, now_ns):
        """Trace one sweep ending at the newest pose and publish it; return the ray count."""
        cfg = self.config
        if not cfg.enabled:
            raise SkipScan('disabled', 'parameter enabled is false')
        scan_time_s = 1.0 / cfg.rate_hz
        start_ns, _ = self.sweep_window(cfg.frame_id, now_ns, scan_time_s)
        stamp_s = start_ns * 1e-9
        seen = {}

        def pose_at(times_s):
            poses = self.lookup_many(cfg.world_frame, cfg.frame_id, times_s)
            seen['poses'] = poses
            return poses

        res = self.scanner.scan(pose_at, stamp_s, self.weather, self.scan_index)
        ranges = np.asarray(res.ranges, dtype=np.float32)
        msg = LaserScan()
        msg.header.stamp = ns_to_stamp(start_ns)
        msg.header.frame_id = cfg.frame_id
        msg.angle_min = float(res.angle_min)
        msg.angle_max = float(res.angle_max)
        msg.angle_increment = float(res.angle_increment)
        msg.time_increment = float(res.time_increment)
        msg.scan_time = float(res.scan_time)
        msg.range_min = float(res.range_min)
        msg.range_max = float(res.range_max)
        msg.ranges = array('f', ranges.tobytes())
        msg.intensities = array('f', np.asarray(res.intensities, np.float32).tobytes())
        self._pub.publish(msg)
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
