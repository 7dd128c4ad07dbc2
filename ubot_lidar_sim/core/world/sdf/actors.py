"""
SDF ``<actor>`` -> a world actor (core/world/actors.py) walking its scripted trajectory.

An actor's ``<script>`` trajectories play one after another (``<delay_start>`` s after t = 0,
then ``<loop>``, default true); between ``<waypoint>``s (``<time>``, ``<pose>``) the position is
linear and the rotation a slerp. The pose is the actor's ``<pose>`` composed with the waypoint's.
The actor is drawn as a person: a 1.8 m x 0.25 m radius cylinder whose centre is 0.1 m below
the actor frame (Gazebo's walking skins have their root at the hips, about 1 m up). Every
waypoint is within schema.MAX_EXTENT_M of the origin, as a YAML actor's.
"""

from xml.etree.ElementTree import Element

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.class_ids import PERSON_CLASS
from ubot_lidar_sim.core.poses import matrices_to_quaternions, quaternion_to_matrix, slerp
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.world.actors import Actor
from ubot_lidar_sim.core.world.materials import material_index
from ubot_lidar_sim.core.world.objects import WorldObject
from ubot_lidar_sim.core.world.schema import MAX_EXTENT_M
from ubot_lidar_sim.core.world.sdf.poses import parse_pose
from ubot_lidar_sim.core.world.sdf.reading import numbers, SdfError
from ubot_lidar_sim.core.world.shapes import CYLINDER

PERSON_RADIUS_M, PERSON_HEIGHT_M, PERSON_DROP_M = 0.25, 1.8, 0.1


class TimedPath:
    """World-from-actor poses (n, 4, 4) at times (n,) s along timed waypoints."""

    def __init__(self, times_s: ArrayLike, poses: ArrayLike, loop: bool, delay_s: float) -> None:
        """times_s (W,) increasing, poses (W, 4, 4); loop: wrap after the last waypoint."""
        self.times, self.loop, self.delay = np.asarray(times_s, np.float64), loop, delay_s
        self.pos = np.asarray(poses)[:, :3, 3].copy()
        self.quat = matrices_to_quaternions(np.asarray(poses)[:, :3, :3])

    def __call__(self, times_s: ArrayLike) -> NDArray[np.float64]:
        """Return the poses (n, 4, 4) at times_s (n,) from the recording start."""
        t = np.atleast_1d(np.asarray(times_s, np.float64)) - self.delay
        span = self.times[-1] - self.times[0]
        if self.loop and span > 0:
            t = self.times[0] + np.mod(t - self.times[0], span)
        t = np.clip(t, self.times[0], self.times[-1])
        k = np.clip(np.searchsorted(self.times, t, side='right') - 1, 0, len(self.times) - 2)
        dt = self.times[k + 1] - self.times[k]
        u = np.where(dt > 0, (t - self.times[k]) / np.where(dt > 0, dt, 1.0), 0.0)
        out = np.zeros((t.size, 4, 4))
        out[:, :3, 3] = self.pos[k] + u[:, None] * (self.pos[k + 1] - self.pos[k])
        out[:, :3, :3] = quaternion_to_matrix(slerp(self.quat[k], self.quat[k + 1], u))
        out[:, 3, 3] = 1.0
        return out


def _person() -> Geometry:
    """Return the Geometry of a standing person in the actor frame."""
    v = CYLINDER[0] * [PERSON_RADIUS_M, PERSON_RADIUS_M, PERSON_HEIGHT_M]
    v = v - [0.0, 0.0, PERSON_DROP_M]
    return Geometry(np.ascontiguousarray(v), np.asarray(CYLINDER[1], np.int64))


def read_actor(el: Element, world_from: NDArray[np.float64], where: str, material: str = 'other'
               ) -> tuple[Actor | None, str]:
    """Return the Actor of an <actor> element, or None (with why) if it has no trajectory."""
    name = el.get('name') or 'actor'
    where = f"{where}: actor '{name}'"
    base = world_from @ parse_pose(el.find('pose'), f'{where}/pose')[0]
    script = el.find('script')
    trajectories = [] if script is None else script.findall('trajectory')
    if script is None or not trajectories:
        return None, f"actor '{name}': no <script><trajectory> (plugin-driven or static)"
    times: list[float] = []
    poses: list[NDArray[np.float64]] = []
    offset = 0.0
    for k, traj in enumerate(trajectories):
        points = traj.findall('waypoint')
        if len(points) < 2:
            raise SdfError(f'{where}/trajectory[{k}]: fewer than 2 <waypoint>s')
        for j, wp in enumerate(points):
            t = numbers(wp.findtext('time', ''), 1, f'{where}/trajectory[{k}]/waypoint[{j}]',
                        'time')[0]
            times.append(offset + t)
            poses.append(base @ parse_pose(wp.find('pose'),
                                           f'{where}/trajectory[{k}]/waypoint[{j}]/pose')[0])
        offset = times[-1]
    if np.any(np.diff(times) < 0):
        raise SdfError(f'{where}/trajectory: waypoint times decrease')
    far = np.abs(np.stack(poses)[:, :3, 3]).max()
    if not far <= MAX_EXTENT_M:
        raise SdfError(f'{where}/trajectory: a waypoint is {far:.3g} m out, beyond the '
                       f'{MAX_EXTENT_M:g} m a world may span')
    loop = (script.findtext('loop', 'true') or 'true').strip() != 'false'
    delay = float(numbers(script.findtext('delay_start', '0') or '0', 1,
                          f'{where}/script/delay_start', 'delay_start')[0])
    mat = material_index(material)
    geom = _person()
    obj = WorldObject(name, 'actor', mat, PERSON_CLASS, False, False,
                      int(geom.triangles.shape[0]))
    return Actor(obj, geom, None, TimedPath(times, np.stack(poses), loop, delay)), ''
