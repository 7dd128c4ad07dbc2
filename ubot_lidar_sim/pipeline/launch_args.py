"""
The launch files' argument rules and exit rule (no launch import: the tests call them directly).

An argument that cannot be used raises ``LaunchArgumentError`` (a ValueError) whose one line
names the argument, the value given and what is allowed; raised inside an OpaqueFunction, it
ends ``ros2 launch`` with exit code 1 (launch/launch_service.py: an exception while processing
an event is logged, the launch shuts down and run() returns 1). ``exit_rule`` is a node's
``on_exit``: a node that exits with a non-zero code (base_sim refusing its parameters exits 2,
ros/run.py) raises the same way, so CI sees the failure; a clean exit shuts the launch down.
"""

import math

from ubot_lidar_sim.core.motion.config import DRIVES
from ubot_lidar_sim.pipeline import sim_fleet
from ubot_lidar_sim.pipeline.fleet import MAX_ROBOTS
import yaml


class LaunchArgumentError(ValueError):
    """A launch argument that cannot be used: one line naming it, the value and what is allowed."""

    def __init__(self, name, value, allowed):
        super().__init__(f'{name}:={value!r} refused: allowed {allowed}')


def real_time_factor(text):
    """Return the real_time_factor parameter of real_time_factor:=TEXT ('max' is 0.0)."""
    allowed = "'max' or a number 0.001-1000 (simulated seconds per wall second)"
    if text.strip().lower() == 'max':
        return 0.0
    try:
        value = float(text)
    except ValueError:
        raise LaunchArgumentError('real_time_factor', text, allowed) from None
    if not 0.001 <= value <= 1000.0:
        raise LaunchArgumentError('real_time_factor', text, allowed)
    return value


def initial_pose(text):
    """Return [x, y, yaw_deg] of initial_pose:='[1, 2, 30]' or '1 2 30'."""
    allowed = "'[x, y, yaw_deg]' or 'x y yaw_deg': three finite numbers (m, m, deg)"
    try:
        parsed = yaml.safe_load(text)
        values = parsed if isinstance(parsed, list) else text.replace(',', ' ').split()
        pose = [float(v) for v in values]
    except (ValueError, TypeError, yaml.YAMLError):
        raise LaunchArgumentError('initial_pose', text, allowed) from None
    if len(pose) != 3 or not all(math.isfinite(v) for v in pose):
        raise LaunchArgumentError('initial_pose', text, allowed)
    return pose


def drive(text):
    """Return the drive of drive:=TEXT, one of core/motion/config.py DRIVES."""
    if text not in DRIVES:
        raise LaunchArgumentError('drive', text, ', '.join(DRIVES))
    return text


def boolean(name, text):
    """Return the bool of name:=TEXT (true or false, any case)."""
    value = str(text).strip().lower()
    if value not in ('true', 'false'):
        raise LaunchArgumentError(name, text, 'true or false')
    return value == 'true'


def distro_cmd_vel_stamped(distro):
    """
    Return Nav2's enable_stamped_cmd_vel default on ROS distro (the ROS_DISTRO variable).

    false up to Jazzy, true from Kilted on (nav2_util/include/nav2_util/twist_publisher.hpp,
    navigation2 branches jazzy and kilted, lines 62-64).
    """
    return (distro or '').strip().lower() not in ('humble', 'iron', 'jazzy')


def fleet_robots(text):
    """Return the robot count of sim.launch.py robots:=TEXT (1..MAX_ROBOTS)."""
    allowed = f'an int 1-{MAX_ROBOTS} (pipeline/fleet.py)'
    try:
        n = int(str(text).strip())
    except ValueError:
        raise LaunchArgumentError('robots', text, allowed) from None
    if not 1 <= n <= MAX_ROBOTS:
        raise LaunchArgumentError('robots', text, allowed)
    return n


def start_poses(n, pose_text, poses_text, spacing_text):
    """
    Return n start poses [x, y, yaw_deg] of initial_pose, initial_poses and robot_spacing_m.

    initial_poses ('x y yaw; x y yaw; ...', one per robot) wins; else robot 1 at initial_pose
    (empty: [0, 0, 0]) and the others robot_spacing_m apart to its left (pipeline/sim_fleet.py).
    """
    if poses_text.strip():
        poses = [initial_pose(p) for p in poses_text.split(';') if p.strip()]
        if len(poses) != n:
            raise LaunchArgumentError('initial_poses', poses_text,
                                      f"{n} poses 'x y yaw_deg' separated by ';' (robots:={n})")
        return poses
    try:
        spacing = float(spacing_text)
    except ValueError:
        spacing = math.nan
    if not 0.5 <= spacing <= 1000.0:
        raise LaunchArgumentError('robot_spacing_m', spacing_text, 'a number 0.5-1000 (m)')
    first = initial_pose(pose_text) if pose_text.strip() else (0.0, 0.0, 0.0)
    return sim_fleet.start_poses(n, first, spacing)


def exit_rule(name, on_clean_exit):
    """Return a node's on_exit(event, context): raise on a non-zero exit code (module doc)."""
    def on_exit(event, context):
        if event.returncode:
            raise RuntimeError(f'{name} exited with code {event.returncode} (its last lines '
                               'above say why): the launch fails')
        return on_clean_exit
    return on_exit
