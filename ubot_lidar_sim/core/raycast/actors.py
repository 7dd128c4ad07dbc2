"""
Moving objects (actors) in a cast: each ray meets each actor where the actor is at its own time.

Every actor has its own caster, built once from its geometry in its own frame with the world's
caster factory, so any backend of the Caster seam casts actors. Per cast and actor:

1. cull: the rays that cannot reach the actor's bounding sphere before their static hit are
   dropped (compiled, one test per ray); the sphere's centre is taken at each ray's column time
   and its radius grows by what the centre moves within the firing offsets of a column;
2. only the surviving rays are turned into the actor's frame at their own firing time (the
   actor's pose is asked for those times only) and cast against the actor's caster;
3. the nearer of the static and the actor hit is kept; its normal is turned back to the world.

The cost of an actor follows the rays that reach its sphere, not the whole sweep, and no pose is
shared by a sweep: a spinning sensor sees a moving actor stretched or squeezed as a real one does.
"""

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.raycast.backend import CasterFactory, CastResult
from ubot_lidar_sim.core.raycast.geometry import Geometry

# pose_at(times (n,) s) -> (n, 4, 4) world-from-actor; a NaN pose leaves the actor out.
PoseAt = Callable[[NDArray[np.float64]], NDArray[np.float64]]


class RayTimes(NamedTuple):
    """
    When each ray of a cast fires: time_s (N,) s; column (N,) int64 into column_time_s (C,) s.

    A ray fires within a few microseconds (the per-laser offsets) of its column's time; the cull
    uses the column's time with a sphere grown by the actor's motion over that offset.
    """

    time_s: NDArray[np.float64]
    column: NDArray[np.int64]
    column_time_s: NDArray[np.float64]


def one_instant(n: int, time_s: float) -> RayTimes:
    """Return the RayTimes of n rays that all fire at time_s."""
    return RayTimes(np.full(n, float(time_s)), np.zeros(n, np.int64),
                    np.array([float(time_s)]))


class ActorFrame(NamedTuple):
    """One cast's actors: object indices (A,), their poses and the rays' times."""

    index: tuple
    pose_at: tuple
    centre: tuple                   # (C, 3) sphere centre at each column time
    radius: tuple                   # (C,) sphere radius grown by the in-column motion
    times: RayTimes


class ActorCasting:
    """The actors of a world: one caster per actor, object indices first_obj.. (see module)."""

    def __init__(self, geometries: Sequence[Geometry], factory: CasterFactory, first_obj: int):
        """Build a caster per actor geometry (its own frame); actor k is object first_obj + k."""
        self.first_obj = int(first_obj)
        self._casters = [factory([g]) for g in geometries]
        self._centre, self._radius = [], []
        for g in geometries:
            v = np.asarray(g.vertices, np.float64)
            c = (v.min(axis=0) + v.max(axis=0)) / 2.0 if v.size else np.zeros(3)
            self._centre.append(c)
            # float32 vertices and the float32 rays: a millimetre keeps every hit inside.
            self._radius.append(float(np.linalg.norm(v - c, axis=1).max()) + 1e-3
                                if v.size else 0.0)

    def __len__(self):
        """Return the number of actors."""
        return len(self._casters)

    def frame(self, actors: Sequence[tuple[int, PoseAt]], times: RayTimes) -> ActorFrame:
        """
        Return the ActorFrame of one cast: actors (k, pose_at) with k the actor's number.

        The sphere of actor k at column j is centred where pose_at puts it at column_time_s[j];
        its radius grows by the farthest its centre moves within the largest firing offset.
        """
        t_c = np.asarray(times.column_time_s, np.float64)
        late = np.asarray(times.time_s, np.float64) - t_c[times.column]
        lo, hi = (float(late.min()), float(late.max())) if late.size else (0.0, 0.0)
        index, poses, centres, radii = [], [], [], []
        for k, pose_at in actors:
            local = np.append(self._centre[k], 1.0)
            at = {dt: (np.asarray(pose_at(t_c + dt), np.float64) @ local)[:, :3]
                  for dt in sorted({lo, 0.0, hi})}
            centre = at[0.0]
            grow = np.max([np.linalg.norm(c - centre, axis=1) for c in at.values()], axis=0)
            index.append(self.first_obj + k)
            poses.append(pose_at)
            centres.append(np.ascontiguousarray(centre))
            radii.append(self._radius[k] + grow)
        return ActorFrame(tuple(index), tuple(poses), tuple(centres), tuple(radii), times)

    def cast(self, rays: NDArray[np.float32], res: CastResult, rows: NDArray[np.int64],
             frame: ActorFrame, ignored: frozenset[int]) -> CastResult:
        """
        Return res with every actor hit nearer than the static one (see the module docstring).

        rays (M, 6) float32 world frame, res their static CastResult, rows (M,) the rays'
        indices into frame.times.
        """
        t, obj, prim, normal = res
        copied = False
        column = frame.times.column[rows]
        for a, index in enumerate(frame.index):
            if index in ignored:
                continue
            limit = np.asarray(t, np.float64)
            cand = np.empty(rays.shape[0], np.int64)
            n = sphere_candidates(rays, column, frame.centre[a], frame.radius[a], limit, cand)
            if n == 0:
                continue
            cand = cand[:n]
            pose = np.asarray(frame.pose_at[a](frame.times.time_s[rows[cand]]), np.float64)
            rot, pos = pose[:, :3, :3], pose[:, :3, 3]
            local = np.empty((n, 6), np.float32)
            r = rays[cand].astype(np.float64)
            # Row vectors times R: R^T x, world to actor frame.
            local[:, :3] = np.einsum('nj,nji->ni', r[:, :3] - pos, rot)
            local[:, 3:] = np.einsum('nj,nji->ni', r[:, 3:], rot)
            hit = self._casters[index - self.first_obj].cast_rays(local)
            near = np.flatnonzero(np.asarray(hit.t, np.float64) < limit[cand])
            if near.size == 0:
                continue
            if not copied:
                t, obj, prim, normal = (np.array(t), np.array(obj), np.array(prim),
                                        np.array(normal))
                copied = True
            sel = cand[near]
            t[sel] = hit.t[near]
            obj[sel] = index
            prim[sel] = hit.primitive[near]
            normal[sel] = np.einsum('nij,nj->ni', rot[near],
                                    np.asarray(hit.normal, np.float64)[near])
        return CastResult(t, obj, prim, normal)


@numba.njit(cache=True, nogil=True)
def sphere_candidates(rays, column, centre, radius, limit, out):
    """
    Write to out the rows of rays (M, 6) that reach a sphere before limit (M,); return the count.

    The sphere of row m is centred at centre[column[m]] (C, 3) with radius[column[m]] (C,); a
    ray reaches it when it enters before limit[m] (its static hit, inf for none) and leaves
    after 0. A NaN centre (an actor without a pose) is reached by no ray.
    """
    k = 0
    for m in range(rays.shape[0]):
        c = column[m]
        ox = np.float64(rays[m, 0]) - centre[c, 0]
        oy = np.float64(rays[m, 1]) - centre[c, 1]
        oz = np.float64(rays[m, 2]) - centre[c, 2]
        b = ox * rays[m, 3] + oy * rays[m, 4] + oz * rays[m, 5]
        disc = b * b - (ox * ox + oy * oy + oz * oz - radius[c] * radius[c])
        if not disc >= 0.0:
            continue
        s = np.sqrt(disc)
        if -b + s < 0.0 or -b - s > limit[m]:
            continue
        out[k] = m
        k += 1
    return k
