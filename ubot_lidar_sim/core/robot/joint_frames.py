"""
The transforms of a robot's joints, as robot_state_publisher publishes them (for base_sim).

Fixed joints go on /tf_static once, moving ones (revolute, continuous, prismatic) on /tf at
their positions, parent link -> child link (robot_state_publisher 3.3.3,
src/robot_state_publisher.cpp: addChildren, publishFixedTransforms, publishTransforms; a
floating joint is skipped as it skips it); a mimic joint at its leader's position through the
mimic's formula (tree.joint_positions). A sensor frame that is not a link (a
``gz_frame_id`` of its own) hangs below its link at the sensor's <pose>, on /tf_static.
"""

from collections.abc import Mapping

import numpy as np

from ubot_lidar_sim.core.robot.description import RobotDescription
from ubot_lidar_sim.core.robot.tree import joint_positions, motion, MOVING

SKIPPED = ('floating',)


def fixed_transforms(description: RobotDescription) -> list[tuple[str, str, np.ndarray]]:
    """Return (parent, child, (4, 4) parent-from-child) of the fixed joints and sensor frames."""
    out = [(j.parent, j.child, j.origin @ j.joint_to_child) for j in description.joints
           if j.type not in MOVING + SKIPPED]
    links = set(description.links)
    seen = set()
    for s in list(description.sensors) + list(description.imus):
        mount = getattr(s, 'link_from_sensor', np.eye(4))
        if s.frame_id not in links and s.frame_id not in seen:
            seen.add(s.frame_id)
            out.append((s.link, s.frame_id, np.asarray(mount, np.float64)))
    return out


def moving_joints(description: RobotDescription) -> list[str]:
    """Return the moving joints whose positions moving_transforms takes (not the mimics)."""
    return [j.name for j in description.joints if j.type in MOVING and j.mimic is None]


def moving_transforms(description: RobotDescription,
                      positions: Mapping[str, float]) -> list[tuple[str, str, np.ndarray]]:
    """Return (parent, child, (4, 4)) of every moving joint at positions (absent: 0)."""
    positions = joint_positions(description, positions)
    return [(j.parent, j.child,
             j.origin @ motion(j, positions.get(j.name, 0.0)) @ j.joint_to_child)
            for j in description.joints if j.type in MOVING]
