"""
The nodes that stand in for a robot description's Gazebo (sim.launch.py ``robot:=FILE``).

No rclpy: plain values the launch file turns into launch_ros Nodes, as pipeline/fleet.py does.
Each range sensor becomes a laser_scan_node or lidar_3d_node named after it, its Gazebo values
(core/robot/mapping.py) as parameters, its output remapped to the sensor's topic. base_sim gets
the drive plugin's kinematics and limits, the root link as base_frame, the footprint of the root
link's collision geometry (its convex hull seen from above), the description itself (base_sim
publishes its joints on /tf_static and /tf and its wheels' /joint_states) and the first IMU.
"""

from dataclasses import dataclass, field
import json
import re

import numpy as np
from scipy.spatial import ConvexHull

from ubot_lidar_sim.core.robot.body import link_mesh
from ubot_lidar_sim.core.robot.load import load_robot, parse_args
from ubot_lidar_sim.core.robot.mapping import gazebo_params, imu_params, LASER, sensor_kind
from ubot_lidar_sim.core.robot.tree import link_poses
from ubot_lidar_sim.output.boxes import rpy_of

EXECUTABLE = {LASER: 'laser_scan_node', 'lidar_3d': 'lidar_3d_node'}
OUTPUT = {LASER: 'scan', 'lidar_3d': 'points'}


@dataclass
class RobotNode:
    """One sensor node: executable, node name, parameters and remappings."""

    executable: str
    name: str
    parameters: dict
    remappings: list


@dataclass
class RobotLaunch:
    """The sensor nodes and base_sim's parameters of one robot description."""

    nodes: list = field(default_factory=list)
    base: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def node_name(sensor_name):
    """Return a ROS node name from a sensor name (letters, digits and _; not a digit first)."""
    name = re.sub(r'[^A-Za-z0-9_]', '_', sensor_name)
    return name if name[:1].isalpha() else f's_{name}'


def _mount(matrix):
    """Return x y z (m) roll pitch yaw (deg) of a 4 x 4 transform."""
    rpy = np.degrees(rpy_of(matrix[:3, :3]))
    return [float(v) for v in matrix[:3, 3]] + [float(v) for v in rpy]


def footprint(description, use='collision'):
    """Return Nav2's footprint string of the root link's geometry seen from above, or ''."""
    v, t = link_mesh(description.links.get(description.root, []), use)
    if len(t) < 1 or np.ptp(v[:, 0]) <= 0 or np.ptp(v[:, 1]) <= 0:
        return ''
    xy = v[:, :2]
    hull = xy[ConvexHull(xy).vertices]
    return json.dumps([[round(float(x), 4), round(float(y), 4)] for x, y in hull])


def robot_launch(robot, args_text='', model_paths=(), overlay=None):
    """Return the RobotLaunch of a robot file (RobotError / ConfigError: one line)."""
    desc = load_robot(robot, parse_args(args_text), model_paths)
    model = link_poses(desc)
    root_from_model = np.linalg.inv(model[desc.root])
    poses = {name: root_from_model @ pose for name, pose in model.items()}
    out = RobotLaunch()
    mounts = {}
    for s in desc.sensors:
        kind = sensor_kind(s)
        params = {**gazebo_params(s), 'robot_description': str(robot),
                  'robot_args': args_text, **(overlay or {}).get(s.name, {})}
        out.nodes.append(RobotNode(EXECUTABLE[kind], node_name(s.name), params,
                                   [(OUTPUT[kind], s.topic)]))
        frame = poses.get(s.frame_id, poses[s.link] @ s.link_from_sensor)
        mounts.setdefault(kind, (s.frame_id, _mount(frame)))
    if desc.drive is not None:
        out.base.update(desc.drive.values)
        out.notes += [n.line() for n in desc.drive.notes]
    out.base['base_frame'] = desc.root
    shape = footprint(desc)
    if shape:
        out.base['footprint_polygon'] = shape
    for kind, key in ((LASER, 'laser'), ('lidar_3d', 'lidar')):
        if kind in mounts:
            out.base[f'{key}_frame'], out.base[f'{key}_pose'] = mounts[kind]
    extra = [s.name for s in desc.sensors if mounts.get(sensor_kind(s), ('',))[0] != s.frame_id]
    if extra:
        out.notes.append(f"sensors {', '.join(extra)}: base_sim publishes one lidar and one "
                         'laser mount; run robot_state_publisher for the other frames')
    out.base.update(robot_description=str(robot), robot_args=args_text)
    if desc.imus:       # the first IMU becomes base_sim's (its topic, frame, rate, noise)
        values, notes = imu_params(desc, desc.imus[0])
        out.base.update(values)
        out.notes += notes
    out.notes += [f"imu '{i.name}': base_sim has one IMU ('{desc.imus[0].name}'); not "
                  'started' for i in desc.imus[1:]]
    out.notes += [n.line() for n in desc.notes]
    return out
