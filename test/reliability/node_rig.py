"""
Helpers of test_node_limits.py and test_node_reports.py: a simulated clock, a cloud recorder.

Imported by name (pytest puts this directory on sys.path).
"""

import time

from geometry_msgs.msg import TransformStamped
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import PointCloud2
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.ros.conversions import ns_to_stamp, pointcloud2_to_array, stamp_to_s

SMALL = {'world_file': 'flat', 'channels': 8, 'horizontal_samples': 90, 'sub_rays': 1,
         'noise_enabled': False, 'rate_hz': 10.0, 'max_range_m': 40.0}
OK, WARN = 0, 1
LIDAR_Z_M = 1.5


def transform(child, stamp_ns, x_m=0.0, z_m=LIDAR_Z_M, parent='map'):
    """Return an identity-rotation TransformStamped parent -> child at (x_m, 0, z_m)."""
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.header.stamp = ns_to_stamp(stamp_ns)
    t.transform.translation.x, t.transform.translation.z = float(x_m), float(z_m)
    t.transform.rotation.w = 1.0
    return t


class SimClock:
    """
    Publishes /clock and map -> each of ``frames`` on /tf from the probe every 10 ms.

    The simulated time advances ``speed`` times as fast as the wall clock, from start_s.
    ``running`` False pauses both; ``jump(s)`` moves the simulated time; ``extra(sim_ns)``, if
    set, returns more transforms for each tick (e.g. new frame ids).
    """

    def __init__(self, probe, frames=('lidar_3d',), speed=1.0, start_s=1000.0):
        self.probe, self.frames, self.speed = probe, frames, speed
        self.now_ns = int(start_s * 1e9)
        self.running, self.extra = True, None
        self._clock = probe.node.create_publisher(Clock, '/clock', 10)
        self._tf = probe.node.create_publisher(TFMessage, '/tf', 100)
        probe.node.create_timer(0.01, self._tick)

    def jump(self, seconds):
        """Move the simulated clock by seconds at once."""
        self.now_ns += int(seconds * 1e9)

    def _tick(self):
        if not self.running:
            return
        self.now_ns += int(0.01 * self.speed * 1e9)
        self._clock.publish(Clock(clock=ns_to_stamp(self.now_ns)))
        items = [transform(f, self.now_ns) for f in self.frames]
        if self.extra is not None:
            items += self.extra(self.now_ns)
        self._tf.publish(TFMessage(transforms=items))


class Clouds:
    """Records (arrival monotonic s, header stamp s, points) of each cloud on ``points``."""

    def __init__(self, probe, topic='points'):
        self.items = []
        probe.node.create_subscription(PointCloud2, topic, self._on, 10)

    def _on(self, msg):
        self.items.append((time.monotonic(), stamp_to_s(msg.header.stamp),
                           pointcloud2_to_array(msg)))

    def since(self, t_mono):
        """Return the clouds that arrived after monotonic time t_mono."""
        return [c for c in self.items if c[0] >= t_mono]


def diag_value(probe, key, name='lidar_3d', default=None):
    """Return the latest /diagnostics value of key for the status starting with name."""
    d = probe.diag(name)
    return d['values'].get(key, default) if d else default
