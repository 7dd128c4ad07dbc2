"""
Actors that hold one pose through a cast (a robot's own body offline): the cheap path.

An actor posed by a pose_at with a ``fixed`` (4, 4) world-from-actor (poses.FixedPose) does
not move within a sweep, so none of actor_casting.py's per-column work is needed: its sphere has
one centre, every ray is turned into its frame by that one pose. The result is that of
``ActorCasting.cast`` (the same sphere test, frame change, cast, nearest-hit rule and normals):

1. the rays that reach an actor's sphere (actor_casting.reach_spheres with one column, at any
   range): of a 2D laser beside a body, only its rays towards the body;
2. those rays in their actor's frame, cast in the shared ActorScene; per ray the nearest actor
   hit (the earlier actor of equal ones);
3. that hit is kept where it is nearer than the ray's static hit (an actor beyond the static
   hit never gives the nearest: ActorCasting.cast leaves its rays out in step 1 instead).

A standing robot casts the same rays at its body sweep after sweep: when a cast's rays, the
actors' poses and which actors take part are bit for bit those of the last cast that met an
actor, steps 1-2 would give the same hits (the caster is a function of its rays), so the last
ones are taken again and only step 3 is done. A robot that moves changes the float32 world
rays, so its body is cast again: an exact match or none, never a near one.

A body rigid with the sensor that casts it (sensor_mount.MountedPose: offline, a robot's links
with their joints held) is the same in the sensor frame wherever the robot goes: ``cast_mounted``
casts the sensor's pattern at it once in that frame, steps 1-2 with the sensor-from-actor
poses, and every sweep, standing or moving, does step 3 only. Its ranges are those of the
world-frame path within float32 rounding of the world rays (the path casts them, this one the
pattern: sensor_mount.py); a ray grazing an edge of the body within that rounding may differ.
"""

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.raycast.actor_scene import ActorScene
from ubot_lidar_sim.core.raycast.backend import CastResult
from ubot_lidar_sim.core.raycast.sensor_mount import (DIRECTION_TOL, merge_at_pose, mounted,
                                                      pattern_at)


class BodyHits(NamedTuple):
    """The nearest actor hit of each ray of a cast that meets one (H rows) and what it took."""

    rays: NDArray[np.float32]       # (M, 6) the cast's rays, world frame (cast_mounted: the
    #                                 sensor's pattern, its frame, as poses and normal)
    poses: NDArray[np.float64]      # (A, 4, 4) the actors' poses
    actors: tuple                   # (object index, live) of each actor
    ray: NDArray[np.int64]          # (H,) the rows (into rays) with an actor hit
    t: NDArray[np.float64]          # (H,) m from the ray's origin
    obj: NDArray[np.int64]          # (H,) object index
    primitive: NDArray[np.integer]  # (H,) triangle within the actor's geometry
    normal: NDArray[np.float64]     # (H, 3) world frame


def fixed_poses(pose_at: Sequence[object]) -> NDArray[np.float64] | None:
    """Return the poses (A, 4, 4) of pose_at callables that each hold one, else None."""
    fixed = [getattr(p, 'fixed', None) for p in pose_at]
    if not fixed or any(f is None for f in fixed):
        return None
    return np.array(fixed)      # np.stack costs 6x as much for one actor


class FixedActors:
    """The cheap path of ActorCasting.cast for actors that hold one pose (see the module)."""

    def __init__(self, scene: ActorScene, first_obj: int, reach: Callable[..., Any],
                 to_local: Callable[..., Any]):
        """
        Cast in scene (actor k = object first_obj + k).

        reach, to_local: actor_casting's sphere test and frame change (reach_spheres,
        rays_to_local), the same kernels as its general path (passed in: it imports this).
        """
        self._scene = scene
        self._reach, self._to_local = reach, to_local
        self.first_obj = int(first_obj)
        self._last: BodyHits | None = None     # the last body cast (read once per cast)
        # The last cast of actors rigid with a sensor, in its frame (rays: its pattern), and
        # the mount arrays it was cast with (sensor_mount.mounted).
        self._mounted: tuple[tuple, BodyHits | None] = ((), None)
        self._centre_h = np.c_[np.reshape(scene.centre, (-1, 3)), np.ones(len(scene))]
        self._radius = np.asarray(scene.radius, np.float64)
        self._inf = np.full(0, np.inf)
        self._zeros = np.zeros(1, np.int64)       # every ray in column 0 (rows, column)
        self._no_lines = np.zeros(0, np.uint64)   # reach_spheres without a trace's actor bits

    def spheres(self, actors: Sequence[tuple[int, object]]) -> NDArray[np.float64] | None:
        """
        Return (1, 4, A) the actors (k, pose_at) spheres where they hold (ActorFrame.spheres).

        Centre x, y, z and squared radius m^2; None unless every pose_at holds one pose
        (fixed_poses).
        """
        pose = fixed_poses([pose_at for _, pose_at in actors])
        if pose is None:
            return None
        return self._spheres_at(pose, [k for k, _ in actors])

    def _spheres_at(self, pose: NDArray[np.float64], k: Sequence[int]) -> NDArray[np.float64]:
        """Return (1, 4, A) the spheres of actors k (A,) at poses (A, 4, 4) in their frame."""
        spheres = np.empty((1, 4, len(k)))
        # As ActorCasting.frame: frame-from-actor x the homogeneous local centre.
        spheres[0, :3] = np.matmul(pose, self._centre_h[k][:, :, None])[:, :3, 0].T
        spheres[0, 3] = self._radius[k] ** 2
        return spheres

    def cast(self, rays: NDArray[np.float32], res: CastResult, poses: NDArray[np.float64],
             spheres: NDArray[np.float64], index: Sequence[int],
             live: NDArray[np.bool_]) -> CastResult:
        """
        Return res with every actor hit nearer than the static one.

        rays (M, 6) float32 world frame, res their static CastResult; actor a is object
        index[a] at poses[a] (A, 4, 4) with its sphere spheres[0, :, a] ((1, 4, A): centre
        x, y, z world frame and squared radius, FixedActors.spheres); only the actors with live[a].
        """
        actors = tuple(zip(index, live.tolist()))
        last = self._last           # read once: a concurrent cast may replace it
        if (last is None or last.actors != actors or not _same(last.poses, poses)
                or not _same(last.rays, rays)):
            last = self._body_hits(rays, poses, spheres, actors, live)
            if last.ray.size:       # a cast to spare next time (none: the sphere test is all)
                self._last = last
        return _merge(res, last)

    def cast_mounted(self, rays: NDArray[np.float32], res: CastResult, pose_at: tuple,
                     index: Sequence[int], live: NDArray[np.bool_]) -> CastResult | None:
        """
        Return cast's result for actors rigid with the sensor (sensor_mount.py), else None.

        rays (M, 6) float32 world frame: a first cast, the sensor's pattern at its pose
        (sensor_mount.pattern_at), else None (the caller takes cast). The actors (MountedPose)
        are cast along the pattern in the sensor frame once per distinct set of mounts and
        live actors; each sweep keeps those hits nearer than its static ones, their normals
        turned by the sensor's rotation. Range: the same metres in either frame (rigid).
        """
        found = mounted(pose_at)
        if found is None or rays.shape != found[0].rays.shape:
            return None
        sensor, mounts = found
        pose = np.ascontiguousarray(sensor.world_from_sensor)
        actors = tuple(zip(index, live.tolist()))
        known, last = self._mounted     # read once: a concurrent cast may replace it
        if (last is None or last.rays is not sensor.rays or last.actors != actors
                or not (all(a is b for a, b in zip(known, mounts))
                        or _same(last.poses, np.array(mounts)))):
            if not pattern_at(rays, sensor.rays, pose, DIRECTION_TOL):
                return None         # not the pattern's rays: no sensor-frame cast for them
            poses = np.array(mounts)
            k = [i - self.first_obj for i in index]
            last = self._body_hits(sensor.rays, poses, self._spheres_at(poses, k), actors,
                                   live)
            # One signature for merge_at_pose whatever the caster gives (uint32 triangles).
            last = last._replace(rays=sensor.rays, primitive=last.primitive.astype(np.int64))
            self._mounted = (mounts, last)
        # The caster's fresh arrays are changed in place (a read-only one is copied).
        out = [x if x.flags.writeable else x.copy() for x in map(np.asarray, res)]
        taken = merge_at_pose(rays, sensor.rays, pose, DIRECTION_TOL, last.ray, last.t,
                              last.obj, last.primitive, last.normal, *out)
        if taken < 0:       # not the pattern's rays: nothing written, the world-frame path
            return None
        return CastResult(*out) if taken else res

    def _body_hits(self, rays, poses, spheres, actors, live):
        """Cast the rays that reach a sphere (any range) in their actor's frame; keep nearest."""
        m = rays.shape[0]
        if self._inf.size < m:
            self._inf, self._zeros = np.full(m, np.inf), np.zeros(max(m, 1), np.int64)
        cand, act = self._reach(rays, self._zeros[:m], self._zeros[:1],
                                np.ascontiguousarray(spheres), self._inf[:m], live,
                                self._no_lines, True)
        none = np.zeros(0, np.int64)
        if cand.size == 0:
            return BodyHits(rays, poses, actors, none, np.zeros(0), none, none, np.zeros((0, 3)))
        if len(actors) > 1:         # each actor's rays together, in ray order
            by_actor = np.argsort(act, kind='stable')
            cand, act = cand[by_actor], act[by_actor]
        first = np.asarray([i for i, _ in actors], np.int64)[act]
        pose = poses[act]
        local = np.empty((cand.size, 6), np.float32)
        self._to_local(rays, cand, pose, local)
        # A sensor inside a body's sphere (a laser on its deck) sends every ray into it: the
        # rays that miss the body's box in its frame cannot meet its triangles.
        meets = np.empty(cand.size, np.bool_)
        meet_boxes(local, first - self.first_obj, self._scene.lower, self._scene.upper, meets)
        if not meets.all():
            kept = np.flatnonzero(meets)
            if kept.size == 0:
                return BodyHits(rays.copy(), poses, actors, none, np.zeros(0), none, none,
                                np.zeros((0, 3)))
            cand, act, first, pose, local = (x[kept] for x in (cand, act, first, pose, local))
        hit = self._scene.cast_rays(first - self.first_obj, local)
        hit_t = np.asarray(hit.t, np.float64)
        if len(actors) > 1:
            # Per ray the nearest actor hit, the earlier actor of equal ones (ActorCasting.cast).
            order = np.lexsort((act, hit_t, cand))
            ray = cand[order]
            starts = np.empty(ray.size, bool)
            starts[0] = True
            np.not_equal(ray[1:], ray[:-1], out=starts[1:])
            head = order[starts]
            head = head[np.isfinite(hit_t[head])]
        else:                       # one actor: each ray once
            head = np.flatnonzero(np.isfinite(hit_t))
        normal = np.einsum('nij,nj->ni', pose[head, :3, :3],
                           np.asarray(hit.normal, np.float64)[head])
        return BodyHits(rays.copy(), poses, actors, cand[head], hit_t[head], first[head],
                        np.asarray(hit.primitive)[head], normal)


def _merge(res: CastResult, last: BodyHits) -> CastResult:
    """Return res with last's hits (world-frame normals) where nearer than the static ones."""
    keep = last.t < np.asarray(res.t)[last.ray]
    n_keep = np.count_nonzero(keep)
    if n_keep == 0:
        return res
    near = slice(None) if n_keep == keep.size else np.flatnonzero(keep)
    # The caster's fresh arrays are changed in place (a read-only one is copied).
    t, obj, prim, normal = (x if x.flags.writeable else x.copy()
                            for x in (np.asarray(res.t), np.asarray(res.obj),
                                      np.asarray(res.primitive), np.asarray(res.normal)))
    sel = last.ray[near]
    t[sel] = last.t[near]
    obj[sel] = last.obj[near]
    prim[sel] = last.primitive[near]
    normal[sel] = last.normal[near]
    return CastResult(t, obj, prim, normal)


def _same(a: NDArray[np.generic], b: NDArray[np.generic]) -> bool:
    """Return True when a and b hold the same values in the same shape (np.array_equal, faster)."""
    return a.shape == b.shape and bool((a == b).all())


@numba.njit(cache=True, nogil=True)
def meet_boxes(local: NDArray[np.float32], k: NDArray[np.int64], lower: NDArray[np.float64],
               upper: NDArray[np.float64], out: NDArray[np.bool_]) -> None:
    """
    Write to out (n,) whether ray i of local (n, 6) (its actor's frame) meets box k[i].

    The box lower[k[i]] .. upper[k[i]] (A, 3); the ray from its origin on (t >= 0); the slab
    test, a direction component 0 meeting the slab only from inside it.
    """
    for i in range(local.shape[0]):
        a = k[i]
        t_in, t_out = 0.0, np.inf
        for j in range(3):
            o, d = np.float64(local[i, j]), np.float64(local[i, 3 + j])
            if d == 0.0:
                if o < lower[a, j] or o > upper[a, j]:
                    t_in, t_out = 1.0, 0.0
                continue
            t0, t1 = (lower[a, j] - o) / d, (upper[a, j] - o) / d
            t_in = max(t_in, min(t0, t1))
            t_out = min(t_out, max(t0, t1))
        out[i] = t_in <= t_out
