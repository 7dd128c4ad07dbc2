"""
The footprint swept over a whole move against the world's triangles: never sampled.

The base's collision volume is the footprint polygon P extruded over the slab z0 <= z <= z1
(ground_clearance_m to body_height_m above the ground). A triangle meets the extruded P exactly
where its part inside the slab, projected on the ground, meets P. That part's outline is made
of the triangle's edges clipped to the slab and of the segments where the triangle crosses the
planes z0 and z1; its corners are the clipped edges' ends. For P translated by t d (0 <= t <= 1)
the first contact of two such outlines is always a corner of one on an edge of the other, so
the smallest t over (a) P's corners moving along d against the outline's segments and (b) the
outline's corners moving along -d against P's edges is the exact time of first contact, for
objects of any thickness (a 5 mm post as a wall). ``overlaps`` finds a triangle part inside P
or crossing its outline at one pose. Only triangles whose bounding box meets the slab and the
swept box are looked at, found through a grid of CELL_M cells (a triangle listed in every cell
its bounding box covers; one covering more than MAX_CELLS is always looked at). Arrays
throughout: no loop over triangles, corners or edges.
"""

import numpy as np
from numpy.typing import NDArray

EPS = 1e-12
CELL_M = 0.5
MAX_CELLS = 4096
_ROW = 1 << 31              # cell key = x cell x _ROW + y cell (cells within +-1e9)


def _cross(a, b):
    """Return the z of the 2D cross product of (..., 2) arrays."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _slab_outline(tri, z0, z1):
    """
    Return (segments (N, 9, 2, 2), segment mask (N, 9), corners (N, 6, 2), corner mask (N, 6)).

    tri (N, 3, 3): the triangles' parts inside z0 <= z <= z1, projected on the ground (module).
    """
    a, b = tri, np.roll(tri, -1, axis=1)                 # edges a -> b, (N, 3, 3)
    dz = b[..., 2] - a[..., 2]
    flat = np.abs(dz) < EPS
    with np.errstate(divide='ignore', invalid='ignore'):
        t0 = np.where(flat, 0.0, (z0 - a[..., 2]) / dz)
        t1 = np.where(flat, 1.0, (z1 - a[..., 2]) / dz)
    lo = np.clip(np.minimum(t0, t1), 0.0, 1.0)
    hi = np.clip(np.maximum(t0, t1), 0.0, 1.0)
    inside_flat = (a[..., 2] >= z0) & (a[..., 2] <= z1)
    edge_ok = np.where(flat, inside_flat, lo <= hi)
    p_lo = a[..., :2] + lo[..., None] * (b - a)[..., :2]
    p_hi = a[..., :2] + hi[..., None] * (b - a)[..., :2]
    segs = [np.stack([p_lo, p_hi], axis=2)]              # (N, 3, 2, 2)
    masks = [edge_ok]
    for h in (z0, z1):                                     # the cuts of the slab's planes
        crosses = ~flat & ((a[..., 2] - h) * (b[..., 2] - h) <= 0.0)
        with np.errstate(divide='ignore', invalid='ignore'):
            s = np.where(flat, 0.0, (h - a[..., 2]) / dz)
        pts = a[..., :2] + s[..., None] * (b - a)[..., :2]   # (N, 3, 2)
        for i, j in ((0, 1), (1, 2), (0, 2)):
            segs.append(np.stack([pts[:, i], pts[:, j]], axis=1)[:, None])
            masks.append((crosses[:, i] & crosses[:, j])[:, None])
    corners = np.concatenate([p_lo, p_hi], axis=1)
    corner_ok = np.concatenate([edge_ok, edge_ok], axis=1)
    return (np.concatenate(segs, axis=1), np.concatenate(masks, axis=1), corners, corner_ok)


def _ray_hits(origins, d, seg_a, seg_b):
    """
    Return t >= 0 where origins + t d meets the segments seg_a -> seg_b (inf where not).

    origins (..., 2), seg_a and seg_b (..., 2), broadcast together; d (2,).
    """
    e = seg_b - seg_a
    w = seg_a - origins
    denom = _cross(d, e)
    with np.errstate(divide='ignore', invalid='ignore'):
        t = _cross(w, e) / denom
        u = _cross(w, d) / denom
    ok = (np.abs(denom) > EPS) & (t >= -EPS) & (u >= -EPS) & (u <= 1.0 + EPS)
    return np.where(ok, np.maximum(t, 0.0), np.inf)


class TriangleSweep:
    """The world's static triangles that can collide (see the module)."""

    def __init__(self, world, ignored_names):
        skip = set(ignored_names)
        tris = [g.vertices[g.triangles] for o, g in zip(world.objects, world.geometries)
                if o.name not in skip and len(g.triangles)]
        self._tri = np.concatenate(tris) if tris else np.zeros((0, 3, 3))
        self._zlo, self._zhi = self._tri[..., 2].min(axis=1), self._tri[..., 2].max(axis=1)
        self._lo, self._hi = self._tri[..., :2].min(axis=1), self._tri[..., :2].max(axis=1)
        c_lo = np.floor(self._lo / CELL_M).astype(np.int64)
        span = np.floor(self._hi / CELL_M).astype(np.int64) - c_lo + 1
        count = span[:, 0] * span[:, 1]
        big = count > MAX_CELLS
        self._big = np.flatnonzero(big)
        small = np.flatnonzero(~big)
        ids = np.repeat(small, count[small])
        first = np.repeat(np.cumsum(count[small]) - count[small], count[small])
        local = np.arange(len(ids)) - first
        width = span[ids, 0]
        keys = (c_lo[ids, 0] + local % width) * _ROW + (c_lo[ids, 1] + local // width)
        order = np.argsort(keys, kind='stable')
        self._keys, self._ids = keys[order], ids[order]

    def _near(self, lo, hi, z0, z1):
        """Return the triangles whose bounding box meets [lo, hi] x [z0, z1]."""
        c0, c1 = np.floor(lo / CELL_M).astype(np.int64), np.floor(hi / CELL_M).astype(np.int64)
        # the cells' keys, y-major as meshgrid(x, y) orders them, by broadcasting
        want = (np.arange(c0[0], c1[0] + 1)[None, :] * _ROW
                + np.arange(c0[1], c1[1] + 1)[:, None]).ravel()
        a = np.searchsorted(self._keys, want, 'left')
        b = np.searchsorted(self._keys, want, 'right')
        n = b - a
        rows = np.repeat(a - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        cand = np.unique(np.r_[self._ids[rows], self._big])
        keep = (self._zhi[cand] >= z0) & (self._zlo[cand] <= z1) & \
            np.all(self._hi[cand] >= lo, axis=1) & np.all(self._lo[cand] <= hi, axis=1)
        return self._tri[cand[keep]]

    def first_contact(self, poly: NDArray[np.float64], d: NDArray[np.float64], z0: float,
                      z1: float) -> float:
        """Return the smallest t in [0, 1] where poly (P, 2) + t d (2,) meets a triangle (inf)."""
        d = np.asarray(d, np.float64)
        tri = self._near(np.minimum(poly.min(0), poly.min(0) + d),
                         np.maximum(poly.max(0), poly.max(0) + d), z0, z1)
        if not len(tri) or not np.any(d):
            return np.inf
        segs, seg_ok, corners, corner_ok = _slab_outline(tri, z0, z1)
        # (a) P's corners along d against the outlines' segments: (P, N, 9).
        ta = _ray_hits(poly[:, None, None], d, segs[None, ..., 0, :], segs[None, ..., 1, :])
        ta = np.where(seg_ok[None], ta, np.inf)
        # (b) the outlines' corners along -d against P's edges: (N, 6, P).
        nxt = np.roll(poly, -1, axis=0)
        tb = _ray_hits(corners[..., None, :], -d, poly[None, None], nxt[None, None])
        tb = np.where(corner_ok[..., None], tb, np.inf)
        t = min(float(ta.min(initial=np.inf)), float(tb.min(initial=np.inf)))
        return t if t <= 1.0 else np.inf

    def overlaps(self, poly: NDArray[np.float64], z0: float, z1: float) -> bool:
        """Return True when a triangle's slab part crosses poly's outline or lies inside it."""
        tri = self._near(poly.min(0), poly.max(0), z0, z1)
        if not len(tri):
            return False
        segs, seg_ok, corners, corner_ok = _slab_outline(tri, z0, z1)
        # A corner inside P (crossing number, even-odd): (N, 6, P) edge tests.
        a, b = poly[None, None], np.roll(poly, -1, axis=0)[None, None]
        c = corners[..., None, :]
        straddle = (a[..., 1] > c[..., 1]) != (b[..., 1] > c[..., 1])
        with np.errstate(divide='ignore', invalid='ignore'):
            x = a[..., 0] + (c[..., 1] - a[..., 1]) * (b[..., 0] - a[..., 0]) / (
                b[..., 1] - a[..., 1])
        inside = (np.sum(straddle & (c[..., 0] < x), axis=-1) % 2 == 1) & corner_ok
        if inside.any():
            return True
        # A segment crossing an edge of P: each P edge as a ray of length 1 against segments.
        d = (np.roll(poly, -1, axis=0) - poly)[:, None, None]
        e = segs[None, ..., 1, :] - segs[None, ..., 0, :]
        w = segs[None, ..., 0, :] - poly[:, None, None]
        denom = _cross(d, e)
        with np.errstate(divide='ignore', invalid='ignore'):
            t = _cross(w, e) / denom
            u = _cross(w, d) / denom
        hit = (np.abs(denom) > EPS) & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1) & seg_ok[None]
        return bool(hit.any())
