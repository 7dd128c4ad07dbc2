"""
Actors: objects of the world that move (docs/worlds.md, "Actors").

An entry of the world's ``actors:`` list has the keys of an object (its shape placed by ``pose``
in the actor's own frame) and a ``motion``, one of:

- ``{frame: NAME}``: the actor's frame is the /tf frame NAME (a node looks it up per column);
- ``{pose: [x, y, z, roll, pitch, yaw], twist: [vx, vy, vz, wx, wy, wz]}``: m, deg, m/s, deg/s in
  the world frame, from t = 0 of the recording (poses.WorldTwist);
- ``{waypoints: [[x, y, z], ...], speed_m_s: V, loop: true|false}`` (poses.WaypointPath).

Actor k (0-based, in list order) has instance id k + 1; the static world is 0.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
import math
import re

import numpy as np
from numpy.typing import ArrayLike

from ubot_lidar_sim.core.class_ids import default_class
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.poses import pose_matrix_deg, WaypointPath, WorldTwist
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.world.materials import material_index
from ubot_lidar_sim.core.world.objects import build_object, WorldObject
from ubot_lidar_sim.core.world.schema import check_actor_list, Context, MAX_ACTORS, short
from ubot_lidar_sim.core.world.shapes import boxes

# A /tf frame id: ROS name tokens (a letter or _, then letters, digits, _) joined by '/'
# (ROS 2 design, "Topic and Service name mapping to DDS"; tf2 frame ids take no leading '/').
FRAME_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*')
MAX_SPEED_M_S = 1e3        # a twist's speed, as WaypointPath's speed_m_s
MOTION_FORMS = (('frame',), ('pose', 'twist'), ('waypoints', 'speed_m_s', 'loop'))


@dataclass(frozen=True)
class Actor:
    """
    One actor: its object record, its geometry in its own frame and its motion.

    frame: the /tf frame of a ``{frame: NAME}`` motion (None for a trajectory); trajectory:
    the pose_at (times (n,) s from the recording start -> (n, 4, 4) world-from-actor) of the
    other two motions (None for a frame).
    """

    obj: WorldObject
    geometry: Geometry
    frame: str | None
    trajectory: PoseAt | None

    @property
    def name(self) -> str:
        """Return the actor's name."""
        return self.obj.name


def check_motion(motion: object, where: str, ctx: Context, reach_m: float = 0.0
                 ) -> tuple[str | None, PoseAt | None]:
    """
    Check an actor's motion mapping; returns (frame, trajectory) (see Actor).

    reach_m: the farthest any vertex of the actor is from its frame's origin (shape pose + size).
    """
    where = f'{where}.motion'
    if not isinstance(motion, dict):
        raise ctx.error(where, 'expected a mapping with frame, pose + twist or waypoints + '
                        f'speed_m_s, got {short(motion)}')
    forms = [f for f in MOTION_FORMS if f[0] in motion]
    if len(forms) > 1:
        raise ctx.error(where, 'expected one of frame, pose (+ twist), waypoints (+ speed_m_s, '
                        f'loop), got {" and ".join(f[0] for f in forms)}')
    form = forms[0] if forms else None
    if form is None:
        raise ctx.error(where, 'expected one of frame, pose (+ twist), waypoints (+ speed_m_s, '
                        f'loop), got keys {short(sorted(map(str, motion)))}')
    unknown = sorted(set(map(str, motion)) - set(form))
    if unknown:
        raise ctx.error(f'{where}.{unknown[0]}', f'unknown key beside {form[0]}, allowed '
                        + ', '.join(form))
    if form[0] == 'frame':
        name = motion['frame']
        if not isinstance(name, str) or not FRAME_NAME.fullmatch(name):
            raise ctx.error(f'{where}.frame', 'expected a tf frame name (letters, digits, _ '
                            f'and /, not starting with a digit or /), got {short(name)}')
        return name, None
    if form[0] == 'pose':
        pose = ctx.vector(motion, 'pose', where, 6)
        twist = ctx.vector(motion, 'twist', where, 6, [0.0] * 6)
        ctx.within_extent(reach_m + float(np.abs(pose[:3]).max()), f'{where}.pose',
                          'the actor at this pose (its shape pose plus this one)')
        if not np.linalg.norm(twist[:3]) < MAX_SPEED_M_S:
            raise ctx.error(f'{where}.twist', f'expected a speed < {MAX_SPEED_M_S:g} m/s (as '
                            f'speed_m_s), got {short(motion.get("twist"))}')
        return None, WorldTwist(pose_matrix_deg(pose[:3], pose[3:]),
                                np.r_[twist[:3], np.radians(twist[3:])])
    loop = motion.get('loop', False)
    if not isinstance(loop, bool):
        raise ctx.error(f'{where}.loop', f'expected true or false, got {short(loop)}')
    speed = motion.get('speed_m_s')
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) \
            or not math.isfinite(speed) or speed <= 0.0:
        raise ctx.error(f'{where}.speed_m_s', f'expected a speed > 0 m/s, got {short(speed)}')
    points = motion['waypoints']
    if not isinstance(points, list) or len(points) < 2:
        raise ctx.error(f'{where}.waypoints', 'expected at least 2 [x, y, z] points, got '
                        + short(points))
    for k in range(len(points)):
        ctx.vector({f'waypoints[{k}]': points[k]}, f'waypoints[{k}]', where, 3)
    try:
        return None, WaypointPath(points, speed, loop=bool(loop))
    except ConfigError as exc:
        raise ctx.error(f'{where}.{"waypoints" if exc.name == "waypoints" else "speed_m_s"}',
                        f'expected {exc.allowed}, got {short(exc.value)}') from None


def build_actors(data: object, ctx: Context, budget: int, names: Iterable[str]) -> list[Actor]:
    """
    Build the actors of a world mapping; returns [Actor] within budget triangles.

    names: the static objects' names (an actor's name is unique among both).
    """
    entries = check_actor_list(data, ctx)
    actors: list[Actor] = []
    used = 0
    seen = set(names)
    for k, entry in enumerate(entries):
        obj, geom = build_object(entry, k, ctx, budget - used, section='actors')
        where = f"actors[{k}] '{obj.name}'"
        if obj.name in seen:
            raise ctx.error(f'actors[{k}].name', f"duplicate name '{obj.name}'")
        seen.add(obj.name)
        used += obj.n_triangles
        if used > budget:
            raise ctx.error(where, f'world exceeds max_triangles ({used} actor triangles over '
                            f'the {budget} left)')
        reach = float(np.abs(geom.vertices).max()) if geom.vertices.size else 0.0
        frame, trajectory = check_motion(entry.get('motion'), where, ctx, reach)
        # Cast as a plain mesh in the actor's own frame (no analytic surface, no volume exits).
        plain = Geometry(geom.vertices, geom.triangles)
        actors.append(Actor(obj, plain, frame, trajectory))
    return actors


def fleet_actors(frames: Sequence[str], size_m: ArrayLike, first: int,
                 base_height_m: float = 0.0) -> list[Actor]:
    """
    Return the Actors of a fleet's other robots: a size_m (x, y, z) box under each frame.

    The box stands on the ground, base_height_m below its frame (a robot's base_link).

    frames: /tf frame names (ConfigError 'fleet_frames' for a bad one); first: how many actors
    the world has already (MAX_ACTORS holds for the sum). Material and class: vehicle.
    """
    for frame in frames:
        if not isinstance(frame, str) or not FRAME_NAME.fullmatch(frame):
            raise ConfigError('fleet_frames', frame, 'tf frame names (letters, digits, _ and /, '
                              'not starting with a digit or /)')
    if first + len(frames) > MAX_ACTORS:
        raise ConfigError('fleet_frames', len(frames), f'at most {MAX_ACTORS - first} frames '
                          f'(the world has {first} actors of {MAX_ACTORS})')
    size = np.asarray(size_m, np.float64)
    v, t = boxes([0.0, 0.0, size[2] / 2.0 - float(base_height_m)], size)
    vehicle, car = material_index('vehicle'), default_class('vehicle')
    return [Actor(WorldObject(f'fleet:{frame}', 'box', vehicle, car, False, False,
                              int(t.shape[0])), Geometry(v, t), frame, None)
            for frame in frames]
