"""
Where a ray leaves a closed volume (box, sphere, cylinder), found analytically, not by casting.

A ray that enters a closed foliage volume goes on from inside it; the next cast used to meet the
volume's own far face, which the tracer passes without a hit, and cast once more beyond it. When
nothing else lies inside the volume along that stretch of the ray, the far face is where the ray
leaves, so the tracer can start the next cast just past it. ``ClosedVolumes`` gives that exit
range and says, per ray, whether the stretch is free: it is not when the axis-aligned bounding
box of any object that overlaps the volume (a trunk in a crown, the soil under a crop row) meets
it, and then the tracer casts as before. Compiled (numba): the layer kernel calls it per hit.
"""

import math

from typing import Any

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.raycast.geometry import KIND_BOX, KIND_CYLINDER, KIND_SPHERE

_AABB_PAD_M = 1e-4          # bounding boxes grow by this (and 1e-6 of their extent) each way


def _bounds(geom):
    """Return the (lo, hi) (3,) of a geometry's vertices, padded; None without triangles."""
    if geom.triangles.shape[0] == 0:
        return None
    lo, hi = geom.vertices.min(axis=0), geom.vertices.max(axis=0)
    pad = _AABB_PAD_M + 1e-6 * np.abs(np.concatenate([lo, hi])).max()
    return lo - pad, hi + pad


# The per-hit helpers take floats, not arrays: a helper that takes (or unpacks) arrays pays an
# atomic reference count per array and call, which made the exit test ~4x slower.


@numba.njit(cache=True, nogil=True, inline='always')
def segment_meets_box(o0: float, o1: float, o2: float, d0: float, d1: float, d2: float,
                      t0: float, t1: float, lo0: float, lo1: float, lo2: float, hi0: float,
                      hi1: float, hi2: float) -> bool:
    """Return True when the segment o + t d, t0 <= t <= t1 meets the box [lo, hi] (slab test)."""
    near, far = -np.inf, np.inf
    for oi, di, lo, hi in ((o0, d0, lo0, hi0), (o1, d1, lo1, hi1), (o2, d2, lo2, hi2)):
        di = di if abs(di) >= 1e-300 else 1e-300       # keeps every product finite
        a, b = (lo - oi) / di, (hi - oi) / di
        near, far = max(near, min(a, b)), min(far, max(a, b))
    return max(near, t0) <= min(far, t1)


@numba.njit(cache=True, nogil=True, inline='always')
def exit_range(vol: tuple[NDArray[Any], ...], ob: int, o0: float, o1: float, o2: float,
               d0: float, d1: float, d2: float) -> float:
    """
    Range along unit d from o at which a ray leaves volume ob (NaN: none found).

    vol: ClosedVolumes.arrays[2:9] (kind, centre, axis, frame, half size, radius, half height);
    the ray is taken to be inside or entering the volume.
    """
    kind, center, axis, frame, half, radius, half_height = vol
    return _exit_range(kind[ob], center[ob, 0], center[ob, 1], center[ob, 2],
                       frame[ob, 0, 0], frame[ob, 1, 0], frame[ob, 2, 0], half[ob, 0],
                       frame[ob, 0, 1], frame[ob, 1, 1], frame[ob, 2, 1], half[ob, 1],
                       frame[ob, 0, 2], frame[ob, 1, 2], frame[ob, 2, 2], half[ob, 2],
                       axis[ob, 0], axis[ob, 1], axis[ob, 2], radius[ob], half_height[ob],
                       o0, o1, o2, d0, d1, d2)


@numba.njit(cache=True, nogil=True)
def _exit_range(kind, c0, c1, c2, f00, f10, f20, h0, f01, f11, f21, h1, f02, f12, f22, h2,
                a0, a1, a2, radius, half_height, o0, o1, o2, d0, d1, d2):
    """exit_range of one volume given as floats: centre c, box frame columns f and half size h."""
    oc0, oc1, oc2 = o0 - c0, o1 - c1, o2 - c2
    if kind == KIND_BOX:
        out = np.inf
        for f0, f1, f2, h in ((f00, f10, f20, h0), (f01, f11, f21, h1), (f02, f12, f22, h2)):
            p = f0 * oc0 + f1 * oc1 + f2 * oc2                # box-frame origin and direction
            q = f0 * d0 + f1 * d1 + f2 * d2
            if q != 0.0:
                out = min(out, (math.copysign(h, q) - p) / q)
        return out if out < np.inf else np.nan
    cyl = kind == KIND_CYLINDER
    if not cyl:
        a0, a1, a2 = 0.0, 0.0, 0.0
    oc_a = oc0 * a0 + oc1 * a1 + oc2 * a2                 # a sphere: no axis term
    d_a = d0 * a0 + d1 * a1 + d2 * a2
    p0, p1, p2 = oc0 - oc_a * a0, oc1 - oc_a * a1, oc2 - oc_a * a2
    q0, q1, q2 = d0 - d_a * a0, d1 - d_a * a1, d2 - d_a * a2
    a = q0 * q0 + q1 * q1 + q2 * q2
    b = p0 * q0 + p1 * q1 + p2 * q2
    c = p0 * p0 + p1 * p1 + p2 * p2 - radius ** 2
    disc = b * b - a * c
    side = np.nan
    if disc >= 0.0 and a > 1e-12:
        side = (-b + math.sqrt(disc)) / a
    elif cyl and a <= 1e-12 and c < 0.0:
        side = np.inf          # along a cylinder's axis inside its wall: only the caps bound it
    if not cyl:
        return side
    cap = (math.copysign(half_height, d_a) - oc_a) / d_a if d_a != 0.0 else np.inf
    return min(side, cap) if side == side else np.nan


@numba.njit(cache=True, nogil=True, inline='always')
def free(ptr: NDArray[np.int64], lo: NDArray[np.float64], hi: NDArray[np.float64], ob: int,
         o0: float, o1: float, o2: float, d0: float, d1: float, d2: float, t0: float, t1: float
         ) -> bool:
    """
    Return True when no object overlapping volume ob can lie on o + t d, t0 <= t <= t1.

    ptr, lo, hi: ClosedVolumes.arrays[9:12], the overlapping objects' padded bounding boxes.
    """
    for c in range(ptr[ob], ptr[ob + 1]):
        if segment_meets_box(o0, o1, o2, d0, d1, d2, t0, t1, lo[c, 0], lo[c, 1], lo[c, 2],
                             hi[c, 0], hi[c, 1], hi[c, 2]):
            return False
    return True


@numba.njit(cache=True)
def _exit_ranges(vol, obj, o, d):
    out = np.empty(obj.shape[0])
    for k in range(obj.shape[0]):
        out[k] = exit_range(vol[2:9], obj[k], o[k, 0], o[k, 1], o[k, 2], d[k, 0], d[k, 1],
                            d[k, 2])
    return out


@numba.njit(cache=True)
def _free_rows(vol, obj, o, d, t0, t1):
    out = np.empty(obj.shape[0], np.bool_)
    for k in range(obj.shape[0]):
        out[k] = free(vol[9], vol[10], vol[11], obj[k], o[k, 0], o[k, 1], o[k, 2], d[k, 0],
                      d[k, 1], d[k, 2], t0[k], t1[k])
    return out


class ClosedVolumes:
    """Analytic exits of a world's closed volumes, and the objects that overlap each one."""

    def __init__(self, geometries, which, on=True):
        """
        Geometries (Sequence of Geometry) in object order; which (O,) bool: the volumes handled.

        Only closed boxes, spheres and cylinders qualify (``handled`` tells which did). on:
        whether the tracer uses them (``arrays[0]``).
        """
        g = list(geometries)
        n = len(g)
        kind = np.array([x.kind for x in g], np.int8)
        closed = np.array([x.closed for x in g], bool)
        self.handled = (np.asarray(which, bool).reshape(n) & closed
                        & np.isin(kind, (KIND_BOX, KIND_SPHERE, KIND_CYLINDER)))
        bounds = [_bounds(x) for x in g]
        # Per handled volume v, the padded bounding boxes of the other objects overlapping it:
        # rows ptr[v]:ptr[v + 1] of lo / hi.
        counts = np.zeros(n, np.int64)
        lo, hi = [], []
        for v in np.flatnonzero(self.handled):
            if bounds[v] is None:
                continue
            for j, bj in enumerate(bounds):
                if j != v and bj is not None and np.all(bj[0] <= bounds[v][1]) \
                        and np.all(bounds[v][0] <= bj[1]):
                    lo.append(bj[0])
                    hi.append(bj[1])
                    counts[v] += 1
        # The tuple the compiled functions take (numba: arrays of fixed dtypes).
        self.arrays = (
            bool(on and self.handled.any()), self.handled, kind,
            np.array([x.center for x in g], np.float64).reshape(-1, 3),
            np.array([x.axis for x in g], np.float64).reshape(-1, 3),
            np.array([x.frame for x in g], np.float64).reshape(-1, 3, 3),
            np.array([x.half_size_m for x in g], np.float64).reshape(-1, 3),
            np.array([x.radius_m for x in g], np.float64),
            np.array([x.half_height_m for x in g], np.float64),
            np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            np.array(lo, np.float64).reshape(-1, 3), np.array(hi, np.float64).reshape(-1, 3))

    def exit_range(self, obj: ArrayLike, o: ArrayLike, d: ArrayLike) -> NDArray[np.float64]:
        """Ranges (K,) at which rays o, d (K, 3) leave volumes obj (K,) (NaN: none found)."""
        return _exit_ranges(self.arrays, np.asarray(obj, np.int64), np.asarray(o, np.float64),
                            np.asarray(d, np.float64))

    def free(self, obj: ArrayLike, o: ArrayLike, d: ArrayLike, t0: ArrayLike, t1: ArrayLike
             ) -> NDArray[np.bool_]:
        """(K,) bool: no object overlapping volume obj (K,) can lie on o + t d, t0..t1 (K,)."""
        return _free_rows(self.arrays, np.asarray(obj, np.int64), np.asarray(o, np.float64),
                          np.asarray(d, np.float64), np.asarray(t0, np.float64),
                          np.asarray(t1, np.float64))
