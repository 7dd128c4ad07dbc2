"""
sim.launch.py robots:=2 on real DDS: own cmd_vel each, each robot's cloud shows the other.

The nodes are those sim.launch.py starts for robots:=2 (pipeline/sim_fleet.py robot_nodes, which
the launch file's base_sims and sensors.launch.py fleet:=sim take their parameters from), each an
executable from install/ in its robotK namespace over its config/<node>.yaml, on the flat world
with the LiDAR geometric and without noise (so a point's position is exact to float32).
"""

import math
import os
from pathlib import Path
import subprocess

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import PointCloud2

from ubot_lidar_sim.pipeline.launch_args import distro_cmd_vel_stamped
from ubot_lidar_sim.pipeline.sim_fleet import INITIALPOSE_REMAP, robot_nodes, start_poses
from ubot_lidar_sim.ros.conversions import pointcloud2_dtype
import yaml

ROOT = Path(__file__).resolve().parents[2]
# scripts/env.sh sets UBOT_INSTALL to the install directory of the build it activates.
LIB = Path(os.environ.get('UBOT_INSTALL', ROOT / 'install'), 'ubot_lidar_sim', 'lib',
           'ubot_lidar_sim')
TEST = {'world_file': 'flat', 'noise_enabled': False, 'weather': False, 'model': 'geometric'}
ONLY = {'base_sim': ('world_file',), 'laser_scan': ('world_file', 'noise_enabled', 'weather'),
        'terrain_sensor': ('world_file',)}
STAMPED = distro_cmd_vel_stamped(os.environ.get('ROS_DISTRO'))
COMMANDS = {1: (0.5, 0.0), 2: (0.0, 0.5)}       # robot: (vx m/s, wz rad/s)
FLOAT32 = 1e-4      # m: a float32 coordinate of a few metres, and the geometric caster's ray t
N = 2


def _start(tmp_path, domain):
    """Start robot k's nodes as sim.launch.py robots:=2 would; return the processes."""
    poses = start_poses(N)
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1', RCUTILS_LOGGING_BUFFERED_STREAM='0')
    procs = []
    for k in range(1, N + 1):
        for exe, name, ns, params in robot_nodes(k, N, poses[k - 1], True):
            own = {p: v for p, v in TEST.items() if p in ONLY.get(name, TEST)}
            if name == 'base_sim':
                own['cmd_vel_stamped'] = STAMPED
            over = tmp_path / f'{ns}_{name}.yaml'
            over.write_text(yaml.safe_dump({f'/{ns}/{name}': {'ros__parameters': {
                **params, **own}}}))
            argv = [str(LIB / exe), '--ros-args', '-r', f'__ns:=/{ns}', '--params-file',
                    str(ROOT / 'config' / f'{name}.yaml'), '--params-file', str(over)]
            if name == 'base_sim':
                argv += ['-r', ':='.join(INITIALPOSE_REMAP)]
            log = open(tmp_path / f'{ns}_{name}.log', 'w')
            procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env))
            log.close()
    return procs


def _cloud_xyz(msg):
    """Return the cloud's points (sensor frame) as an (n, 3) float64 array, m."""
    pts = np.frombuffer(bytes(msg.data), dtype=pointcloud2_dtype(msg))
    return np.stack([pts['x'], pts['y'], pts['z']], axis=1).astype(np.float64)


def _on_body(xyz, lidar_xy, other_xy):
    """Return how many points (sensor frame of a yaw-0 LiDAR at 1.2 m) lie in the other's body."""
    body = np.asarray(other_xy) - np.asarray(lidar_xy)
    half, height = 0.3, 0.5         # sim_fleet's body: the footprint radius, body_height_m
    inside = (np.all(np.abs(xyz[:, :2] - body) <= half + FLOAT32, axis=1)
              & (xyz[:, 2] + 1.2 > 0.05) & (xyz[:, 2] + 1.2 <= height + FLOAT32))
    return int(inside.sum())


def _yaw(msg):
    q = msg.pose.pose.orientation
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


@pytest.mark.ros
def test_two_robots_drive_from_their_own_cmd_vel_and_each_cloud_shows_the_other(
        context, tmp_path):
    procs = _start(tmp_path, context.get_domain_id())
    probe = rclpy.create_node('fleet_probe', context=context)
    ex = SingleThreadedExecutor(context=context)
    ex.add_node(probe)
    clouds, odoms, cmd = {1: [], 2: []}, {1: [], 2: []}, {}
    for k in (1, 2):
        probe.create_subscription(PointCloud2, f'/robot{k}/points', clouds[k].append,
                                  qos_profile_sensor_data)
        probe.create_subscription(Odometry, f'/robot{k}/odom', odoms[k].append, 100)
        cmd[k] = probe.create_publisher(TwistStamped if STAMPED else Twist,
                                        f'/robot{k}/cmd_vel', 10)

    def spin_until(done, timeout_s):
        end = probe.get_clock().now().nanoseconds + int(timeout_s * 1e9)
        while not done() and probe.get_clock().now().nanoseconds < end:
            if any(p.poll() is not None for p in procs):
                break
            ex.spin_once(timeout_sec=0.05)
        return done()

    def drive():
        for k, (vx, wz) in COMMANDS.items():
            twist = Twist()
            twist.linear.x, twist.angular.z = vx, wz
            cmd[k].publish(TwistStamped(twist=twist) if STAMPED else twist)
    try:
        # Start-up: eight processes import numba and rclpy on shared cores.
        assert spin_until(lambda: clouds[1] and clouds[2], 180.0), \
            [(p.args[0], p.poll()) for p in procs]
        assert probe.count_publishers('/clock') == 1
        # Node names reach the probe's graph by discovery, which may lag the first clouds.
        wanted = {f'/robot{k}/{n}' for k in (1, 2) for n in
                  ('base_sim', 'lidar_3d', 'laser_scan', 'terrain_sensor')}

        def names():
            return {f'{ns}/{n}' for n, ns in probe.get_node_names_and_namespaces()}
        assert spin_until(lambda: wanted <= names(), 30.0), wanted - names()
        # Still at their start poses (no cmd_vel yet): robot 1 at (0, 0), robot 2 4 m left. A
        # sweep before the other's first /tf (the other base starting) has no body in it.
        lidar = {1: (0.0, 0.0), 2: (0.0, 4.0)}
        checked, seen = {1: 0, 2: 0}, {}

        def both_seen():
            for k in (1, 2):    # the clouds heard since the last call: a few
                for cloud in clouds[k][checked[k]:]:
                    if k not in seen and _on_body(_cloud_xyz(cloud), lidar[k], lidar[3 - k]):
                        seen[k] = cloud
                checked[k] = len(clouds[k])
            return len(seen) == 2
        assert spin_until(both_seen, 120.0)
        assert seen[1].header.frame_id == 'robot1/lidar_3d'
        assert seen[2].header.frame_id == 'robot2/lidar_3d'

        def moved():
            drive()
            return (odoms[1] and odoms[1][-1].pose.pose.position.x >= 0.5
                    and odoms[2] and _yaw(odoms[2][-1]) >= 0.5)
        assert spin_until(moved, 120.0)
        for k, (vx, wz) in COMMANDS.items():
            pose = odoms[k][-1].pose.pose.position
            assert odoms[k][-1].header.frame_id == f'robot{k}/odom'
            assert odoms[k][-1].child_frame_id == f'robot{k}/base_link'
            v = [o.twist.twist.linear.x for o in odoms[k]]
            w = [o.twist.twist.angular.z for o in odoms[k]]
            # Each base ramps towards its own command, never beyond it, never the other's. bound:
            # 1e-9 is rounding of a few hundred ramp increments; a zero command component stays
            # exactly zero (no drift configured), so does the pose it would move.
            assert max(v) <= vx + 1e-9 and min(v) >= -1e-9 and (max(v) > 0) == (vx > 0)
            assert max(w) <= wz + 1e-9 and min(w) >= -1e-9 and (max(w) > 0) == (wz > 0)
            if k == 1:      # straight ahead along its odom x
                assert abs(pose.y) < 1e-9 and abs(_yaw(odoms[k][-1])) < 1e-9
            else:           # turning on the spot
                assert math.hypot(pose.x, pose.y) < 1e-9
    finally:
        ex.shutdown()
        probe.destroy_node()
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
