"""
Ground texture, a fixed function of the world position: albedo and micro-slope per cell.

Albedo exp(sd z - sd^2 / 2) per 0.1 m cell and a normal tilt of micro_slope_deg x z in the plane of
incidence per 0.25 m cell, each z ~ N(0, 1) from a SplitMix64 hash of the integer cell (x, y)
through Box-Muller. ``GroundTexture`` caches the values of a world's ground cells per material,
64 x 64 cells at a time, so a scan gathers them (compiled, numba) instead of hashing every hit.
"""

import math

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.raycast.arrays import take_rows

ALBEDO_CELL_M = 0.1
SLOPE_CELL_M = 0.25
_SALT_ALBEDO, _SALT_SLOPE = 0x5EED0A1BED0, 0x5EED051093


def _splitmix64(x):
    """Mix uint64 values (vectorised SplitMix64 finaliser; wraps modulo 2**64), a new array."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    t = x >> np.uint64(30)
    x ^= t
    x *= np.uint64(0xBF58476D1CE4E5B9)
    np.right_shift(x, np.uint64(27), out=t)
    x ^= t
    x *= np.uint64(0x94D049BB133111EB)
    np.right_shift(x, np.uint64(31), out=t)
    x ^= t
    return x


def cell_normal(ix: ArrayLike, iy: ArrayLike, salt: int) -> NDArray[np.float64]:
    """Return a fixed N(0, 1) value per integer cell (ix, iy) int64 arrays (hash + Box-Muller)."""
    ux = np.asarray(ix, np.int64).view(np.uint64)
    uy = np.asarray(iy, np.int64).view(np.uint64)
    h1 = _splitmix64(uy ^ np.uint64(salt))
    h1 ^= ux
    h1 = _splitmix64(h1)
    h2 = _splitmix64(h1)
    scale = 1.0 / 9007199254740992.0      # 2**-53
    h1 >>= np.uint64(11)
    u1 = h1.astype(np.float64)
    u1 += 0.5
    u1 *= scale
    h2 >>= np.uint64(11)
    u2 = h2.astype(np.float64)
    u2 *= scale
    np.log(u1, out=u1)
    u1 *= -2.0
    np.sqrt(u1, out=u1)
    u2 *= 2.0 * np.pi
    np.cos(u2, out=u2)
    u1 *= u2
    return u1


def _cells(points, cell_m):
    """Integer cell indices (ix, iy) int64 of the points (H, 3) on a cell_m grid."""
    return (np.floor(points[:, 0] / cell_m).astype(np.int64),
            np.floor(points[:, 1] / cell_m).astype(np.int64))


def ground_albedo(points: NDArray[np.float64], sd: ArrayLike) -> NDArray[np.float64]:
    """Albedo multiplier (H,) float64 exp(sd z - sd^2 / 2) of the 0.1 m cell under each point."""
    return _albedo(*_cells(points, ALBEDO_CELL_M), sd)


def _albedo(ix, iy, sd):
    """Albedo (K,) float64 of cells (ix, iy) for sd (scalar or (K,))."""
    z = cell_normal(ix, iy, _SALT_ALBEDO)
    return np.exp(sd * z - 0.5 * sd * sd)


def _albedo_cells(ix, iy, sd):
    """Albedo (K, 1) float32 of cells (ix, iy) for sd (scalar or (K,))."""
    return _albedo(ix, iy, sd).astype(np.float32)[:, None]


def _tilt_cells(ix, iy, slope_deg):
    """Return cos and sin (K, 2) float64 of the micro-slope tilt angle of cells (ix, iy)."""
    delta = np.radians(slope_deg) * cell_normal(ix, iy, _SALT_SLOPE)
    return np.stack([np.cos(delta), np.sin(delta)], axis=1)


@numba.njit(cache=True, nogil=True)
def _tilt(normals, dirs, cos_d, sin_d):
    """
    Turn unit normals (H, 3) towards the rays' along-surface direction by an angle (its cos, sin).

    The turn is in the plane of incidence; rays along the normal (no such plane) keep it.
    Returns the turned normals (H, 3) and |cos| (H,) of the rays dirs (H, 3) against them.
    """
    out = np.empty_like(normals)
    cos = np.empty(normals.shape[0])
    for k in range(normals.shape[0]):
        n0, n1, n2 = normals[k, 0], normals[k, 1], normals[k, 2]
        d0, d1, d2 = dirs[k, 0], dirs[k, 1], dirs[k, 2]
        dn = ((d0 * n0 + 0.0) + d1 * n1) + d2 * n2
        t0, t1, t2 = d0 - dn * n0, d1 - dn * n1, d2 - dn * n2
        length = math.sqrt(((t0 * t0 + 0.0) + t1 * t1) + t2 * t2)
        c, s = cos_d[k], sin_d[k]
        if length > 1e-9:
            t0, t1, t2 = t0 / length, t1 / length, t2 / length
        else:       # no plane of incidence: the angle is 0 (cos 1, sin 0)
            t0 = t1 = t2 = 0.0
            c, s = 1.0, 0.0
        n0, n1, n2 = c * n0 + s * t0, c * n1 + s * t1, c * n2 + s * t2
        out[k, 0], out[k, 1], out[k, 2] = n0, n1, n2
        cos[k] = abs(((n0 * d0 + 0.0) + n1 * d1) + n2 * d2)
    return out, cos


# Per texture: cell size (m), per-cell values f(ix, iy, value), their dtype and width.
_KINDS = {'albedo': (ALBEDO_CELL_M, _albedo_cells, np.float32, 1),
          'tilt': (SLOPE_CELL_M, _tilt_cells, np.float64, 2)}
TILE = 64


@numba.njit(cache=True, nogil=True)
def _lookup(points, mat, cell_m, grids, values, out, state):
    """
    Gather the cached values (K, width) of hits at points (K, 3) of materials mat (K,).

    grids (17, 5) int64 per material: ix0, iy0, nx, ny, offset into values (-1: no grid).
    state (K,) is set to 0 (gathered), 1 (its tile is not filled yet) or 2 (outside the grids).
    """
    for k in range(mat.shape[0]):
        m = mat[k]          # (no row view grids[m]: a view costs an atomic reference count)
        jx = np.int64(math.floor(points[k, 0] / cell_m)) - grids[m, 0]
        jy = np.int64(math.floor(points[k, 1] / cell_m)) - grids[m, 1]
        if grids[m, 4] < 0 or jx < 0 or jx >= grids[m, 2] or jy < 0 or jy >= grids[m, 3]:
            state[k] = 2
            continue
        row = grids[m, 4] + jx * grids[m, 3] + jy
        if np.isnan(values[row, 0]):
            state[k] = 1
            continue
        state[k] = 0
        for w in range(values.shape[1]):
            out[k, w] = values[row, w]


class _Cache:
    """
    Per-cell values of one texture kind and value table over every ground material's box.

    The texture is a fixed function of the cell, so it is computed once per cell (on the first
    hit in its 64 x 64-cell tile) instead of once per hit: a gather replaces the hash, log,
    sqrt and cos. Materials whose box exceeds MAX_CELLS cells are hashed per hit.
    """

    def __init__(self, kind, boxes, table, max_cells):
        cell, fill, dtype, width = _KINDS[kind]
        self.cell, self.fill, self.table = cell, fill, np.asarray(table, np.float64)
        self.grids = np.full((self.table.size, 5), -1, np.int64)
        total = 0
        for mat, (lo, hi) in boxes.items():
            i0 = np.floor(lo / cell).astype(np.int64) - 1
            n = np.floor(hi / cell).astype(np.int64) + 2 - i0
            if mat >= self.table.size or n[0] * n[1] > max_cells:
                continue
            nx, ny = -(-n // TILE) * TILE
            self.grids[mat] = (i0[0], i0[1], nx, ny, total)
            total += nx * ny
        self.values = np.full((total, width), np.nan, dtype)   # NaN: not filled

    def lookup(self, points, mat):
        """Return the values (K, width) of hits at points (K, 3) of materials mat (K,) uint8."""
        out = np.empty((mat.size, self.values.shape[1]), self.values.dtype)
        state = np.empty(mat.size, np.int8)
        _lookup(points, mat, self.cell, self.grids, self.values, out, state)
        todo = np.flatnonzero(state)
        if todo.size == 0:
            return out
        ix, iy = _cells(take_rows(points, todo), self.cell)
        fill = np.flatnonzero(state[todo] == 1)
        for m in np.unique(mat[todo[fill]]):
            rows = fill[mat[todo[fill]] == m]
            self._fill(int(m), ix[rows], iy[rows])
        if fill.size:
            out[todo[fill]] = self._at(mat[todo[fill]], ix[fill], iy[fill])
        hashed = np.flatnonzero(state[todo] == 2)
        if hashed.size:
            out[todo[hashed]] = self.fill(ix[hashed], iy[hashed], self.table[mat[todo[hashed]]])
        return out

    def _at(self, mat, ix, iy):
        """Return the cached values of cells (ix, iy) of materials mat (all inside their grid)."""
        g = self.grids[mat]
        return self.values[g[:, 4] + (ix - g[:, 0]) * g[:, 3] + (iy - g[:, 1])]

    def _fill(self, mat, ix, iy):
        """Fill the tiles of material mat that hold the cells (ix, iy)."""
        ix0, iy0, nx, ny, offset = self.grids[mat]
        nty = ny // TILE
        tiles = np.unique((ix - ix0) // TILE * nty + (iy - iy0) // TILE)
        k = np.arange(TILE)
        jx = ((tiles // nty) * TILE)[:, None, None] + k[None, :, None]
        jy = ((tiles % nty) * TILE)[:, None, None] + k[None, None, :]
        jx, jy = (a.ravel() for a in np.broadcast_arrays(jx, jy))
        self.values[offset + jx * ny + jy] = self.fill(jx + ix0, jy + iy0, self.table[mat])


class GroundTexture:
    """Cached ground albedo and micro-slope tilt of a world's ground objects, per material."""

    MAX_CELLS = 1 << 22          # per material and cell size; larger grounds use the hash

    def __init__(self, geometries, material, ground):
        """Bounding boxes (x0, y0, x1, y1) per material of the ground objects' vertices."""
        self._boxes = {}
        for geom, mat, is_ground in zip(geometries, material, ground):
            if not is_ground or geom.vertices.shape[0] == 0:
                continue
            lo, hi = geom.vertices[:, :2].min(axis=0), geom.vertices[:, :2].max(axis=0)
            box = self._boxes.get(int(mat))
            self._boxes[int(mat)] = (np.minimum(box[0], lo), np.maximum(box[1], hi)) \
                if box else (lo, hi)
        self._caches = {}

    def _cache(self, kind, table):
        """Return the _Cache of texture kind for the per-material value table (17,)."""
        key = (kind, np.asarray(table, np.float64).tobytes())
        if key not in self._caches:
            self._caches[key] = _Cache(kind, self._boxes, table, self.MAX_CELLS)
        return self._caches[key]

    def albedo(self, points: NDArray[np.float64], mat: NDArray[np.uint8], sd_table: ArrayLike
               ) -> NDArray[np.float32]:
        """Albedo (K,) float32 of ground hits at points (K, 3) of materials mat (K,) uint8."""
        return self._cache('albedo', sd_table).lookup(points, mat)[:, 0]

    def tilt(self, points: NDArray[np.float64], normals: NDArray[np.float64],
             dirs: NDArray[np.float64], mat: NDArray[np.uint8], slope_table: ArrayLike
             ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """
        Tilt the unit normals (K, 3) of ground hits by their cells' micro-slope angles.

        points (K, 3), dirs (K, 3) of the hits, mat (K,) their materials, slope_table (17,) deg.
        Returns the tilted normals (K, 3) and the |cos| (K,) of the rays against them.
        """
        cs = self._cache('tilt', slope_table).lookup(points, mat)
        return _tilt(np.ascontiguousarray(normals), np.ascontiguousarray(dirs),
                     np.ascontiguousarray(cs[:, 0]), np.ascontiguousarray(cs[:, 1]))
