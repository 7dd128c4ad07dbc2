"""
A robot description's body in a fleet: copies of one robot, each under its frame prefix.

``sim.launch.py robot:=FILE robots:=N`` runs N copies of one description, robot k's frames
under ``robotK/`` (the form robot_state_publisher's ``frame_prefix`` gives: PREFIX + link).
``split_frame`` finds the prefix of a frame; ``own_body_actors`` is body.sensor_body_actors
under the node's prefix; ``fleet_body_actors`` draws each other robot as the description's
body: every rigid group of links (body.rigid_heads) one actor in the frame PREFIX + its head
link, posed from /tf as that robot's base_sim publishes its joints. The other robots' bodies
carry material and class ``vehicle``, as the box a demo fleet draws (core/world/actors.py
fleet_actors): a user tells them from the sensor's own body (class ``self``, which
``self_filter`` drops).
"""

from collections.abc import Sequence
import dataclasses
from typing import Any

import numpy as np

from ubot_lidar_sim.core.class_ids import default_class
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.robot.body import link_mesh, rigid_heads, sensor_body_actors
from ubot_lidar_sim.core.robot.description import RobotDescription, RobotError
from ubot_lidar_sim.core.robot.tree import link_poses
from ubot_lidar_sim.core.world.actors import Actor, fleet_actors
from ubot_lidar_sim.core.world.materials import material_index
from ubot_lidar_sim.core.world.objects import WorldObject
from ubot_lidar_sim.core.world.schema import MAX_ACTORS
from ubot_lidar_sim.core.world.world import World

FLEET_MATERIAL = 'vehicle'      # the demo fleet's boxes' (core/world/actors.py fleet_actors)


def frames_of(description: RobotDescription) -> list[str]:
    """Return the frames a description gives: its links and its sensors' own frames."""
    return list(description.links) + [s.frame_id for s in description.sensors
                                      if s.frame_id not in description.links]


def split_frame(description: RobotDescription, frame: str, parameter: str) -> tuple[str, str]:
    """Return (prefix, name) of frame = prefix + name, name a frame of the description."""
    names = frames_of(description)
    if frame in names:
        return '', frame
    for name in sorted(names, key=len, reverse=True):      # the longest name that ends it
        if frame.endswith('/' + name):
            return frame[:-len(name)], name
    raise ConfigError(parameter, frame, f"a frame of {description.source} ({', '.join(names)}), "
                      "alone or after a prefix ending in '/' (robotK/)")


def own_body_actors(description: RobotDescription, frame_id: str,
                    use: str = 'visual') -> list[Actor]:
    """Return body.sensor_body_actors of the sensor frame frame_id, under its prefix."""
    prefix, name = split_frame(description, frame_id, 'frame_id')
    return [dataclasses.replace(a, frame=prefix + a.frame)
            for a in sensor_body_actors(description, name, use)]


def body_groups(description: RobotDescription,
                use: str = 'collision') -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Return [(head link, vertices (V, 3) in its frame, triangles (T, 3))] of every group."""
    poses = link_poses(description)
    groups: dict[str, list[str]] = {}
    for link, head in rigid_heads(description).items():
        groups.setdefault(head, []).append(link)
    out = []
    for head, links in groups.items():     # a loop over rigid groups and links, not rays
        inv = np.linalg.inv(poses[head])
        verts, tris, offset = [], [], 0
        for link in links:
            v, t = link_mesh(description.links[link], use)
            m = inv @ poses[link]
            verts.append(v @ m[:3, :3].T + m[:3, 3])
            tris.append(t + offset)
            offset += len(v)
        t = np.concatenate(tris)
        if len(t):
            out.append((head, np.ascontiguousarray(np.concatenate(verts)), t))
    return out


def fleet_body_actors(description: RobotDescription, roots: Sequence[str], first: int,
                      use: str = 'collision') -> list[Actor]:
    """
    Return the other robots of a fleet of copies as the description's body (module text).

    roots: each other robot's root-link frame, PREFIX + the description's root (robot2/
    base_link): ConfigError 'fleet_frames' for another. first: the world's actors so far
    (MAX_ACTORS holds for the sum).
    """
    groups = body_groups(description, use)
    prefixes = []
    for root in roots:
        prefix, name = split_frame(description, root, 'fleet_frames')
        if name != description.root:
            raise ConfigError('fleet_frames', root, f"the other robots' root-link frames, "
                              f'PREFIX/{description.root} (fleet_body: robot)')
        prefixes.append(prefix)
    if first + len(groups) * len(prefixes) > MAX_ACTORS:
        raise ConfigError('fleet_frames', len(roots), f'at most {MAX_ACTORS - first} actors '
                          f'in all ({len(groups)} rigid groups per robot)')
    if not groups:
        raise RobotError(f'{description.source}: no {use} geometry to draw for the other '
                         'robots (fleet_body: robot)')
    material, cls = material_index(FLEET_MATERIAL), default_class(FLEET_MATERIAL)
    return [Actor(WorldObject(f'fleet:{prefix}{head}', 'robot', material, cls, False, False,
                              len(t)), Geometry(v, t), prefix + head, None)
            for prefix in prefixes for head, v, t in groups]


def sensor_world(world: World, cfg: Any, robot: RobotDescription | None) -> World:
    """
    Return a sensor's world with the fleet's other robots and its own robot's body as actors.

    The others (``cfg.fleet_frames``): the description's body with ``fleet_body: robot``, else
    the demo fleet's box; its own body: groups of links posed by /tf (own_body_actors). cfg is
    a sensor's config (fleet_frames, frame_id, sdf_geometry; fleet_body where it has one).
    """
    fleet_body = getattr(cfg, 'fleet_body', 'box')
    if fleet_body == 'robot' and robot is None:
        raise ConfigError('fleet_body', 'robot', 'box, or robot with a robot_description')
    if cfg.fleet_frames and fleet_body == 'robot':
        world = world.with_actors(fleet_body_actors(robot, cfg.fleet_frames, len(world.actors),
                                                    cfg.sdf_geometry))
    elif cfg.fleet_frames:
        world = world.with_actors(fleet_actors(cfg.fleet_frames, cfg.fleet_body_size_m,
                                               len(world.actors), cfg.fleet_base_height_m))
    if robot is not None:
        world = world.with_actors(own_body_actors(robot, cfg.frame_id, cfg.sdf_geometry))
    return world
