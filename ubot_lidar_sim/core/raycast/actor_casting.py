"""
Moving objects (actors) in a cast: each ray meets each actor where the actor is at its own time.

The actors share one caster, built once from their geometries (each in its own frame, in a slot
of its own: raycast/actor_scene.py) with the world's caster factory, so any backend of the
Caster seam casts actors. Per cast and actor:

1. cull: the rays that cannot reach the actor's bounding sphere before their static hit are
   dropped (compiled, one test per ray); the sphere's centre is taken at each ray's column time
   and its radius grows by what the centre moves within the firing offsets of a column;
2. only the surviving rays are turned into the actor's frame at their own firing time (the
   actor's pose is asked for those times only) and cast against the actor's slot;
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
from ubot_lidar_sim.core.raycast.actor_scene import ActorScene
from ubot_lidar_sim.core.raycast.backend import CasterFactory, CastResult
from ubot_lidar_sim.core.raycast.fixed_actors import fixed_poses, FixedActors
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.raycast.ray_times import (firing_window, one_instant,  # noqa: F401
                                                   RayTimes)
from ubot_lidar_sim.core.raycast.sensor_mount import mounted

# The frames kept for reuse (ActorCasting.frame): at most _FRAMES (every column block of a
# sweep, and the blocks of a few interleaved sensors) within _FRAME_BYTES of spheres.
_FRAMES = 8
_FRAME_BYTES = 64 << 20
_NO_LINES = np.zeros(0, np.uint64)      # reach_spheres without a trace's actor bits

# pose_at(times (n,) s) -> (n, 4, 4) world-from-actor; a NaN pose leaves the actor out.
PoseAt = Callable[[NDArray[np.float64]], NDArray[np.float64]]


class ActorFrame(NamedTuple):
    """One cast's actors: object indices (A,), their poses and the rays' times."""

    index: tuple
    pose_at: tuple
    # (C, 4, A): at each column time, every actor's sphere centre x, y, z and squared radius
    # (grown by the in-column motion); column-major so the cull reads one column's actors at once.
    # C = 1 for actors that each hold one pose (ActorCasting._fixed_frame); None for actors
    # rigid with the sensor (sensor_mount.py: cast computes them if it needs them).
    spheres: NDArray[np.float64] | None
    times: RayTimes


class ActorCasting:
    """The actors of a world: one shared caster, object indices first_obj.. (see module)."""

    def __init__(self, geometries: Sequence[Geometry], factory: CasterFactory, first_obj: int):
        """Build a caster per actor geometry (its own frame); actor k is object first_obj + k."""
        self.first_obj = int(first_obj)
        # One caster for all (raycast/actor_scene.py): open3d crashes at ~1,011 scenes.
        self._scene = ActorScene(geometries, factory)
        self._centre, self._radius = self._scene.centre, self._scene.radius
        # Actors that hold one pose each: the cheaper path, with this module's kernels.
        self._fixed = FixedActors(self._scene, self.first_obj, reach_spheres, rays_to_local)
        # The last frames' spheres, newest first: (actors, column times, firing offset window,
        # centres, radii). The casts of one sweep or block (centres, probes, refinements) share
        # their columns, and a sphere grown over a wider offset window still holds every ray's
        # actor. Tuples replaced whole: a concurrent cast reads one consistent set.
        self._spheres: tuple = ()

    def __len__(self):
        """Return the number of actors."""
        return len(self._scene)

    def frame(self, actors: Sequence[tuple[int, PoseAt]], times: RayTimes) -> ActorFrame:
        """
        Return the ActorFrame of one cast: actors (k, pose_at) with k the actor's number.

        The sphere of actor k at column j is centred where pose_at puts it at column_time_s[j];
        its radius grows by the farthest its centre moves within the firing offsets
        (ray_times.firing_window). The spheres of an earlier frame of the same actors and
        columns whose offsets cover these are reused: one sweep's casts (centres, probes,
        refinements) pose their actors once per column block.
        """
        fixed = self._fixed_frame(actors, times)
        if fixed is not None:
            return fixed
        t_c = np.asarray(times.column_time_s, np.float64)
        lo, hi = firing_window(times)
        chosen = tuple((k, pose_at) for k, pose_at in actors)
        index = tuple(self.first_obj + k for k, _ in chosen)
        poses = tuple(pose_at for _, pose_at in chosen)
        known = self._spheres or ()     # read once: a concurrent cast may replace it
        for entry in known:
            if (_same_actors(entry[0], chosen) and entry[2] <= lo and hi <= entry[3]
                    and np.array_equal(entry[1], t_c)):
                return ActorFrame(index, poses, entry[4], times)
        spheres = self._spheres_at(chosen, t_c, sorted({lo, 0.0, hi}))
        # Newest first, within the budget (the newest always): every block of a sweep fits.
        kept, size = [(chosen, t_c, lo, hi, spheres)], spheres.nbytes
        for old in known[:_FRAMES - 1]:
            size += old[4].nbytes
            if size > _FRAME_BYTES:
                break
            kept.append(old)
        self._spheres = tuple(kept)
        return ActorFrame(index, poses, spheres, times)

    def _spheres_at(self, chosen: tuple[tuple[int, PoseAt], ...], t_c: NDArray[np.float64],
                    offsets: list[float]) -> NDArray[np.float64]:
        """Return the spheres (C, 4, A) at t_c (C,) s, radii grown over offsets s (ActorFrame)."""
        # One call per actor at the distinct times: a sensor whose rays fire at one instant
        # (Gazebo's model, a robot's body) asks for one pose, not one per column.
        at_times, back = np.unique(np.concatenate([t_c + dt for dt in offsets]),
                                   return_inverse=True)
        spheres = np.empty((t_c.size, 4, len(chosen)))
        zero = offsets.index(0.0)
        for a, (k, pose_at) in enumerate(chosen):     # a few actors, not a loop over rays
            place_sphere(np.ascontiguousarray(pose_at(at_times), np.float64), self._centre[k],
                         self._radius[k], back.reshape(len(offsets), t_c.size), zero,
                         spheres[:, :, a])
        return spheres

    def lines(self, n: int, frame: ActorFrame) -> NDArray[np.uint64] | None:
        """Return the zeroed actor bits (n,) of a trace's rows (reach_spheres); None: > 64."""
        return np.zeros(n, np.uint64) if len(frame.index) <= 64 else None

    def _fixed_frame(self, actors: Sequence[tuple[int, PoseAt]], times: RayTimes
                     ) -> ActorFrame | None:
        """
        Return the ActorFrame of actors that each hold one pose (a ``fixed`` (4, 4)), else None.

        Such a sphere does not move: one column, spheres (1, 4, A), whatever the rays' columns
        (poses.FixedPose: a robot's body offline; cast takes fixed_actors.py).
        """
        chosen = tuple(actors)
        # A body rigid with the sensor needs its spheres only if its rays are not the
        # sensor's pattern (cast computes them then; sensor_mount.py).
        if mounted(tuple(pose_at for _, pose_at in chosen)) is not None:
            spheres = None
        else:
            spheres = self._fixed.spheres(chosen)
            if spheres is None:
                return None
        return ActorFrame(tuple(self.first_obj + k for k, _ in chosen),
                          tuple(pose_at for _, pose_at in chosen), spheres, times)

    def cast(self, rays: NDArray[np.float32], res: CastResult, rows: NDArray[np.int64],
             frame: ActorFrame, ignored: frozenset[int],
             lines: NDArray[np.uint64] | None = None, first: bool = True) -> CastResult:
        """
        Return res with every actor hit nearer than the static one (see the module docstring).

        rays (M, 6) float32 world frame, res their static CastResult, rows (M,) the rays'
        indices into frame.times. lines: the trace's actor bits (ActorCasting.lines), set by
        its first cast and read by the later ones (the rays going on along the same lines).
        """
        live = np.array([index not in ignored for index in frame.index])
        if first:       # a body rigid with the sensor: its hits in the sensor frame, reused
            mounted = self._fixed.cast_mounted(rays, res, frame.pose_at, frame.index, live)
            if mounted is not None:
                return mounted
        poses = fixed_poses(frame.pose_at)
        if poses is not None:
            spheres = frame.spheres
            if spheres is None:     # a mounted body's (_fixed_frame)
                spheres = self._fixed.spheres([(i - self.first_obj, p) for i, p in
                                               zip(frame.index, frame.pose_at)])
            return self._fixed.cast(rays, res, poses, spheres, frame.index, live)
        t, obj, prim, normal = res
        limit = np.asarray(t)
        # One pass over the rays for every actor: the (actor, ray) pairs that reach a sphere,
        # ray by ray; then each actor's rays together, in ray order.
        cand, act = reach_spheres(rays, rows, frame.times.column, frame.spheres, limit, live,
                                  _NO_LINES if lines is None else lines, first)
        if cand.size == 0:
            return res
        by_actor = np.argsort(act, kind='stable')
        cand, act = cand[by_actor], act[by_actor]
        # Each actor's pose at its rays' times (one call per actor reached), then one cast of
        # every actor's rays in the shared caster.
        bounds = np.flatnonzero(np.diff(act)) + 1
        pose = np.concatenate([np.asarray(frame.pose_at[a[0]](frame.times.time_s[rows[c]]),
                                          np.float64)
                               for a, c in zip(np.split(act, bounds), np.split(cand, bounds))])
        pose = np.ascontiguousarray(pose)
        local = np.empty((cand.size, 6), np.float32)
        rays_to_local(rays, cand, pose, local)
        first = np.asarray(frame.index, np.int64)[act]
        hit = self._scene.cast_rays(first - self.first_obj, local)
        hit_t = np.asarray(hit.t, np.float64)
        # Per ray the nearest actor hit nearer than the static hit, the earlier actor of equal
        # ones (as when each actor in turn had to be nearer than the hits before it).
        nearer = np.flatnonzero(hit_t < limit[cand])
        if nearer.size == 0:
            return res
        order = nearer[np.lexsort((act[nearer], hit_t[nearer], cand[nearer]))]
        near = order[np.r_[True, cand[order][1:] != cand[order][:-1]]]
        # The caster's fresh arrays are changed in place (a read-only one is copied).
        t, obj, prim, normal = (x if x.flags.writeable else x.copy()
                                for x in (np.asarray(t), np.asarray(obj), np.asarray(prim),
                                          np.asarray(normal)))
        sel = cand[near]
        t[sel] = hit_t[near]
        obj[sel] = first[near]
        prim[sel] = hit.primitive[near]
        normal[sel] = np.einsum('nij,nj->ni', pose[near, :3, :3],
                                np.asarray(hit.normal, np.float64)[near])
        return CastResult(t, obj, prim, normal)


def _same_actors(a, b):
    """Return True when a and b are the same (k, pose_at) pairs, the same pose_at objects."""
    return len(a) == len(b) and all(k == m and p is q for (k, p), (m, q) in zip(a, b))


@numba.njit(cache=True, nogil=True)
def reach_spheres(rays: NDArray[np.float32], rows: NDArray[np.int64],
                  column: NDArray[np.int64], spheres: NDArray[np.float64],
                  limit: NDArray[np.float64], live: NDArray[np.bool_],
                  lines: NDArray[np.uint64], first: bool
                  ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """
    Return (ray (K,) int64, actor (K,) int64): the rays (M, 6) that reach sphere a before limit.

    limit (M,) float; only the actors with live[a]; pairs ordered by ray, then actor. Ray m is
    row rows[m] of its trace, in column column[rows[m]]; sphere a there is spheres[column, :, a]
    (C, 4, A: centre x, y, z, squared radius; ActorFrame). A ray reaches it when it enters
    before limit[m] (its static hit, inf for none) and leaves after 0. A NaN centre (an actor
    without a pose) is reached by no ray.

    lines (N,) uint64, one per row, for at most 64 actors ((0,): not kept): a first cast sets
    bit a of a row whose line meets sphere a ahead of it; a later cast of the row (the ray
    going on from a hit, along the same line) tests those actors only: the others' spheres
    stay off its line or behind it.
    """
    n_a = spheres.shape[2]
    kept = lines.shape[0] > 0
    out_ray = np.empty(max(16, rays.shape[0] // 8), np.int64)
    out_actor = np.empty_like(out_ray)
    near = np.empty(n_a)        # b = (o - c) . d of each actor
    disc = np.empty(n_a)
    one = np.uint64(1)
    k = 0
    if rays.shape[0] == 0:
        return out_ray[:0].copy(), out_actor[:0].copy()
    last = column[rows[0]]
    sx, sy, sz, r2 = spheres[last, 0], spheres[last, 1], spheres[last, 2], spheres[last, 3]
    for m in range(rays.shape[0]):
        row = rows[m]
        bits = lines[row] if kept and not first else np.uint64(0)
        if kept and not first and bits == 0:
            continue
        c = column[row]
        px, py, pz = np.float64(rays[m, 0]), np.float64(rays[m, 1]), np.float64(rays[m, 2])
        dx, dy, dz = np.float64(rays[m, 3]), np.float64(rays[m, 4]), np.float64(rays[m, 5])
        if c != last:           # a column's actors, taken once per run of its rays
            last = c
            sx, sy, sz, r2 = spheres[c, 0], spheres[c, 1], spheres[c, 2], spheres[c, 3]
        # Every actor at once, without a branch (the compiler vectorises it); then the few
        # whose sphere the ray's line meets.
        for a in range(n_a):
            ox = px - sx[a]
            oy = py - sy[a]
            oz = pz - sz[a]
            b = ox * dx + oy * dy + oz * dz
            near[a] = b
            disc[a] = b * b - (ox * ox + oy * oy + oz * oz - r2[a])
        for a in range(n_a):
            if not disc[a] >= 0.0 or not live[a]:
                continue
            if kept and not first and not (bits >> np.uint64(a)) & one:
                continue
            s = np.sqrt(disc[a])
            if -near[a] + s < 0.0:
                continue
            if kept and first:
                bits |= one << np.uint64(a)
            if -near[a] - s > limit[m]:
                continue
            if k == out_ray.size:       # grow by doubling: amortised one copy per pair
                out_ray = np.concatenate((out_ray, np.empty_like(out_ray)))
                out_actor = np.concatenate((out_actor, np.empty_like(out_actor)))
            out_ray[k] = m
            out_actor[k] = a
            k += 1
        if kept and first:
            lines[row] = bits
    return out_ray[:k].copy(), out_actor[:k].copy()


@numba.njit(cache=True, nogil=True)
def place_sphere(pose: NDArray[np.float64], centre: NDArray[np.float64], radius: float,
                 back: NDArray[np.int64], zero: int, out: NDArray[np.float64]) -> None:
    """
    Write to out (C, 4) one actor's sphere at each column: centre x, y, z and squared radius.

    pose (T, 4, 4) world-from-actor at T times; back (O, C) the time of column c at firing
    offset o (row zero: the column's own time). The centre is pose @ centre (3,) at the
    column's time; the radius grows by the farthest the centre is at the other offsets.
    """
    for c in range(out.shape[0]):
        p = pose[back[zero, c]]
        x = p[0, 0] * centre[0] + p[0, 1] * centre[1] + p[0, 2] * centre[2] + p[0, 3]
        y = p[1, 0] * centre[0] + p[1, 1] * centre[1] + p[1, 2] * centre[2] + p[1, 3]
        z = p[2, 0] * centre[0] + p[2, 1] * centre[1] + p[2, 2] * centre[2] + p[2, 3]
        grow = 0.0
        for o in range(back.shape[0]):
            q = pose[back[o, c]]
            dx = q[0, 0] * centre[0] + q[0, 1] * centre[1] + q[0, 2] * centre[2] + q[0, 3] - x
            dy = q[1, 0] * centre[0] + q[1, 1] * centre[1] + q[1, 2] * centre[2] + q[1, 3] - y
            dz = q[2, 0] * centre[0] + q[2, 1] * centre[1] + q[2, 2] * centre[2] + q[2, 3] - z
            grow = max(grow, np.sqrt(dx * dx + dy * dy + dz * dz))
        r = radius + grow
        out[c, 0], out[c, 1], out[c, 2], out[c, 3] = x, y, z, r * r


@numba.njit(cache=True, nogil=True)
def rays_to_local(rays: NDArray[np.float32], cand: NDArray[np.int64],
                  pose: NDArray[np.float64], out: NDArray[np.float32]) -> None:
    """
    Write to out (n, 6) float32 the rays rays[cand] (n,) in their actor's frame.

    pose (n, 4, 4) world-from-actor at each ray's time: origin R^T (o - p), direction R^T d.
    """
    for i in range(cand.shape[0]):
        m = cand[i]
        ox = np.float64(rays[m, 0]) - pose[i, 0, 3]
        oy = np.float64(rays[m, 1]) - pose[i, 1, 3]
        oz = np.float64(rays[m, 2]) - pose[i, 2, 3]
        dx, dy, dz = np.float64(rays[m, 3]), np.float64(rays[m, 4]), np.float64(rays[m, 5])
        for j in range(3):
            out[i, j] = ox * pose[i, 0, j] + oy * pose[i, 1, j] + oz * pose[i, 2, j]
            out[i, 3 + j] = dx * pose[i, 0, j] + dy * pose[i, 1, j] + dz * pose[i, 2, j]
