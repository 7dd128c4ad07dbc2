"""The lidar_3d node rig of the node tests: a wall world, the node and a probe in one executor."""

import os
import time

import rclpy
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time as RosTime
from ros_helpers import static_transform
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import PointCloud2, PointField
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim_msgs.msg import Environment
from visualization_msgs.msg import MarkerArray

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
WALL_FACE_X = 9.9        # inner face of the wall box centred at x = 10, 0.2 m thick
SENSOR_Z = 1.0           # base_link -> lidar_3d
CONCRETE = 5
CLUTTER = PRECIPITATION_CLASS
SMALL = {'channels': 8, 'horizontal_samples': 120, 'sub_rays': 1, 'max_range_m': 30.0,
         'noise_enabled': False, 'rate_hz': 10.0, 'world_file': 'flat'}
F32, U8, U16, U32 = PointField.FLOAT32, PointField.UINT8, PointField.UINT16, PointField.UINT32


def wall_world_10m():
    """Return an 80 m grass plane with a concrete wall whose face is at x = 9.9 m."""
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [80, 80], 'material': 'grass'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 40, 12], 'pose': {'xyz': [10, 0, 4]},
         'material': 'concrete'}]})


class Rig:
    """
    One executor with the lidar node under test and a probe node.

    The probe publishes TF (map -> base_link moving along +x at speed_m_s, a static
    base_link -> lidar_3d) and the environment, and subscribes the cloud (decoded and raw).
    """

    def __init__(self, world, params, speed_m_s=0.0, environment=None, sim_time_s=None):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=120 + os.getpid() % 100)
        self.speed = speed_m_s
        self.probe = rclpy.create_node('probe', context=self.ctx)
        # With sim_time_s the probe publishes /clock = sim_time_s + wall seconds elapsed.
        self.sim_start = (sim_time_s, time.monotonic()) if sim_time_s is not None else None
        self.clock_pub = self.probe.create_publisher(Clock, '/clock', 10)
        self.t0_s = self.now().nanoseconds * 1e-9
        self.probe.create_publisher(TFMessage, '/tf_static', LATCHED).publish(TFMessage(
            transforms=[static_transform('base_link', 'lidar_3d', (0.0, 0.0, SENSOR_Z),
                                         self.now().to_msg())]))
        self.tf_pub = self.probe.create_publisher(TFMessage, '/tf', 100)
        self.env_pub = self.probe.create_publisher(Environment, 'environment', LATCHED)
        if environment is not None:
            self.env_pub.publish(environment)
        self.probe.create_timer(0.01, self._publish_tf,
                                clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._publish_tf()
        self.clouds, self.raw = [], []
        self.probe.create_subscription(PointCloud2, 'points', self.clouds.append, 10)
        self.probe.create_subscription(PointCloud2, 'points', self.raw.append, 10, raw=True)
        self.markers = []
        self.probe.create_subscription(MarkerArray, 'lidar_3d/fov_markers', self.markers.append,
                                       LATCHED)
        self.node = Lidar3DNode(
            context=self.ctx, world=world,
            parameter_overrides=[Parameter(k, value=v) for k, v in {**SMALL, **params}.items()])
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.probe)
        self.executor.add_node(self.node)

    def base_x(self, t_s):
        return self.speed * (t_s - self.t0_s)

    def now(self):
        if self.sim_start is None:
            return self.probe.get_clock().now()
        sim_s, wall0 = self.sim_start
        return RosTime(nanoseconds=int((sim_s + time.monotonic() - wall0) * 1e9))

    def _publish_tf(self):
        now = self.now()
        if self.sim_start is not None:
            self.clock_pub.publish(Clock(clock=now.to_msg()))
        x = self.base_x(now.nanoseconds * 1e-9)
        self.tf_pub.publish(TFMessage(transforms=[
            static_transform('map', 'base_link', (x, 0.0, 0.0), now.to_msg())]))

    def spin_until(self, done, timeout_s=8.0):
        end = time.monotonic() + timeout_s
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)
        return done()

    def clouds_after(self, n, timeout_s=8.0):
        start = len(self.clouds)
        assert self.spin_until(lambda: len(self.clouds) >= start + n, timeout_s), \
            f'no cloud within {timeout_s} s: {self.node.stats.counts}'
        return self.clouds[start:start + n]

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.shutdown(context=self.ctx)
