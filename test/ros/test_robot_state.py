"""A robot description on the ROS graph: /robot_description, /joint_states, joints on /tf."""

import math
import os
import sys
import time

from base_sim_rig import BaseRig, boxes_world, twist
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import closing_factory, static_transform, wall_world
from sensor_msgs.msg import Imu, JointState, LaserScan
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.ros.frames import rpy_quaternion
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.qos import latched_qos

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'core'))
from robot_files import urdf  # noqa: E402, I100  (the descriptions of the core tests)

R_WHEEL_M = 0.1
WHEELS = """
 <link name="left_wheel"/><link name="right_wheel"/>
 <joint name="left_wheel_joint" type="continuous"><parent link="base_link"/>
  <child link="left_wheel"/><origin xyz="0 0.2 -0.1" rpy="-1.5708 0 0"/><axis xyz="0 0 1"/>
 </joint>
 <joint name="right_wheel_joint" type="continuous"><parent link="base_link"/>
  <child link="right_wheel"/><origin xyz="0 -0.2 -0.1" rpy="-1.5708 0 0"/><axis xyz="0 0 1"/>
 </joint>"""
# The DiffDrive plugin of robot_files.urdf has wheel_radius 0.1 and wheel_separation 0.4; it
# names the wheel joints here.
DRIVE = ('<topic>cmd_vel</topic></plugin>', '<topic>cmd_vel</topic><left_joint>left_wheel_joint'
         '</left_joint><right_joint>right_wheel_joint</right_joint></plugin>')


def _robot(tmp_path, mast_joint='revolute'):
    path = tmp_path / 'bot.urdf'
    text = urdf(samples=361, lo=-math.pi / 2, hi=math.pi / 2, mast_joint=mast_joint,
                extra=WHEELS).replace(*DRIVE)
    path.write_text(text)
    return path, text


@pytest.fixture
def rig():
    yield from closing_factory(BaseRig)


def test_driving_x_turns_each_wheel_by_x_over_r_on_joint_states(rig, tmp_path):
    path, _ = _robot(tmp_path)
    r = rig(boxes_world([]), {'robot_description': str(path), 'max_linear_accel_m_s2': 2.0,
                              'max_linear_m_s': 1.0})
    states = []
    r.probe.create_subscription(JointState, 'joint_states', states.append,
                                qos_profile_sensor_data)
    assert r.spin_until(lambda: states), 'no /joint_states'
    assert list(states[-1].name) == ['left_wheel_joint', 'right_wheel_joint']
    start = time.monotonic()
    while r.odom[-1].pose.pose.position.x < 0.95 and time.monotonic() - start < 20.0:
        r.cmd.publish(twist(0.5))
        r.spin_until(lambda: False, 0.05)
    r.cmd.publish(twist(0.0))
    r.spin_for(1.5)         # brakes in 0.25 s, then stands
    x = r.odom[-1].pose.pose.position.x
    # The stop comes when odom passes 0.95 m plus the latency of the test's loop, which a busy
    # machine stretches (1.24 m seen beside two CPU hogs): the wheels are judged against the x
    # driven, whatever it is, and x only from below.
    assert x >= 0.95
    last = states[-1]
    # bound: the wheels integrate the same true poses as odom (no drift configured): straight
    # ahead each rolls x, so it turns x / r rad; float64 sums of ~100 steps (< 1e-12 rad)
    assert last.position[0] == pytest.approx(x / R_WHEEL_M, abs=1e-9)
    assert last.position[1] == pytest.approx(x / R_WHEEL_M, abs=1e-9)
    # 0.95 m or more driven: 0.95 / r = 9.5 rad or more
    assert last.position[0] >= 9.5
    # bound: standing, the steps' poses are equal: 0 exactly; 1e-9 rad/s is float64 slack
    assert last.velocity[0] == pytest.approx(0.0, abs=1e-9)


def test_base_sim_waits_for_the_description_on_the_topic_and_drives_its_wheels(rig, tmp_path):
    _, text = _robot(tmp_path)
    # A publisher of its own on the rig's domain latches the URDF before base_sim starts.
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=20 + os.getpid() % 60)
    try:
        rsp = rclpy.create_node('robot_state_publisher', context=ctx)
        rsp.create_publisher(String, '/robot_description', latched_qos(1)).publish(
            String(data=text))
        r = rig(boxes_world([]), {'robot_description': 'topic'})
        assert r.node.robot_state.robot.name == 'bot'
        states = []
        r.probe.create_subscription(JointState, 'joint_states', states.append,
                                    qos_profile_sensor_data)
        assert r.spin_until(lambda: states), 'no /joint_states'
        assert list(states[-1].name) == ['left_wheel_joint', 'right_wheel_joint']
    finally:
        rclpy.shutdown(context=ctx)


def test_base_sim_publishes_the_joints_as_robot_state_publisher_would(rig, tmp_path):
    path, _ = _robot(tmp_path)
    r = rig(boxes_world([]), {'robot_description': str(path)})
    statics = []
    r.probe.create_subscription(TFMessage, '/tf_static', statics.append, latched_qos(1))
    pub = r.probe.create_publisher(JointState, 'joint_states', 10)

    def mast():
        pub.publish(JointState(name=['mast_joint'], position=[0.7]))
        return [t for m in r.tf for t in m.transforms if t.child_frame_id == 'mast'
                and abs(t.transform.rotation.z) > 0.1]
    assert r.spin_until(lambda: statics), 'no /tf_static'
    fixed = {(t.header.frame_id, t.child_frame_id): t for t in statics[-1].transforms}
    # the fixed joint base_link -> laser_link (0.3 m up) and the sensor's own gz_frame_id
    assert set(fixed) == {('base_link', 'laser_link'), ('laser_link', 'laser_frame')}
    # bound: the joint origin's 0.3 through float64 matrices: approx's default rel 1e-6
    assert fixed['base_link', 'laser_link'].transform.translation.z == pytest.approx(0.3)
    assert r.spin_until(mast), 'no mast transform at the published joint position'
    t = mast()[-1]
    w, x, y, z = rpy_quaternion(0.0, 0.0, 0.7)      # the revolute joint about z by 0.7 rad
    q = t.transform.rotation
    # bound: float64 rotation matrix -> quaternion, a few ulps
    assert (q.w, q.z) == (pytest.approx(w, abs=1e-12), pytest.approx(z, abs=1e-12))
    assert t.header.frame_id == 'base_link'
    assert t.transform.translation.z == pytest.approx(0.3)


class _LaserOnTopic:
    """A probe latching the URDF on /robot_description, then a laser node waiting for it."""

    def __init__(self, text, params):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=30 + os.getpid() % 60)
        self.probe = rclpy.create_node('probe', context=self.ctx)
        self.probe.create_publisher(String, '/robot_description', latched_qos(1)).publish(
            String(data=text))
        # The tree robot_state_publisher would publish, under map at the origin.
        self.probe.create_publisher(TFMessage, '/tf_static', latched_qos(1)).publish(
            TFMessage(transforms=[static_transform('map', 'base_link', (0.0, 0.0, 0.0)),
                                  static_transform('base_link', 'laser_link', (0.0, 0.0, 0.3)),
                                  static_transform('laser_link', 'laser_frame', (0, 0, 0))]))
        self.tf = self.probe.create_publisher(TFMessage, '/tf', 10)
        self.scans = []
        self.probe.create_subscription(LaserScan, 'scan', self.scans.append,
                                       qos_profile_sensor_data)
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.probe)
        self.node = LaserScanNode(context=self.ctx, world=wall_world(), parameter_overrides=[
            Parameter(k, value=v) for k, v in params.items()])
        self.executor.add_node(self.node)

    def spin_until(self, done, timeout_s=60.0, turn=0.0):
        """Spin (publishing base_link -> mast turned by turn rad, stamped now) until done()."""
        end = time.monotonic() + timeout_s
        while not done() and time.monotonic() < end:
            mast = static_transform('base_link', 'mast', (0.0, 0.0, 0.3),
                                    self.node.get_clock().now().to_msg())
            w, x, y, z = rpy_quaternion(0.0, 0.0, turn)
            mast.transform.rotation.w, mast.transform.rotation.z = w, z
            self.tf.publish(TFMessage(transforms=[mast]))
            self.executor.spin_once(timeout_sec=0.02)
        return done()

    def close(self):
        """Destroy the nodes and the context."""
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.shutdown(context=self.ctx)


def test_a_laser_node_takes_its_sensor_and_body_from_robot_description_on_the_topic(tmp_path):
    _, text = _robot(tmp_path)
    rig = _LaserOnTopic(text, {'robot_description': 'topic', 'robot_sensor': 'front_laser',
                               'noise_enabled': False, 'weather': False})
    try:
        cfg = rig.node.config
        # the sensor's Gazebo values (robot_files.LASER_BLOCK): 361 rays over -pi/2 .. pi/2,
        # step pi / 360, range 0.12 .. 12 m, 10 Hz, in its gz_frame_id
        assert (cfg.frame_id, cfg.rate_hz, cfg.min_range_m, cfg.max_range_m) == (
            'laser_frame', 10.0, 0.12, 12.0)
        # bound: degrees of pi / 360 in float64: approx's default rel 1e-6
        assert cfg.resolution_deg == pytest.approx(0.5)
        assert cfg.noise_enabled is False       # a parameter given wins over the tags
        frames = {a.frame: a.obj.class_id for a in rig.node.world.actors}
        assert frames == {'laser_frame': SELF_CLASS, 'mast': SELF_CLASS}
        turn = math.radians(40.0)
        seen = len(rig.scans)
        assert rig.spin_until(lambda: len(rig.scans) > seen + 1, turn=turn), 'no scan'
        scan = rig.scans[-1]
        ang = scan.angle_min + np.arange(len(scan.ranges)) * scan.angle_increment
        r = np.asarray(scan.ranges)
        half = math.atan2(0.05, 0.45) - math.radians(0.6)   # the mast's face, a ray inside
        # the mast turned 40 deg on /tf: its face at 0.45 m in that direction
        moved = np.abs(ang - turn) < half
        assert moved.sum() >= 20
        # bound: float32 casts, 1e-4 m as the core test
        assert np.allclose(r[moved], 0.45 / np.cos(ang[moved] - turn), atol=1e-4)
        ahead = np.abs(ang) < half
        # bound: the wall at 4.9 m: f32_hit_bound_m at 5 m < 1e-4 m, the node's azimuths from
        # degrees < 1e-9 rad x 5 m; 1e-3 m holds them with margin
        assert np.allclose(r[ahead], 4.9 / np.cos(ang[ahead]), atol=1e-3)
    finally:
        rig.close()


def test_a_robots_imu_tags_set_base_sims_imu_topic_frame_rate_and_noise(rig):
    # What robot_nodes gives base_sim for an <imu> of update_rate 10 and stddev 0.02 rad/s
    # on a 50 Hz base: every 5th step, on its topic and in its frame, sigma^2 as covariance.
    # publish_clock: the steps are exactly 20 ms of simulated time (a wall timer's are not)
    r = rig(boxes_world([]), {'imu_topic': 'imu/data', 'imu_frame': 'imu_link',
                              'imu_rate_hz': 10.0, 'imu_gyro_stddev_rad_s': 0.02,
                              'imu_accel_stddev_m_s2': 0.1, 'publish_clock': True})
    got = []
    r.probe.create_subscription(Imu, 'imu/data', got.append, qos_profile_sensor_data)
    assert r.spin_until(lambda: len(got) >= 6), 'no imu/data'
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in got])
    # bound: stamps are whole 20 ms steps in integer ns; every 5th step, 0.1 s apart, up to
    # the float64 seconds of sec + nanosec (1e-9)
    assert np.all(np.abs(np.diff(stamps) - 0.1) <= 1e-6)
    assert {m.header.frame_id for m in got} == {'imu_link'}
    # bound: float64 0.02^2 and 0.1^2 carried as float64 exactly
    assert got[-1].angular_velocity_covariance[0] == pytest.approx(0.02 ** 2, rel=1e-12)
    assert got[-1].linear_acceleration_covariance[8] == pytest.approx(0.1 ** 2, rel=1e-12)


def test_a_prefixed_base_frame_puts_the_joints_under_it_and_a_mimic_follows(rig, tmp_path):
    # base_frame robot2/base_link (a fleet's copy): every frame of the description under
    # robot2/; a flag joint mimicking the mast with multiplier -1 turns by -0.7 rad with it
    flag = ('<link name="flag"/><joint name="flag_joint" type="revolute"><parent '
            'link="base_link"/><child link="flag"/><axis xyz="0 0 1"/><limit lower="-3" '
            'upper="3" effort="1" velocity="1"/><mimic joint="mast_joint" multiplier="-1"/>'
            '</joint>')
    path = tmp_path / 'bot.urdf'
    path.write_text(urdf(mast_joint='revolute', extra=flag))
    r = rig(boxes_world([]), {'robot_description': str(path), 'base_frame': 'robot2/base_link'})
    statics = []
    r.probe.create_subscription(TFMessage, '/tf_static', statics.append, latched_qos(1))
    pub = r.probe.create_publisher(JointState, 'joint_states', 10)

    def turned():
        pub.publish(JointState(name=['mast_joint'], position=[0.7]))
        return {t.child_frame_id: t for m in r.tf for t in m.transforms
                if t.child_frame_id in ('robot2/mast', 'robot2/flag')
                and abs(t.transform.rotation.z) > 0.1}
    assert r.spin_until(lambda: statics), 'no /tf_static'
    assert {(t.header.frame_id, t.child_frame_id) for t in statics[-1].transforms} == {
        ('robot2/base_link', 'robot2/laser_link'), ('robot2/laser_link', 'robot2/laser_frame')}
    assert r.spin_until(lambda: len(turned()) == 2), 'no mast and flag transforms'
    moved = turned()
    for child, angle in (('robot2/mast', 0.7), ('robot2/flag', -0.7)):
        t = moved[child]
        assert t.header.frame_id == 'robot2/base_link'
        # bound: float64 rotation matrix -> quaternion, a few ulps
        assert t.transform.rotation.z == pytest.approx(rpy_quaternion(0.0, 0.0, angle)[3],
                                                       abs=1e-12)


def test_a_copys_laser_node_draws_its_body_and_the_others_under_their_prefixes(tmp_path):
    path, _ = _robot(tmp_path)
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=30 + os.getpid() % 60)
    try:
        node = LaserScanNode(context=ctx, world=wall_world(), parameter_overrides=[
            Parameter(k, value=v) for k, v in {
                'robot_description': str(path), 'robot_sensor': 'front_laser',
                'frame_id': 'robot1/laser_frame', 'fleet_frames': ['robot2/base_link'],
                'fleet_body': 'robot', 'weather': False}.items()])
        frames = {a.frame: a.obj.class_id for a in node.world.actors}
        node.destroy_node()
        with pytest.raises(ConfigError, match='fleet_body.*box, or robot with a robot_desc'):
            LaserScanNode(context=ctx, world=wall_world(), parameter_overrides=[
                Parameter('fleet_body', value='robot')])
    finally:
        rclpy.shutdown(context=ctx)
    # its own body (class self) in its frame and its mast's; robot 2's rigid groups (the
    # links fixed to its root, the mast; the wheels have no geometry) on robot 2's frames,
    # class vehicle (10)
    assert frames == {'robot1/laser_frame': SELF_CLASS, 'robot1/mast': SELF_CLASS,
                      'robot2/base_link': 10, 'robot2/mast': 10}
