"""
The joint tree of a robot: the checks (one root, no cycle, every link joined) and link poses.

A URDF is a tree (urdfdom's initTree refuses a link with two parents and a cycle; its
initRoot refuses more than one root); an SDF model's joints make the same tree under the
model frame. ``link_poses`` gives each link's transform in the model frame (a URDF's is its
root link's; an SDF model's root link has its own pose in it) for the given joint positions
(rad for revolute and continuous, m for prismatic; 0 when absent). A mimic joint follows the
joint it names (``joint_positions``): its own value, given or absent, is the leader's through
the mimic's formula, as robot_state_publisher computes it (3.3.3,
src/robot_state_publisher.cpp:348-354, where a message leaves the mimic joint out).
"""

from collections.abc import Collection, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.poses import pose_matrix
from ubot_lidar_sim.core.robot.description import Joint, RobotDescription, RobotError

#: The most links one description may hold (a robot arm has tens, a large mobile manipulator
#: a few hundred); more is refused before any geometry is read.
MAX_LINKS = 10_000
MOVING = ('revolute', 'continuous', 'prismatic')


def check_count(n_links: int, source: str) -> None:
    """Refuse a description of more than MAX_LINKS links."""
    if n_links > MAX_LINKS:
        raise RobotError(f'{source}: {n_links} links, at most {MAX_LINKS} allowed')


def root_of(links: Collection[str], joints: Sequence[Joint], source: str) -> str:
    """Return the root link; RobotError for a cycle, two parents or an unjoined link."""
    parent = {}
    for j in joints:
        for end in (j.parent, j.child):
            if end not in links:
                raise RobotError(f"{source}: joint '{j.name}' names link '{end}', which is not "
                                 'a link of the description')
        if j.child in parent:
            raise RobotError(f"{source}: joint '{j.name}': link '{j.child}' already has the "
                             f"parent '{parent[j.child]}' (a link has at most one parent)")
        parent[j.child] = j.parent
    for start in parent:
        seen, link = {start}, start
        while link in parent:
            link = parent[link]
            if link in seen:
                raise RobotError(f"{source}: the joints make a cycle through link '{link}' "
                                 '(a robot is a tree of joints)')
            seen.add(link)
    roots = [n for n in links if n not in parent]
    if len(roots) != 1:
        lonely = list(roots[1:])
        raise RobotError(f"{source}: link '{lonely[0] if lonely else '?'}' is connected to "
                         f"the root '{roots[0] if roots else '?'}' by no joint (allowed: one "
                         f'root link, every other link the child of one joint)')
    return roots[0]


def check_mimics(joints: Sequence[Joint], source: str) -> None:
    """Refuse a mimic naming a joint the description lacks, and a cycle of mimics."""
    by_name = {j.name: j for j in joints}
    for j in joints:
        if j.mimic is None:
            continue
        chain = [j.name]
        leader = j.mimic.joint
        while leader not in chain:
            if leader not in by_name:
                raise RobotError(f"{source}: joint '{chain[-1]}'/mimic: joint '{leader}' is not "
                                 f"a joint of the description (allowed: {', '.join(by_name)})")
            chain.append(leader)
            if by_name[leader].mimic is None:
                break
            leader = by_name[leader].mimic.joint
        else:
            raise RobotError(f"{source}: joint '{j.name}'/mimic: the mimics make a cycle "
                             f"{' -> '.join(chain + [leader])} (allowed: a chain of mimics "
                             'that ends at a joint that mimics none)')


def joint_positions(description: RobotDescription,
                    positions: Mapping[str, float]) -> dict[str, float]:
    """Return {joint: position} of positions with every mimic joint's from its leader's."""
    out = {name: float(v) for name, v in positions.items()}
    by_name = {j.name: j for j in description.joints}

    def value(joint):           # the chain is acyclic (check_mimics) and short
        if joint.mimic is None:
            return out.get(joint.name, 0.0)
        return joint.mimic.follow(value(by_name[joint.mimic.joint]))

    for j in description.joints:
        if j.mimic is not None:
            out[j.name] = value(j)
    return out


def motion(joint: Joint, position: float) -> NDArray[np.float64]:
    """Return the 4 x 4 motion of a joint at position about / along its axis."""
    if joint.type not in MOVING or position == 0.0:
        return np.eye(4)
    axis = np.asarray(joint.axis, np.float64)
    axis = axis / np.linalg.norm(axis)
    if joint.type == 'prismatic':
        return pose_matrix(axis * position, (0.0, 0.0, 0.0))
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    out = np.eye(4)
    out[:3, :3] = np.eye(3) + np.sin(position) * k + (1 - np.cos(position)) * k @ k
    return out


def link_poses(description: RobotDescription,
               positions: Mapping[str, float] | None = None) -> dict[str, np.ndarray]:
    """Return {link: (4, 4) model-from-link} at the joint positions {joint name: value}."""
    positions = joint_positions(description, positions or {})
    unknown = sorted(set(positions) - {j.name for j in description.joints})
    if unknown:
        raise RobotError(f"{description.source}: joint '{unknown[0]}' is not a joint of the "
                         f"description ({', '.join(j.name for j in description.joints)})")
    children: dict[str, list] = {}
    for j in description.joints:
        children.setdefault(j.parent, []).append(j)
    out = {description.root: np.asarray(description.model_from_root, np.float64)}
    todo = [description.root]
    while todo:
        link = todo.pop()
        for j in children.get(link, ()):
            moved = motion(j, float(positions.get(j.name, 0.0)))
            out[j.child] = out[link] @ j.origin @ moved @ j.joint_to_child
            todo.append(j.child)
    return out
