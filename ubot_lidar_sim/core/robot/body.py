"""
The robot's own body as world actors: one per link, posed by the link's frame, class ``self``.

Each link's collision geometry (or its visuals with ``sdf_geometry: visual``; a link with only
one kind uses that one, as the world loader does) is merged into one mesh in the link frame,
an Actor with ``frame`` = the link name: offline ``link_pose_at`` poses it. A node casts the
links joined by fixed joints as one actor and poses each such group by its head link's frame
from /tf (robot_state_publisher, or base_sim from the description): the body follows the
joints. The link that carries a sensor is left out of that
sensor's body: a sensor sits inside its own housing, which a real one does not see (and Gazebo's
gpu_lidar clips below range_min).
"""

from collections.abc import Collection, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.core.material_ids import OTHER
from ubot_lidar_sim.core.poses import FixedPose
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.robot.description import Part, RobotDescription, RobotError
from ubot_lidar_sim.core.robot.tree import link_poses, MOVING
from ubot_lidar_sim.core.world.actors import Actor
from ubot_lidar_sim.core.world.objects import WorldObject

SDF_GEOMETRY = ('collision', 'visual')


def link_mesh(parts: Sequence[Part], use: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Return (vertices (V, 3), triangles (T, 3)) of a link's parts of kind use, link frame."""
    chosen = [p for p in parts if p.kind == use] or [p for p in parts if p.kind != use]
    verts, tris, offset = [], [], 0
    for part in chosen:         # a Python loop over a link's few parts, not over rays
        rot, t = part.link_from_part[:3, :3], part.link_from_part[:3, 3]
        verts.append(np.asarray(part.shape.vertices, np.float64) @ rot.T + t)
        tris.append(np.asarray(part.shape.triangles, np.int64) + offset)
        offset += len(part.shape.vertices)
    if not verts:
        return np.zeros((0, 3)), np.zeros((0, 3), np.int64)
    return np.concatenate(verts), np.concatenate(tris)


def body_actors(description: RobotDescription, use: str = 'collision',
                skip: Collection[str] = ()) -> list[Actor]:
    """Return the Actors of the robot's links (frame = link name), but the links in skip."""
    out = []
    for link, parts in description.links.items():
        if link in skip:
            continue
        v, t = link_mesh(parts, use)
        if not len(t):
            continue
        obj = WorldObject(f'{description.name}::{link}', 'robot', OTHER, SELF_CLASS, False,
                          False, len(t))
        out.append(Actor(obj, Geometry(np.ascontiguousarray(v), t), link, None))
    return out


def rigid_heads(description: RobotDescription) -> dict[str, str]:
    """
    Return {link: head}: the link nearest the root that fixed joints join it to.

    The links of one head move together: /tf moves them by the head's frame alone (a moving
    joint's child, or the root). A floating or planar joint is rigid here, as its motion is.
    """
    parent = {j.child: j for j in description.joints}
    out = {}
    for link in description.links:       # a loop over links, not over rays
        head = link
        while head in parent and parent[head].type not in MOVING:
            head = parent[head].parent
        out[link] = head
    return out


def sensor_body_actors(description: RobotDescription, frame_id: str,
                       use: str = 'visual') -> list[Actor]:
    """
    Return the robot's body as a node's actors, each rigid in a frame that /tf gives.

    The links rigidly joined to frame_id's link (fixed joints) are one actor in frame_id (but
    frame_id's link and the links of the sensors that publish in frame_id: a sensor sits in
    its housing); every other group of rigidly joined links is one actor in its head link's
    frame (rigid_heads), which /tf moves as its joint turns (robot_state_publisher, or base_sim
    from the description). frame_id is a link, or a sensor's own frame (its link x <pose>).
    """
    poses = link_poses(description)
    mounts = {s.frame_id: (s.link, poses[s.link] @ s.link_from_sensor)
              for s in description.sensors}
    if frame_id in poses:
        frame, link = poses[frame_id], frame_id
    elif frame_id in mounts:
        link, frame = mounts[frame_id]
    else:
        raise RobotError(f"{description.source}: frame_id '{frame_id}' is neither a link nor "
                         'the frame of a sensor of the robot (allowed: '
                         f"{', '.join(sorted(set(poses) | set(mounts)))})")
    skip = {link} | {ln for f, (ln, _) in mounts.items() if f == frame_id}
    heads = rigid_heads(description)
    own = heads[link]
    groups: dict[str, list[str]] = {}
    for ln, head in heads.items():
        if ln not in skip:
            groups.setdefault(head, []).append(ln)
    out = []
    for head, links in groups.items():      # a loop over rigid groups, not over rays
        inv = np.linalg.inv(frame if head == own else poses[head])
        verts, tris, offset = [], [], 0
        for ln in links:
            v, t = link_mesh(description.links[ln], use)
            if not len(t):
                continue
            m = inv @ poses[ln]
            verts.append(v @ m[:3, :3].T + m[:3, 3])
            tris.append(t + offset)
            offset += len(v)
        if not tris:
            continue
        t = np.concatenate(tris)
        name = f'{description.name}::' + ('self' if head == own else head)
        obj = WorldObject(name, 'robot', OTHER, SELF_CLASS, False, False, len(t))
        out.append(Actor(obj, Geometry(np.ascontiguousarray(np.concatenate(verts)), t),
                         frame_id if head == own else head, None))
    return out


def link_pose_at(world_from_link: ArrayLike) -> FixedPose:
    """Return a pose_at(times (n,)) -> (n, 4, 4) holding one world-from-link transform."""
    return FixedPose(world_from_link)
