"""
The per-cast bookkeeping of the multi-hit trace as one compiled loop (numba, cached on disk).

After each cast, every ray that hit is finished in one pass: float64 range, exact quadric surface
(raycast/quadrics.py), range limit, the normal facing the ray, the foliage rules (a closed foliage
volume's far face passed without a hit, its exit found analytically where raycast/volumes.py
allows), the ray's hit slot and the float32 rays of the next cast. It replaces ~40 numpy passes
per cast over the hits and keeps their operation order, so it gives their bits (sqrt is exact;
there is no exp or log here). ``test/core/raycast/test_trace_kernels.py`` holds the numpy
reference. The GIL is released while it runs.
"""

import math
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.raycast.geometry import KIND_SPHERE
from ubot_lidar_sim.core.raycast.quadrics import quadric_hit
from ubot_lidar_sim.core.raycast.volumes import exit_range, free

F32 = NDArray[np.float32]
F64 = NDArray[np.float64]
I32 = NDArray[np.int32]
I64 = NDArray[np.int64]


@numba.njit(cache=True, nogil=True)
def finish_layer(t32: F32, obj: I32, prim: NDArray[Any], nrm32: F32, active: I64, start: F64,
                 first: bool, cast_o: F64, origins: F64, dirs: F64, limit: F64,
                 shapes: tuple[Any, ...], volumes: tuple[Any, ...], count: I64,
                 stopped: NDArray[np.bool_], max_hits: int, continue_step_m: float,
                 exit_step_m: float, continue_foliage: bool, rec_ray: I64, rec_slot: I64,
                 rec_rng: F64, rec_obj: I32, rec_nrm: F64, rec_dot: F64, next_rays: F32,
                 next_active: I64, next_start: F64) -> tuple[int, int]:
    """
    Finish the hits of one cast of M rays; returns (recorded K, next cast J).

    t32 (M,) float32, obj (M,) int32 (-1 miss), prim (M,) int, nrm32 (M, 3) float32: the
    CastResult. active (M,) int64 the rays cast (N rays in all), start (M,) float64 the range of
    each cast origin along its ray; first: the first cast (active = arange, start = 0), from
    cast_o (N, 3) (origins with -0.0 turned +0.0). origins, dirs (N, 3) float64; limit (N,)
    float64 (or (1,): one for all). shapes: the tracer's per-object tuple (foliage, closed
    foliage, quadric flag, kind, n_side, centre, axis, radius); volumes: ClosedVolumes.arrays
    of raycast/volumes.py (its first entry says whether they are used). count (N,) int64 hits
    so far and stopped (N,) bool are updated. Written: rec_* (K,) rows of the recorded hits
    (ray, slot, range, object, outward normal (K, 3) float64, normal . direction) in cast order,
    next_rays (J, 6) float32 and next_active / next_start (J,) of the rays that go on.
    """
    foliage, fol_closed, quadric, kind, n_side, center, axis, radius = shapes
    use_exits, handled, shape_of_volume, ptr, lo, hi = (volumes[0], volumes[1], volumes[2:9],
                                                        volumes[9], volumes[10], volumes[11])
    uniform = limit.shape[0] == 1
    k = 0
    j = 0
    for i in range(t32.shape[0]):
        ob = obj[i]
        if ob < 0:
            continue
        r = active[i]
        s = start[i]
        d0, d1, d2 = dirs[r, 0], dirs[r, 1], dirs[r, 2]
        t = np.float64(t32[i])
        n0, n1, n2 = np.float64(nrm32[i, 0]), np.float64(nrm32[i, 1]), np.float64(nrm32[i, 2])
        if quadric[ob] and (kind[ob] == KIND_SPHERE or prim[i] < n_side[ob]):
            if first:
                o0, o1, o2 = cast_o[r, 0], cast_o[r, 1], cast_o[r, 2]
            else:
                o0, o1, o2 = origins[r, 0] + d0 * s, origins[r, 1] + d1 * s, origins[r, 2] + d2 * s
            t, n0, n1, n2 = quadric_hit(o0, o1, o2, d0, d1, d2, t, n0, n1, n2,
                                        kind[ob] == KIND_SPHERE, center[ob, 0],
                                        center[ob, 1], center[ob, 2], axis[ob, 0],
                                        axis[ob, 1], axis[ob, 2], radius[ob])
        rng = t + 0.0 if first else s + t
        lim = limit[0] if uniform else limit[r]
        if not rng <= lim:
            continue
        dot = ((n0 * d0 + 0.0) + n1 * d1) + n2 * d2
        fol = foliage[ob]
        leaving = continue_foliage and fol_closed[ob] and dot > 0.0
        if not leaving:
            rec_ray[k] = r
            rec_slot[k] = count[r]
            rec_rng[k] = rng
            rec_obj[k] = ob
            rec_nrm[k, 0], rec_nrm[k, 1], rec_nrm[k, 2] = n0, n1, n2
            rec_dot[k] = dot
            k += 1
            count[r] += 1
            if not fol:
                stopped[r] = True
        if not (continue_foliage and fol):
            continue
        nxt = rng + (exit_step_m if leaving else continue_step_m)
        if use_exits and not leaving and handled[ob]:
            # Past the exit of a closed foliage volume when nothing else lies inside before it.
            o0, o1, o2 = origins[r, 0], origins[r, 1], origins[r, 2]
            t_exit = exit_range(shape_of_volume, ob, o0, o1, o2, d0, d1, d2)
            jump = t_exit + exit_step_m
            if jump > nxt and free(ptr, lo, hi, ob, o0, o1, o2, d0, d1, d2, nxt, t_exit):
                nxt = jump                      # (False for NaN: no exit found)
        if count[r] < max_hits and nxt < lim:
            next_active[j] = r
            next_start[j] = nxt
            e0, e1, e2 = d0 * nxt, d1 * nxt, d2 * nxt
            next_rays[j, 0] = origins[r, 0] + e0
            next_rays[j, 1] = origins[r, 1] + e1
            next_rays[j, 2] = origins[r, 2] + e2
            next_rays[j, 3], next_rays[j, 4], next_rays[j, 5] = d0, d1, d2
            j += 1
    return k, j


@numba.njit(cache=True, nogil=True)
def assemble_hits(count: I64, ray: I64, slot: I64, rng: F64, obj: I32, normal: F64, dot: F64,
                  origins: F64, dirs: F64, tables: tuple[NDArray[Any], ...], with_points: bool,
                  with_normals: bool) -> tuple[NDArray[Any], ...]:
    """
    Scatter the recorded hits of every layer into the flat (ray, range)-ordered Hits columns.

    count (N,) hits per ray; ray, slot, rng, obj, normal (K, 3) outward, dot (K,): the records
    (any order; slot = the hit's index among its ray's hits). tables: per-object (O + 1,)
    material, class, foliage, ground with a last entry for smoke (obj -1). Returns ray_f,
    range, obj, cos (|dot|, float32), normal (facing the ray, float32; (0, 3) without normals),
    point ((0, 3) without points), material, class_id, foliage, ground, smoke, and pos (K,)
    the row of each record.
    """
    material_t, class_t, foliage_t, ground_t = tables
    n = count.shape[0]
    h = 0
    offsets = np.empty(n, np.int64)
    ray_f = np.empty(count.sum(), np.int64)
    for r in range(n):
        offsets[r] = h
        for _ in range(count[r]):
            ray_f[h] = r
            h += 1
    rng_f = np.empty(h)
    obj_f = np.empty(h, np.int32)
    cos_f = np.empty(h, np.float32)
    normal_f = np.empty((h if with_normals else 0, 3), np.float32)
    point_f = np.empty((h if with_points else 0, 3))
    material = np.empty(h, np.uint8)
    class_id = np.empty(h, class_t.dtype)
    foliage = np.empty(h, np.bool_)
    ground = np.empty(h, np.bool_)
    smoke = np.empty(h, np.bool_)
    pos = np.empty(ray.shape[0], np.int64)
    for i in range(ray.shape[0]):
        r = ray[i]
        p = offsets[r] + slot[i]
        pos[i] = p
        rng_f[p] = rng[i]
        ob = obj[i]
        obj_f[p] = ob
        cos_f[p] = abs(dot[i])          # |n . d| is unchanged by turning n to face the ray
        if with_normals:
            sign = -1.0 if dot[i] > 0.0 else 1.0
            for c in range(3):
                normal_f[p, c] = sign * normal[i, c]
        if with_points:
            for c in range(3):
                point_f[p, c] = origins[r, c] + rng[i] * dirs[r, c]
        material[p] = material_t[ob]
        class_id[p] = class_t[ob]
        foliage[p] = foliage_t[ob]
        ground[p] = ground_t[ob]
        smoke[p] = ob < 0
    return (ray_f, rng_f, obj_f, cos_f, normal_f, point_f, material, class_id, foliage, ground,
            smoke, pos)


@numba.njit(cache=True, nogil=True)
def ground_rows(ray: I64, rng: F64, obj: I32, normal: F64, dot: F64, origins: F64, dirs: F64,
                ground_t: NDArray[Any], material_t: NDArray[np.uint8]
                ) -> tuple[I64, F64, F64, F64, NDArray[np.uint8]]:
    """
    Select the recorded hits on ground objects for the ground texture: rows g (G,) of them.

    Returns g, their points p (G, 3) = origin + range x direction, directions d (G, 3),
    normals n (G, 3) turned to face the ray, and materials m (G,) uint8. ground_t, material_t:
    per-object (O + 1,) tables (last entry: smoke, obj -1).
    """
    n_g = 0
    for i in range(ray.shape[0]):
        if ground_t[obj[i]]:
            n_g += 1
    g = np.empty(n_g, np.int64)
    p = np.empty((n_g, 3))
    d = np.empty((n_g, 3))
    n = np.empty((n_g, 3))
    m = np.empty(n_g, np.uint8)
    k = 0
    for i in range(ray.shape[0]):
        ob = obj[i]
        if not ground_t[ob]:
            continue
        r = ray[i]
        sign = -1.0 if dot[i] > 0.0 else 1.0
        for c in range(3):
            d[k, c] = dirs[r, c]
            p[k, c] = origins[r, c] + rng[i] * dirs[r, c]
            n[k, c] = sign * normal[i, c]
        g[k] = i
        m[k] = material_t[ob]
        k += 1
    return g, p, d, n, m


@numba.njit(cache=True, nogil=True)
def first_rays(origins: F64, dirs: F64) -> tuple[F32, F64]:
    """
    Return the first cast's float32 rays (N, 6) and its float64 origins (N, 3).

    The origins are origin + 0 x direction when one of them holds a -0.0 (which that turns to
    +0.0, as the numpy trace did), else the given array itself.
    """
    n = origins.shape[0]
    o = origins
    for i in range(n):
        if (origins[i, 0] == 0.0 and math.copysign(1.0, origins[i, 0]) < 0.0) \
                or (origins[i, 1] == 0.0 and math.copysign(1.0, origins[i, 1]) < 0.0) \
                or (origins[i, 2] == 0.0 and math.copysign(1.0, origins[i, 2]) < 0.0):
            o = origins + 0.0 * dirs
            break
    rays = np.empty((n, 6), np.float32)
    for i in range(n):
        for c in range(3):
            rays[i, c] = o[i, c]
            rays[i, 3 + c] = dirs[i, c]
    return rays, o
