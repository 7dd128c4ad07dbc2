"""
Where a ray leaves a closed volume (box, sphere, cylinder), found analytically, not by casting.

A ray that enters a closed foliage volume goes on from inside it; the next cast used to meet the
volume's own far face, which the tracer passes without a hit, and cast once more beyond it. When
nothing else lies inside the volume along that stretch of the ray, the far face is where the ray
leaves, so the tracer can start the next cast just past it. ``ClosedVolumes`` gives that exit
range and says, per ray, whether the stretch is free: it is not when the axis-aligned bounding
box of any object that overlaps the volume (a trunk in a crown, the soil under a crop row) meets
it, and then the tracer casts as before.
"""

import numpy as np

from ubot_lidar_sim.core.raycast.arrays import dot3
from ubot_lidar_sim.core.raycast.geometry import KIND_BOX, KIND_CYLINDER, KIND_SPHERE

_AABB_PAD_M = 1e-4          # bounding boxes grow by this (and 1e-6 of their extent) each way


def _bounds(geom):
    """Return the (lo, hi) (3,) of a geometry's vertices, padded; None without triangles."""
    if geom.triangles.shape[0] == 0:
        return None
    lo, hi = geom.vertices.min(axis=0), geom.vertices.max(axis=0)
    pad = _AABB_PAD_M + 1e-6 * np.abs(np.concatenate([lo, hi])).max()
    return lo - pad, hi + pad


def segment_meets_boxes(o, d, t0, t1, lo, hi):
    """
    Return (P,) bool: the segment o + t d, t0 <= t <= t1, meets the box [lo, hi] (slab test).

    o, d, lo, hi (P, 3); t0, t1 (P,). A zero direction component is taken as 1e-300 of either
    sign, which keeps every product finite.
    """
    d_safe = np.where(np.abs(d) < 1e-300, 1e-300, d)
    a = (lo - o) / d_safe
    b = (hi - o) / d_safe
    near = np.minimum(a, b).max(axis=1)
    far = np.maximum(a, b).min(axis=1)
    return np.maximum(near, t0) <= np.minimum(far, t1)


class ClosedVolumes:
    """Analytic exits of a world's closed volumes, and the objects that overlap each one."""

    def __init__(self, geometries, which):
        """
        Geometries (Sequence of Geometry) in object order; which (O,) bool: the volumes handled.

        Only closed boxes, spheres and cylinders qualify (``handled`` tells which did).
        """
        g = list(geometries)
        n = len(g)
        self.kind = np.array([x.kind for x in g], np.int8)
        self.center = np.array([x.center for x in g], np.float64).reshape(-1, 3)
        self.axis = np.array([x.axis for x in g], np.float64).reshape(-1, 3)
        self.frame = np.array([x.frame for x in g], np.float64).reshape(-1, 3, 3)
        self.half = np.array([x.half_size_m for x in g], np.float64).reshape(-1, 3)
        self.radius = np.array([x.radius_m for x in g], np.float64)
        self.half_height = np.array([x.half_height_m for x in g], np.float64)
        closed = np.array([x.closed for x in g], bool)
        self.handled = (np.asarray(which, bool) & closed
                        & np.isin(self.kind, (KIND_BOX, KIND_SPHERE, KIND_CYLINDER)))
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
        self.ptr = np.concatenate([[0], np.cumsum(counts)])
        self.lo = np.array(lo, np.float64).reshape(-1, 3)
        self.hi = np.array(hi, np.float64).reshape(-1, 3)

    def exit_range(self, obj, o, d):
        """
        Range (K,) along d from o at which each ray leaves volume obj (K,) (NaN: none).

        o, d (K, 3) float64, d unit; the ray is taken to be inside or entering the volume.
        """
        k = obj.shape[0]
        out = np.full(k, np.nan)
        kind = self.kind[obj]
        rows = np.flatnonzero(kind == KIND_BOX)
        if rows.size:
            ob = obj[rows]
            frame = self.frame[ob]
            p = np.einsum('kji,kj->ki', frame, o[rows] - self.center[ob])   # box-frame origin
            q = np.einsum('kji,kj->ki', frame, d[rows])                     # and direction
            with np.errstate(divide='ignore', invalid='ignore'):
                far = (np.copysign(self.half[ob], q) - p) / q
            out[rows] = np.where(np.isfinite(far), far, np.inf).min(axis=1)
        rows = np.flatnonzero((kind == KIND_SPHERE) | (kind == KIND_CYLINDER))
        if rows.size:
            ob = obj[rows]
            cyl = self.kind[ob] == KIND_CYLINDER
            ax = np.where(cyl[:, None], self.axis[ob], 0.0)   # a sphere: no axis term
            oc = o[rows] - self.center[ob]
            oc_a, d_a = dot3(oc, ax), dot3(d[rows], ax)
            oc_p = oc - oc_a[:, None] * ax
            d_p = d[rows] - d_a[:, None] * ax
            a = dot3(d_p, d_p)
            b = dot3(oc_p, d_p)
            c = dot3(oc_p, oc_p) - self.radius[ob] ** 2
            disc = b * b - a * c
            with np.errstate(divide='ignore', invalid='ignore'):
                side = np.where((disc >= 0.0) & (a > 1e-12), (-b + np.sqrt(disc)) / a, np.nan)
                # Parallel to a cylinder's axis: only the caps bound the ray (inside the wall).
                side = np.where(cyl & (a <= 1e-12) & (c < 0.0), np.inf, side)
                cap = (np.copysign(self.half_height[ob], d_a) - oc_a) / d_a
            cap = np.where(cyl & np.isfinite(cap), cap, np.inf)
            out[rows] = np.minimum(side, cap)
        return out

    def free(self, obj, o, d, t0, t1):
        """
        Return (K,) bool: no object overlapping volume obj (K,) can lie on o + t d, t0..t1.

        Conservative: a stretch that meets another object's padded bounding box is not free.
        """
        n = self.ptr[obj + 1] - self.ptr[obj]
        out = np.ones(obj.shape[0], bool)
        pairs = np.flatnonzero(n)
        if pairs.size:
            rep = n[pairs]
            row = np.repeat(pairs, rep)
            cand = np.repeat(self.ptr[obj[pairs]] - np.cumsum(rep) + rep, rep) + np.arange(
                rep.sum())
            meets = segment_meets_boxes(o[row], d[row], t0[row], t1[row], self.lo[cand],
                                        self.hi[cand])
            out[row[meets]] = False
        return out
