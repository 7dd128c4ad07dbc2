"""
The robot's own body as world actors: one per link, posed by the link's frame, class ``self``.

Each link's collision geometry (or its visuals with ``sdf_geometry: visual``; a link with only
one kind uses that one, as the world loader does) is merged into one mesh in the link frame,
an Actor with ``frame`` = the link name: a node poses it from /tf (robot_state_publisher or
base_sim), offline ``link_pose_at`` does. The link that carries a sensor is left out of that
sensor's body: a sensor sits inside its own housing, which a real one does not see (and Gazebo's
gpu_lidar clips below range_min).
"""

from collections.abc import Callable, Collection, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.core.material_ids import OTHER
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.robot.description import Part, RobotDescription, RobotError
from ubot_lidar_sim.core.robot.tree import link_poses
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


def sensor_body_actor(description: RobotDescription, frame_id: str,
                      use: str = 'visual') -> Actor | None:
    """
    Return the robot's body as one actor rigid in a sensor's frame_id (None: no geometry).

    For a node, whose /tf holds its own frame: every link at its zero joint position, but
    frame_id's link and the links of the sensors that publish in frame_id, merged into one
    mesh in that frame. frame_id is a link, or a sensor's own frame (its link x its <pose>).
    """
    poses = link_poses(description)
    mounts = {s.frame_id: (s.link, poses[s.link] @ s.link_from_sensor)
              for s in description.sensors}
    if frame_id in poses:
        frame = poses[frame_id]
    elif frame_id in mounts:
        frame = mounts[frame_id][1]
    else:
        raise RobotError(f"{description.source}: frame_id '{frame_id}' is neither a link nor "
                         'the frame of a sensor of the robot (allowed: '
                         f"{', '.join(sorted(set(poses) | set(mounts)))})")
    skip = {frame_id} | {link for f, (link, _) in mounts.items() if f == frame_id}
    verts, tris, offset = [], [], 0
    inv = np.linalg.inv(frame)
    for link, parts in description.links.items():   # a loop over links, not over rays
        v, t = link_mesh(parts, use)
        if link in skip or not len(t):
            continue
        m = inv @ poses[link]
        verts.append(v @ m[:3, :3].T + m[:3, 3])
        tris.append(t + offset)
        offset += len(v)
    if not tris:
        return None
    t = np.concatenate(tris)
    obj = WorldObject(f'{description.name}::self', 'robot', OTHER, SELF_CLASS, False, False,
                      len(t))
    return Actor(obj, Geometry(np.ascontiguousarray(np.concatenate(verts)), t), frame_id, None)


def link_pose_at(world_from_link: ArrayLike) -> Callable[[ArrayLike], NDArray[np.float64]]:
    """Return a pose_at(times (n,)) -> (n, 4, 4) holding one world-from-link transform."""
    pose = np.asarray(world_from_link, np.float64)
    # A read-only view: one pose for every instant, without n copies (n may be every ray).
    return lambda times: np.broadcast_to(pose, (len(np.atleast_1d(times)), 4, 4))
