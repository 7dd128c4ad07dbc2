"""A base_sim node, optionally a laser_scan node, and a probe on one executor (real DDS)."""

import os
import time

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Twist, TwistStamped, Vector3
from nav_msgs.msg import Odometry
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan, PointCloud2
from std_msgs.msg import Bool
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.base_sim_node import BaseSimNode
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode
from ubot_lidar_sim_msgs.msg import TerrainSensor

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
LASER = {'world_file': 'flat', 'rate_hz': 10.0, 'noise_enabled': False, 'weather': False}
LIDAR = {'world_file': 'flat', 'rate_hz': 10.0, 'noise_enabled': False, 'weather': False,
         'channels': 8, 'horizontal_samples': 120, 'sub_rays': 1, 'max_range_m': 30.0,
         'model': 'geometric'}


def twist(vx=0.0, vy=0.0, wz=0.0):
    """Return a geometry_msgs/Twist."""
    return Twist(linear=Vector3(x=float(vx), y=float(vy)), angular=Vector3(z=float(wz)))


def boxes_world(boxes, frame='map'):
    """Return a 60 m grass plane with concrete boxes ((x, y, size_x, size_y), 1 m high)."""
    objects = [{'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'material': 'grass'}]
    for k, (x, y, sx, sy) in enumerate(boxes):
        objects.append({'name': f'box{k}', 'type': 'box', 'size_m': [sx, sy, 1.0],
                        'pose': {'xyz': [x, y, 0.5]}, 'material': 'concrete'})
    return World.from_dict({'frame': frame, 'objects': objects})


def _param(name, value):
    """Return a Parameter; [] as an empty string array (rclpy would guess a byte array)."""
    if value == []:
        return Parameter(name, Parameter.Type.STRING_ARRAY, [])
    return Parameter(name, value=value)


class BaseRig:
    """base_sim (+ laser_scan with laser=True) and a probe in a context of their own."""

    def __init__(self, world, params, laser=False, laser_params=None, clock_s=None,
                 lidar_params=None, terrain_params=None):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=20 + os.getpid() % 60)
        self.probe = rclpy.create_node('probe', context=self.ctx)
        self._clock = self.probe.create_publisher(Clock, '/clock', 10)
        if clock_s is not None:     # the probe owns /clock: set_clock moves it
            self.set_clock(clock_s)
        self.odom, self.tf, self.scans, self.collision = [], [], [], []
        self.probe.create_subscription(Odometry, 'odom', self.odom.append, 100)
        self.probe.create_subscription(TFMessage, '/tf', self.tf.append, 100)
        self.probe.create_subscription(Bool, 'base_sim/collision', self.collision.append,
                                       LATCHED)
        # The probe publishes Twist unless told; its type must be the node's (one participant
        # holds one type per topic): a test of the other type publishes from its own context.
        params = {'cmd_vel_stamped': False, **params}
        # Simulated time waits at start for its sync topics' publishers: those of the rig.
        synced = [t for t, on in (('/scan', laser), ('/points', lidar_params is not None),
                                  ('/terrain', terrain_params is not None)) if on]
        if synced:
            params.setdefault('sync_topics', synced)
        else:
            params.setdefault('sync_start_timeout_s', 0.0)
        kind = TwistStamped if params['cmd_vel_stamped'] else Twist
        self.cmd = self.probe.create_publisher(kind, 'cmd_vel', 10)
        self.node = BaseSimNode(context=self.ctx, world=world, parameter_overrides=[
            _param(k, v) for k, v in params.items()])
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.probe)
        self.executor.add_node(self.node)
        self.laser = None
        if laser:
            self.probe.create_subscription(LaserScan, 'scan', self.scans.append,
                                           qos_profile_sensor_data)
            self.laser = LaserScanNode(context=self.ctx, world=world, parameter_overrides=[
                Parameter(k, value=v) for k, v in {**LASER, **(laser_params or {})}.items()])
            self.executor.add_node(self.laser)
        self.lidar, self.clouds = None, []
        if lidar_params is not None:
            self.probe.create_subscription(PointCloud2, 'points', self.clouds.append,
                                           qos_profile_sensor_data)
            self.lidar = Lidar3DNode(context=self.ctx, world=world, parameter_overrides=[
                Parameter(k, value=v) for k, v in {**LIDAR, **lidar_params}.items()])
            self.executor.add_node(self.lidar)
        self.terrain, self.samples = None, []
        if terrain_params is not None:
            self.probe.create_subscription(TerrainSensor, 'terrain', self.samples.append,
                                           qos_profile_sensor_data)
            values = {'world_file': 'flat', **terrain_params}
            self.terrain = TerrainSensorNode(context=self.ctx, world=world, parameter_overrides=[
                Parameter(k, value=v) for k, v in values.items()])
            self.executor.add_node(self.terrain)

        def started():
            if clock_s is not None:
                self.set_clock(clock_s)
            return self.odom and self.cmd.get_subscription_count()
        assert self.spin_until(started), 'no odom from base_sim'

    def set_clock(self, t_s):
        """Publish /clock at t_s."""
        ns = int(round(t_s * 1e9))
        self._clock.publish(Clock(clock=Time(sec=ns // 10**9, nanosec=ns % 10**9)))

    def spin_until(self, done, timeout_s=10.0):
        """Spin until done() or the timeout (wall s); return done()."""
        end = time.monotonic() + timeout_s
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)
        return bool(done())

    def spin_for(self, seconds):
        """Spin for seconds of wall time."""
        self.spin_until(lambda: False, seconds)

    def close(self):
        """Destroy the nodes and the context."""
        self.executor.shutdown()
        for node in (self.node, self.laser, self.lidar, self.terrain, self.probe):
            if node is not None:
                node.destroy_node()
        rclpy.shutdown(context=self.ctx)
