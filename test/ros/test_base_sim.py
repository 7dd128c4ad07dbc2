"""base_sim over real rclpy + DDS: odom and /tf from cmd_vel, the wall, bad commands, clocks."""

import math
import os
import shutil
import subprocess
import time

from base_sim_rig import BaseRig, boxes_world, twist
from geometry_msgs.msg import TwistStamped
import numpy as np
import pytest
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from ros_helpers import closing_factory, static_transform
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.base_sim_node import BaseSimNode
from ubot_lidar_sim.ros.conversions import pointcloud2_dtype

# The wall of ros_helpers.wall_world: face at x = 4.9 m (a 0.2 m box centred on x = 5).
WALL = [(5.0, 0.0, 0.2, 20.0)]


def _forward_range(scan):
    i = int(round((0.0 - scan.angle_min) / scan.angle_increment))
    return scan.ranges[i]


def _stamp_s(msg):
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


@pytest.fixture
def rig():
    yield from closing_factory(BaseRig)


def test_half_metre_per_second_for_4_s_gives_2_m_of_odom_agreeing_tf_and_a_moved_scan(rig):
    r = rig(boxes_world(WALL), {'max_linear_accel_m_s2': 1.0}, laser=True)
    assert r.spin_until(lambda: len(r.scans) >= 2, 60.0), 'no scan'
    before = _forward_range(r.scans[-1])
    t_first = time.monotonic()
    while time.monotonic() - t_first < 4.0:
        r.cmd.publish(twist(0.5))
        r.spin_until(lambda: False, 0.05)
    t_zero = time.monotonic()
    r.cmd.publish(twist(0.0))
    r.spin_for(1.5)                     # brakes in 0.5 s; then the scans see it standing
    x = r.odom[-1].pose.pose.position.x
    # Ramp-up loses v^2 / 2a, braking gains it back: x = 0.5 m/s x the command span, up to a
    # 20 ms step and 230 ms of delivery latency between start and stop on 2 busy cores.
    assert abs(x - 0.5 * (t_zero - t_first)) <= 0.5 * 0.25     # bound: see above
    assert abs(x - 2.0) <= 0.5 * (t_zero - t_first - 4.0) + 0.5 * 0.25   # bound: the same
    last = r.odom[-1]

    def tf():
        return [t for m in r.tf for t in m.transforms
                if t.child_frame_id == 'base_footprint' and t.header.stamp == last.header.stamp]
    assert r.spin_until(tf), 'no /tf at the stamp of the last odom'
    assert tf()[-1].transform.translation.x == x
    assert tf()[-1].header.frame_id == 'odom'       # REP 105: odom -> base_footprint
    stopped = [s for s in r.scans if _stamp_s(s) > _stamp_s(last) - 0.5]
    assert stopped, 'no scan after the stop'
    # Range noise off; float32 hits are good to 1e-5 m: 1 cm holds.
    assert abs(before - 4.6) <= 0.01                         # bound: see above
    assert abs(_forward_range(stopped[-1]) - (4.6 - x)) <= 0.01   # bound: see above


def test_driving_into_a_wall_stops_at_the_footprint_never_inside_and_says_so(rig):
    r = rig(boxes_world(WALL), {'publish_clock': True, 'real_time_factor': 5.0,
                                'footprint_radius_m': 0.3, 'contact_margin_m': 0.02})

    def drive():
        r.cmd.publish(twist(1.0))
        return r.collision and r.collision[-1].data
    assert r.spin_until(drive, 30.0), 'no contact reported'
    r.spin_for(0.5)
    x = r.odom[-1].pose.pose.position.x
    reach = 0.3 / math.cos(math.pi / 16)      # the 16-gon around the 0.3 m circle
    assert 4.9 - 0.03 <= x + reach <= 4.9     # bound: at the 2 cm margin, 1 cm short at most
    assert r.node.base.counts['contacts'] == 1
    status = r.node.diagnostics().status[0]
    assert 'in contact' in status.message
    assert {v.key: v.value for v in status.values}['contact'] == 'true'


def test_nan_inf_and_absurd_commands_are_refused_counted_and_never_integrated(rig):
    r = rig(boxes_world([]), {})
    for bad in (twist(float('nan')), twist(0.0, wz=float('inf')), twist(2.0e3)):
        r.cmd.publish(bad)
    assert r.spin_until(lambda: r.node.base.counts['refused'] == 3)
    r.spin_for(0.3)
    assert r.odom[-1].pose.pose.position.x == 0.0
    assert 'cmd_vel refused' in r.node.diagnostics().status[0].message


def test_twist_stamped_with_cmd_vel_stamped_moves_the_base(rig):
    r = rig(boxes_world([]), {'cmd_vel_stamped': True})
    msg = TwistStamped()
    msg.twist = twist(0.5)

    def moved():
        r.cmd.publish(msg)
        return r.odom[-1].pose.pose.position.x > 0.1
    assert r.spin_until(moved, 10.0)


def test_start_inside_an_object_is_refused_in_one_line(context):
    with pytest.raises(ConfigError, match='initial_pose') as err:
        BaseSimNode(context=context, world=boxes_world(WALL),
                    parameter_overrides=[Parameter('initial_pose', value=[5.0, 0.0, 0.0])])
    assert '\n' not in str(err.value)


def test_another_clock_publisher_is_reported_not_followed(rig):
    r = rig(boxes_world([]), {'publish_clock': True, 'real_time_factor': 1.0})
    foreign = r.probe.create_publisher(Clock, '/clock', 10)
    foreign.publish(Clock())
    assert r.spin_until(lambda: r.node.counts['foreign_clock'] > 0, 10.0)
    assert 'foreign /clock' in r.node.diagnostics().status[0].message


def test_with_localization_frame_world_to_map_keeps_the_truth_under_the_localisers_map(rig):
    # A localiser says map -> odom = (1, 0, 0): base_sim publishes world -> map = (-1, 0, 0),
    # so that world -> map -> odom is the truth (identity without drift, the base at rest).
    r = rig(boxes_world([], frame='world'), {'world_frame': 'world', 'localization_frame': 'map'})
    t = static_transform('map', 'odom', (1.0, 0.0, 0.0))
    pub = r.probe.create_publisher(TFMessage, '/tf', 10)

    def seen():
        pub.publish(TFMessage(transforms=[t]))
        return any(x.header.frame_id == 'world' and x.child_frame_id == 'map'
                   and x.transform.translation.x == -1.0 for m in r.tf for x in m.transforms)
    assert r.spin_until(seen, 10.0)
    assert not any(x.header.frame_id == 'world' and x.child_frame_id == 'odom'
                   for m in r.tf for x in m.transforms)


def test_a_speed_limit_set_while_running_caps_the_base(rig):
    r = rig(boxes_world([]), {'max_linear_accel_m_s2': 100.0})
    client = r.probe.create_client(SetParameters, 'base_sim/set_parameters')
    assert r.spin_until(client.service_is_ready)
    future = client.call_async(SetParameters.Request(parameters=[
        Parameter('max_linear_m_s', value=0.2).to_parameter_msg()]))
    assert r.spin_until(future.done) and future.result().results[0].successful

    def capped():
        r.cmd.publish(twist(1.0))
        return r.odom[-1].twist.twist.linear.x > 0.0
    assert r.spin_until(capped)
    r.cmd.publish(twist(1.0))
    r.spin_for(0.2)     # within cmd_vel_timeout_s (0.5 s) of the last command
    assert r.odom[-1].twist.twist.linear.x == 0.2   # the accel reaches it in one step


def test_on_a_10_deg_ramp_odom_to_base_link_pitches_nose_up_by_10_deg(rig):
    ramp = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [40, 40], 'material': 'grass',
         'pose': {'xyz': [0, 0, 0], 'rpy_deg': [0, -10, 0]}}]})
    r = rig(ramp, {})
    q = r.odom[-1].pose.pose.orientation
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (q.w * q.y - q.z * q.x))))
    # float32 ground hits 1 m apart: the fitted slope is good to 1e-6 rad.
    assert abs(pitch - math.radians(-10.0)) <= 1e-6      # bound: see above

    def base_tf():
        return [t for m in r.tf for t in m.transforms if t.child_frame_id == 'base_link']
    assert r.spin_until(base_tf)
    assert base_tf()[-1].transform.rotation.y == q.y       # the same pose as odom's


def test_a_clock_jump_is_reported_and_not_integrated(rig):
    r = rig(boxes_world([]), {'use_sim_time': True, 'cmd_vel_timeout_s': 60.0},
            clock_s=10.0)
    r.cmd.publish(twist(0.5))
    for k in range(1, 60):          # 10 ms steps of /clock while the base drives at 0.5 m/s
        r.set_clock(10.0 + 0.01 * k)
        r.spin_for(0.01)
    x = r.odom[-1].pose.pose.position.x
    r.set_clock(110.0)              # a jump of 100 s: 50 m at 0.5 m/s, were it followed
    assert r.spin_until(lambda: r.node.counts['clock_jumps'] == 1)
    r.set_clock(110.01)
    r.spin_for(0.2)
    assert r.odom[-1].pose.pose.position.x - x < 0.1
    assert 'clock jumped' in r.node.diagnostics().status[0].message


def test_the_executable_refuses_a_start_inside_an_object_in_one_line_exit_2(tmp_path):
    world = tmp_path / 'wall.yaml'
    world.write_text('frame: map\nobjects:\n'
                     '  - {name: wall, type: box, size_m: [0.2, 20, 6], '
                     'pose: {xyz: [5, 0, 0]}, material: concrete}\n')
    exe = shutil.which('base_sim_node')
    assert exe, 'base_sim_node not on PATH (make build; source scripts/env.sh)'
    proc = subprocess.run([exe, '--ros-args', '-p', f'world_file:={world}',
                           '-p', 'initial_pose:=[5.0, 0.0, 0.0]'],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, 'ROS_DOMAIN_ID': str(30 + os.getpid() % 60)})
    assert proc.returncode == 2
    lines = [ln for ln in (proc.stdout + proc.stderr).splitlines() if 'initial_pose' in ln]
    assert len(lines) == 1 and 'cannot start' in lines[0]


def _wall_x(cloud):
    """Return the median x (lidar frame) of the cloud's points on the wall ahead."""
    pts = np.frombuffer(bytes(cloud.data), dtype=pointcloud2_dtype(cloud))
    on_wall = (pts['x'] > 0.5) & (np.abs(pts['y']) < 0.5) & (pts['z'] > -1.0)
    assert on_wall.any(), 'no point on the wall'
    return float(np.median(pts['x'][on_wall]))


def test_the_lidar_cloud_moves_with_the_base_on_simulated_time(rig):
    r = rig(boxes_world(WALL), {'publish_clock': True, 'real_time_factor': 2.0,
                                'use_sim_time': True}, lidar_params={'use_sim_time': True})
    assert r.spin_until(lambda: r.clouds, 60.0), 'no cloud'
    before = _wall_x(r.clouds[-1])

    def drove_1_m():
        r.cmd.publish(twist(0.5))
        return r.odom[-1].pose.pose.position.x >= 1.0
    assert r.spin_until(drove_1_m, 30.0)
    r.cmd.publish(twist(0.0))
    assert r.spin_until(lambda: r.odom[-1].twist.twist.linear.x == 0.0)
    stopped = _stamp_s(r.odom[-1])
    assert r.spin_until(lambda: _stamp_s(r.clouds[-1]) > stopped, 30.0)
    x = r.odom[-1].pose.pose.position.x
    # A plane at x = 4.9 m seen from 1.2 m up: float32 points are good to 1e-5 m at 5 m.
    assert abs(before - 4.9) <= 1e-4                       # bound: see above
    assert abs(_wall_x(r.clouds[-1]) - (4.9 - x)) <= 1e-4   # bound: see above


def test_a_command_stream_that_stops_stops_the_base(rig):
    r = rig(boxes_world([]), {'publish_clock': True, 'real_time_factor': 2.0,
                              'cmd_vel_timeout_s': 0.5, 'max_linear_accel_m_s2': 1.0})

    def moving():
        r.cmd.publish(twist(0.5))
        return r.odom[-1].twist.twist.linear.x >= 0.5
    assert r.spin_until(moving, 20.0)
    last_cmd_s = _stamp_s(r.odom[-1])      # simulated time of the last command's step
    # No command any more: after the 0.5 s timeout the base brakes at 1 m/s^2 (0.5 s).
    assert r.spin_until(lambda: r.odom[-1].twist.twist.linear.x == 0.0
                        and _stamp_s(r.odom[-1]) > last_cmd_s + 1.0, 20.0)
    x = r.odom[-1].pose.pose.position.x
    r.spin_for(1.0)
    assert r.odom[-1].pose.pose.position.x == x


def test_odometry_drift_is_absorbed_by_world_to_odom(rig):
    r = rig(boxes_world([]), {'publish_clock': True, 'real_time_factor': 4.0,
                              'odom_noise_m_per_m': 0.05, 'odom_noise_rad_per_rad': 0.05})

    def drove():
        r.cmd.publish(twist(1.0, wz=0.3))
        return r.node.base.pose[0] > 2.0
    assert r.spin_until(drove, 30.0)
    r.cmd.publish(twist(0.0))
    assert r.spin_until(lambda: r.odom[-1].twist.twist.linear.x == 0.0
                        and r.odom[-1].twist.twist.angular.z == 0.0, 20.0)
    r.spin_for(0.2)                 # standing: the truth no longer changes
    last = r.odom[-1]

    def pair():
        got = {t.child_frame_id: t for m in r.tf for t in m.transforms
               if t.header.stamp == last.header.stamp}
        return got if {'odom', 'base_footprint'} <= set(got) else None
    assert r.spin_until(pair)
    w, b = pair()['odom'].transform, pair()['base_footprint'].transform
    ox, oy = b.translation.x, b.translation.y
    wyaw = 2.0 * math.atan2(w.rotation.z, w.rotation.w)
    x = w.translation.x + math.cos(wyaw) * ox - math.sin(wyaw) * oy
    y = w.translation.y + math.sin(wyaw) * ox + math.cos(wyaw) * oy
    tx, ty = r.node.base.pose[:2]
    assert math.hypot(ox - tx, oy - ty) > 1e-6      # the odometry drifted from the truth
    # world -> odom -> base_link is the truth: float64 products of O(10) terms.
    assert math.hypot(x - tx, y - ty) <= 1e-9       # bound: see above
