"""base_sim as Nav2 meets it (rclpy + DDS): REP 105 frames, either cmd_vel type, teleport, IMU."""

import math

from base_sim_rig import BaseRig, boxes_world, twist
from geometry_msgs.msg import Point, Pose, PoseWithCovarianceStamped, Twist, TwistStamped
import numpy as np
import pytest
import rclpy
from rclpy.qos import qos_profile_sensor_data
from ros_helpers import closing_factory, stamp_ns as _ns
from sensor_msgs.msg import Imu

from ubot_lidar_sim_msgs.srv import SetPose

TYPES = ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped')


@pytest.fixture
def rig():
    yield from closing_factory(BaseRig)


def _children(r):
    """Return {child frame: parent frame} of every /tf transform the probe received."""
    return {t.child_frame_id: t.header.frame_id for m in r.tf for t in m.transforms}


def test_the_tree_is_map_odom_base_footprint_base_link_with_the_body_height_above_it(rig):
    r = rig(boxes_world([]), {'base_height_m': 0.25, 'cmd_vel_stamped': False})
    assert r.spin_until(lambda: 'base_link' in _children(r))
    # REP 105 (map -> odom -> base) and REP 120 (base_footprint: the ground projection).
    assert _children(r) == {'odom': 'map', 'base_footprint': 'odom',
                            'base_link': 'base_footprint'}
    last = {t.child_frame_id: t for m in r.tf for t in m.transforms}
    # The ground (z 0) is found by a float32 ray cast from 50 m up: 50 x 2^-23 = 6e-6 m.
    assert abs(last['base_footprint'].transform.translation.z) <= 1e-5   # bound: see above
    assert last['base_link'].transform.translation.z == 0.25
    assert r.odom[-1].child_frame_id == 'base_link'
    assert abs(r.odom[-1].pose.pose.position.z - 0.25) <= 1e-5          # bound: the same


@pytest.fixture
def publisher(rig):
    """Yield make(rig, kind): a cmd_vel publisher of kind in a context of its own (as Nav2's)."""
    made = []

    def make(r, kind):
        ctx = rclpy.Context()
        rclpy.init(context=ctx, domain_id=r.ctx.get_domain_id())
        node = rclpy.create_node('controller', context=ctx)
        made.append((ctx, node))
        r.probe.destroy_publisher(r.cmd)    # the graph's only publisher is the controller's
        return node.create_publisher(kind, 'cmd_vel', 10)
    yield make
    for ctx, node in made:
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def _drive_2_m(r, pub, msg):
    """Publish msg (0.5 m/s) until /odom has gone 2 m; return True when it did."""
    def moved():
        pub.publish(msg)
        return r.odom[-1].pose.pose.position.x >= 2.0
    return r.spin_until(moved, 40.0)


@pytest.mark.parametrize('stamped', [False, True], ids=['Twist', 'TwistStamped'])
def test_a_publisher_of_either_type_drives_the_base_2_m_a_mismatch_warned_once(rig, publisher,
                                                                               stamped):
    # base_sim starts subscribing TwistStamped (the Kilted default); a Twist publisher is
    # followed after one warning that names both types.
    r = rig(boxes_world([]), {'publish_clock': True, 'real_time_factor': 4.0,
                              'cmd_vel_stamped': True})
    kind = TwistStamped if stamped else Twist
    pub = publisher(r, kind)
    msg = TwistStamped(twist=twist(0.5)) if stamped else twist(0.5)
    assert _drive_2_m(r, pub, msg), f'{kind.__name__} did not drive the base 2 m'
    assert r.node.cmd_vel.type_name == TYPES[stamped]
    if stamped:
        assert r.node.cmd_vel.mismatch == ''
    else:
        assert all(t in r.node.cmd_vel.mismatch for t in TYPES)
        assert 'cmd_vel type mismatch' in r.node.diagnostics().status[0].message


def test_without_follow_a_mismatch_is_warned_and_nothing_drives(rig, publisher):
    r = rig(boxes_world([]), {'cmd_vel_stamped': True, 'cmd_vel_follow_type': False})
    pub = publisher(r, Twist)

    def warned():
        pub.publish(twist(0.5))
        return r.node.cmd_vel.mismatch
    assert r.spin_until(warned, 10.0)
    assert 'cmd_vel_stamped to false' in r.node.cmd_vel.mismatch
    r.spin_for(0.5)
    assert r.odom[-1].pose.pose.position.x == 0.0 and r.node.base.counts['accepted'] == 0


def _forward(scan):
    """Return the range of the ray straight ahead (m)."""
    return scan.ranges[int(round((0.0 - scan.angle_min) / scan.angle_increment))]


def _odom_tf(r):
    """Return the newest (world -> odom x, odom -> base_footprint x) from /tf."""
    got = {t.child_frame_id: t.transform.translation.x for m in r.tf for t in m.transforms}
    return got.get('odom'), got.get('base_footprint')


def test_set_pose_and_initialpose_teleport_the_base_and_the_laser_sees_it_there(rig):
    # The wall's face is at x 4.9 m; the laser sits 0.3 m ahead of base_link.
    r = rig(boxes_world([(5.0, 0.0, 0.2, 20.0)]), {}, laser=True)
    client = r.probe.create_client(SetPose, 'base_sim/set_pose')
    assert r.spin_until(client.service_is_ready)

    def teleport(x, reset):
        future = client.call_async(SetPose.Request(pose=Pose(position=Point(x=x)),
                                                   reset_odometry=reset))
        assert r.spin_until(future.done)
        return future.result()

    def scan_after(t_ns):
        return r.spin_until(lambda: r.scans and _ns(r.scans[-1]) > t_ns, 20.0)

    res = teleport(2.0, True)
    assert res.success, res.message
    now = r.node.get_clock().now().nanoseconds
    assert scan_after(now) and r.spin_until(lambda: _odom_tf(r) == (2.0, 0.0))
    # Float32 ranges, noise off: 1 cm holds (as test_base_sim.py).
    assert abs(_forward(r.scans[-1]) - (4.9 - 2.0 - 0.3)) <= 0.01       # bound: see above
    # /initialpose: odometry kept (it did not move), world -> odom jumps by the teleport.
    pub = r.probe.create_publisher(PoseWithCovarianceStamped, '/initialpose', 10)
    msg = PoseWithCovarianceStamped()
    msg.header.frame_id, msg.pose.pose.position.x, msg.pose.pose.orientation.w = 'map', 3.0, 1.0
    pub.publish(msg)
    assert r.spin_until(lambda: len(r.node.teleports) == 2)
    now = r.node.get_clock().now().nanoseconds
    assert scan_after(now) and r.spin_until(lambda: _odom_tf(r) == (3.0, 0.0))
    assert abs(_forward(r.scans[-1]) - (4.9 - 3.0 - 0.3)) <= 0.01       # bound: the same
    # Into the wall: refused, the base stays.
    res = teleport(5.0, False)
    assert not res.success and 'overlaps an object' in res.message
    assert r.node.base.pose[0] == 3.0


def test_a_recorded_imu_at_rest_spreads_as_its_covariance_and_odom_carries_the_drift(rig):
    r = rig(boxes_world([]), {'publish_clock': True, 'real_time_factor': 10.0,
                              'odom_noise_m_per_m': 0.05, 'odom_noise_rad_per_rad': 0.05})
    got = []
    r.probe.create_subscription(Imu, 'imu', got.append, qos_profile_sensor_data)
    n = 400
    assert r.spin_until(lambda: len(got) >= n + 5, 60.0)
    acc = np.array([[m.linear_acceleration.x, m.linear_acceleration.y,
                     m.linear_acceleration.z] for m in got[5:n + 5]])
    var = got[-1].linear_acceleration_covariance[0]
    # Sample variance of 400 normal draws: relative sd sqrt(2 / 399) = 7 %; 5 of them bound it.
    assert np.all(np.abs(acc.var(axis=0, ddof=1) / var - 1.0) <= 5.0 * math.sqrt(2.0 / (n - 1)))
    assert abs(acc[:, 2].mean() - 9.80665) <= 5.0 * math.sqrt(var / n)    # bound: 5 sigma

    def drove():
        r.cmd.publish(twist(1.0, wz=0.3))
        return r.odom[-1].pose.pose.position.x > 1.0
    assert r.spin_until(drove, 30.0)
    cov = np.array(r.odom[-1].pose.covariance).reshape(6, 6)
    assert cov[0, 0] > 0.0 and cov[1, 1] > 0.0 and cov[5, 5] > 0.0
    assert cov[2, 2] == cov[3, 3] == cov[4, 4] == 0.0
