"""
Triangles of the object types in their own frame: plane, boxes, sphere, cylinder, height grid.

A plane of size_m [x, y] faces +z; box, sphere and cylinder (axis z) are centred at 0, their
triangles wound outward. Spheres and cylinders are fine tessellations (48 x 24, 48 sides) whose
hits the tracer moves onto the exact surface (raycast/quadrics.py).
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


def _outward(vertices: F64, triangles: I64) -> I64:
    """Flip triangles of a convex template (centred at 0) whose normal points inwards."""
    a, b, c = (vertices[triangles[:, k]] for k in range(3))
    inward = np.sum(np.cross(b - a, c - a) * (a + b + c), axis=1) < 0.0
    triangles[inward] = triangles[inward][:, ::-1]
    return triangles


def _sphere_template(n_lon: int = 48, n_lat: int = 24) -> tuple[F64, I64]:
    """Return a unit UV sphere: vertices (V, 3), outward triangles (T, 3)."""
    theta = np.pi * np.arange(1, n_lat) / n_lat
    phi = 2.0 * np.pi * np.arange(n_lon) / n_lon
    th, ph = np.meshgrid(theta, phi, indexing='ij')
    ring = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], -1)
    v = np.concatenate([[[0, 0, 1]], ring.reshape(-1, 3), [[0, 0, -1]]])
    k = np.arange(n_lon)
    k1 = (k + 1) % n_lon
    south = v.shape[0] - 1
    tris = [np.stack([np.zeros(n_lon, int), 1 + k, 1 + k1], 1),
            np.stack([np.full(n_lon, south), 1 + (n_lat - 2) * n_lon + k,
                      1 + (n_lat - 2) * n_lon + k1], 1)]
    row = 1 + n_lon * np.arange(n_lat - 2)[:, None]
    a, b, c, d = row + k, row + k1, row + n_lon + k, row + n_lon + k1
    tris += [np.stack([a, b, d], -1).reshape(-1, 3), np.stack([a, d, c], -1).reshape(-1, 3)]
    return v, _outward(v, np.concatenate(tris).astype(np.int64))


def _cylinder_template(n: int = 48) -> tuple[F64, I64, int]:
    """Cylinder of radius 1, height 1 centred at 0: vertices, triangles (side ones first)."""
    phi = 2.0 * np.pi * np.arange(n) / n
    ring = np.stack([np.cos(phi), np.sin(phi)], 1)
    v = np.concatenate([np.c_[ring, np.full(n, -0.5)], np.c_[ring, np.full(n, 0.5)],
                        [[0, 0, -0.5], [0, 0, 0.5]]])
    k = np.arange(n)
    k1 = (k + 1) % n
    side = np.concatenate([np.stack([k, k1, n + k1], 1), np.stack([k, n + k1, n + k], 1)])
    caps = np.concatenate([np.stack([np.full(n, 2 * n), k1, k], 1),
                           np.stack([np.full(n, 2 * n + 1), n + k, n + k1], 1)])
    return v, _outward(v, np.concatenate([side, caps]).astype(np.int64)), 2 * n


_BOX_V = np.array([[(i & 1) - 0.5, ((i >> 1) & 1) - 0.5, ((i >> 2) & 1) - 0.5] for i in range(8)])
_BOX_T = _outward(_BOX_V, np.array([[0, 1, 3], [0, 3, 2], [4, 5, 7], [4, 7, 6], [0, 1, 5],
                                    [0, 5, 4], [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4],
                                    [1, 3, 7], [1, 7, 5]]))
# Unit templates: SPHERE (vertices, triangles); CYLINDER (vertices, triangles, side count).
SPHERE = _sphere_template()
CYLINDER = _cylinder_template()


def plane(size_m: Sequence[float] | NDArray[np.float64]) -> tuple[F64, I64]:
    """Plane of size_m (sx, sy) centred at 0 facing +z: vertices (4, 3), triangles (2, 3)."""
    sx, sy = size_m
    v = np.array([[-sx, -sy, 0], [sx, -sy, 0], [sx, sy, 0], [-sx, sy, 0]]) / 2.0
    return v, np.array([[0, 1, 2], [0, 2, 3]])


def boxes(centers: ArrayLike, sizes: ArrayLike) -> tuple[F64, I64]:
    """Triangles of B axis-aligned boxes: vertices (8B, 3), triangles (12B, 3) int64."""
    centers = np.asarray(centers, float).reshape(-1, 3)
    sizes = np.asarray(sizes, float).reshape(-1, 3)
    v = centers[:, None, :] + sizes[:, None, :] * _BOX_V[None]
    t = _BOX_T[None] + 8 * np.arange(centers.shape[0])[:, None, None]
    return v.reshape(-1, 3), t.reshape(-1, 3)


def grid(heights: NDArray[np.floating], cell_m: float) -> tuple[F64, I64]:
    """Triangulate heights (rows along +y, columns along +x) at cell_m: vertices, triangles up."""
    rows, cols = heights.shape
    jj, ii = np.meshgrid(np.arange(cols), np.arange(rows))
    v = np.stack([jj * cell_m, ii * cell_m, heights], -1).reshape(-1, 3)
    a = (np.arange(rows - 1)[:, None] * cols + np.arange(cols - 1)).ravel()
    t = np.concatenate([np.stack([a, a + 1, a + cols + 1], 1),
                        np.stack([a, a + cols + 1, a + cols], 1)])
    return v, t.astype(np.int64)
