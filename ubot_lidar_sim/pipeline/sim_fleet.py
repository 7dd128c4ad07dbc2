"""
A fleet of base_sims (``sim.launch.py robots:=N``, no rclpy): robot k's base and sensors.

The demo fleet's convention (pipeline/fleet.py): with n > 1 robot k's nodes are in namespace
robotK (robot 1 too) and its frames under robotK/ (robotK/odom, robotK/base_footprint,
robotK/base_link, robotK/lidar_3d, robotK/laser); the world frame is shared. Each robot has its
own cmd_vel, odom, scan, points and terrain in its namespace; /tf, /tf_static, /clock and
/diagnostics are shared, and /initialpose is remapped to robotK/initialpose (INITIALPOSE_REMAP).

One /clock: robot 1's base_sim owns simulated time (publish_clock with use_sim_time) and waits
for the sensors of every robot (its sync_topics: each robot's scan, points and terrain); the
other bases step on that /clock (publish_clock false: a timer on the node's clock, as a base
beside Gazebo's clock does). With use_sim_time false every node runs on the wall clock.

Each robot's sensors draw the other robots' bodies as the demo fleet's do (``fleet_frames``:
an actor on each other robot's base_footprint, a box of the base's footprint diameter and body
height standing on the ground). The bases themselves do not collide with each other: each
base_sim's collision sees the static world only (docs/nav2.md, "Fleets").

With a robot description (``robot:=FILE robots:=N``) the robots are N copies of it: robot k's
base_sim takes the description's root link under robotK/ as base_frame (so that it publishes
every frame of the description under robotK/, ros/robot_state.py), its sensor nodes run in
robotK with frame ids under robotK/, and each draws the other copies as the description's
body (``fleet_body: robot``, core/robot/fleet_body.py). Robot 1's base_sim waits for every
copy's sensor topics; a sensor whose topic is absolute (one topic for all copies) is refused.

Start poses: robot 1 at initial_pose, robot k SPACING_M * (k - 1) to its left (the same
heading), unless every pose is given.
"""

import dataclasses
import math

from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.core.robot.description import RobotError
from ubot_lidar_sim.pipeline.fleet import check_robots, robot_namespace, robot_parameters

SPACING_M = 4.0     # a VLP-16 at 1.2 m sees a 0.5 m body from 2.6 m on (its -15 deg ring)
SENSOR_TOPICS = ('scan', 'points', 'terrain')   # config/base_sim.yaml's sync_topics, per robot
SENSORS = ('lidar_3d', 'laser_scan', 'terrain_sensor')
_BASE = BaseSimConfig()    # the body the other robots' sensors draw: config defaults
ROBOT_FRAMES = ('base_frame', 'lidar_frame', 'laser_frame', 'imu_frame')   # a description's
INITIALPOSE_REMAP = ('/initialpose', 'initialpose')     # a fleet base: its namespace's


def start_poses(n, first=(0.0, 0.0, 0.0), spacing_m=SPACING_M):
    """Return n start poses [x (m), y (m), yaw (deg)]: robot k (k - 1) spacing_m left of first."""
    check_robots(n)
    x, y, yaw_deg = (float(v) for v in first)
    left = (-math.sin(math.radians(yaw_deg)), math.cos(math.radians(yaw_deg)))
    return [[x + k * spacing_m * left[0], y + k * spacing_m * left[1], yaw_deg]
            for k in range(n)]


def base_parameters(k, n, pose, sim_time):
    """
    Return base_sim's parameters of robot k (1..n) at pose [x, y, yaw_deg] (module doc).

    pose None (one robot, no initial_pose given): config/base_sim.yaml's or params_file's.
    """
    check_robots(n)
    values = {'use_sim_time': bool(sim_time), 'publish_clock': bool(sim_time) and k == 1}
    if pose is not None:
        values['initial_pose'] = [float(v) for v in pose]
    if n == 1:
        return values
    ns = robot_namespace(k, n)
    values.update({'odom_frame': f'{ns}/odom', 'base_frame': f'{ns}/base_link',
                   'footprint_frame': f'{ns}/base_footprint', 'lidar_frame': f'{ns}/lidar_3d',
                   'laser_frame': f'{ns}/laser'})
    if k == 1:
        values['sync_topics'] = [f'/{robot_namespace(j, n)}/{t}' for j in range(1, n + 1)
                                 for t in SENSOR_TOPICS]
    return values


def sensor_parameters(k, n, base=_BASE):
    """Return {sensor node name: parameters} of robot k (1..n, n > 1) beside base_sims."""
    demo = robot_parameters(k, n)
    others = [f'robot{j}/base_footprint' for j in range(1, n + 1) if j != k]
    diameter = 2.0 * base.footprint_radius_m
    body = {'fleet_frames': others, 'fleet_base_height_m': 0.0,
            'fleet_body_size_m': [diameter, diameter, base.body_height_m]}
    return {name: {**demo[name], **body} for name in SENSORS}


def robot_nodes(k, n, pose, sim_time):
    """Return [(executable, node name, namespace, parameters)] of robot k, as sim.launch.py."""
    ns = robot_namespace(k, n)
    sensors = sensor_parameters(k, n) if n > 1 else dict.fromkeys(SENSORS, {})
    return [('base_sim_node', 'base_sim', ns, base_parameters(k, n, pose, sim_time))] + [
        (f'{name}_node', name, ns, {**sensors[name], 'use_sim_time': bool(sim_time)})
        for name in SENSORS]


def _topics(robot):
    """Return the sensor topics of a RobotLaunch (pipeline/robot_nodes.py), all relative."""
    topics = [topic for node in robot.nodes for _, topic in node.remappings]
    absolute = [t for t in topics if t.startswith('/')]
    if absolute:
        raise RobotError(f"robots:=N with robot:=FILE: topic '{absolute[0]}' is absolute, one "
                         'topic for every copy (allowed: relative sensor topics, each in its '
                         "robot's namespace)")
    return topics


def robot_base_parameters(k, n, robot, pose, sim_time):
    """Return base_sim's parameters of copy k (1..n) of a RobotLaunch's robot (module doc)."""
    values = base_parameters(k, n, pose, sim_time)
    if n == 1:
        return values
    ns = robot_namespace(k, n)
    values.update({key: f'{ns}/{robot.base[key]}' for key in ROBOT_FRAMES if key in robot.base})
    if k == 1:
        values['sync_topics'] = [f'/{robot_namespace(j, n)}/{t}' for j in range(1, n + 1)
                                 for t in _topics(robot)]
    return values


def robot_sensor_nodes(k, n, robot):
    """Return the RobotNodes of copy k (1..n) of a RobotLaunch's robot: frames under robotK/."""
    if n == 1:
        return list(robot.nodes)
    _topics(robot)
    ns, root = robot_namespace(k, n), robot.base['base_frame']
    others = [f'{robot_namespace(j, n)}/{root}' for j in range(1, n + 1) if j != k]
    out = []
    for node in robot.nodes:
        params = {**node.parameters, 'frame_id': f"{ns}/{node.parameters['frame_id']}",
                  'fleet_frames': others, 'fleet_body': 'robot'}
        if 'sensor_id' in params:
            params['sensor_id'] = f"{ns}/{params['sensor_id']}"
        out.append(dataclasses.replace(node, parameters=params))
    return out
