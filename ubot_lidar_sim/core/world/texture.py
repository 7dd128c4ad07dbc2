"""
Ground texture, a fixed function of the world position: albedo and micro-slope per cell.

Albedo exp(sd z - sd^2 / 2) per 0.1 m cell and a normal tilt of micro_slope_deg x z in the plane of
incidence per 0.25 m cell, each z ~ N(0, 1) from a SplitMix64 hash of the integer cell (x, y)
through Box-Muller. ``GroundTexture`` caches the values of a world's ground cells per material,
64 x 64 cells at a time, so a scan gathers them instead of hashing every hit.
"""

import numpy as np

from ubot_lidar_sim.core.raycast.arrays import dot3, take_rows

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


def cell_normal(ix, iy, salt):
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


def ground_albedo(points, sd):
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


def _tilt(normals, dirs, cos_d, sin_d):
    """
    Turn unit normals (H, 3) towards the rays' along-surface direction by an angle (its cos, sin).

    The turn is in the plane of incidence; rays along the normal (no such plane) keep it.
    """
    dn = dot3(dirs, normals)
    tangent = dirs - dn[:, None] * normals
    length = np.sqrt(dot3(tangent, tangent))
    ok = length > 1e-9
    if ok.all():
        tangent /= length[:, None]
    else:       # no plane of incidence: the angle is 0 (cos 1, sin 0)
        tangent = np.where(ok[:, None], tangent / np.where(ok, length, 1.0)[:, None], 0.0)
        cos_d, sin_d = np.where(ok, cos_d, 1.0), np.where(ok, sin_d, 0.0)
    out = cos_d[:, None] * normals
    out += sin_d[:, None] * tangent
    return out


# Per texture: cell size (m), per-cell values f(ix, iy, value), their dtype and width.
_KINDS = {'albedo': (ALBEDO_CELL_M, _albedo_cells, np.float32, 1),
          'tilt': (SLOPE_CELL_M, _tilt_cells, np.float64, 2)}


class _CellGrid:
    """
    Per-cell values of one material over its ground's bounding box, filled 64 x 64 cells at a time.

    The texture is a fixed function of the cell, so it is computed once per cell (on the first
    hit in its tile) instead of once per hit: a gather replaces the hash, log, sqrt and cos.
    """

    TILE = 64

    def __init__(self, ix0, iy0, nx, ny, fill, dtype, width):
        t = self.TILE
        self.ix0, self.iy0 = ix0, iy0
        self.nty = -(-ny // t)
        self.nx, self.ny = -(-nx // t) * t, self.nty * t
        self.values = np.full((self.nx * self.ny, width), np.nan, dtype)   # NaN: not filled
        self.fill = fill

    def lookup(self, ix, iy):
        """Return (rows inside the grid (K,), their values (K, width))."""
        jx, jy = ix - self.ix0, iy - self.iy0
        rows = np.flatnonzero((jx >= 0) & (jx < self.nx) & (jy >= 0) & (jy < self.ny))
        flat = jx[rows] * self.ny + jy[rows]
        values = take_rows(self.values, flat)
        todo = np.flatnonzero(np.isnan(values[:, 0]))
        if todo.size:
            self._fill(np.unique(flat[todo] // self.ny // self.TILE * self.nty
                                 + flat[todo] % self.ny // self.TILE))
            values[todo] = take_rows(self.values, flat[todo])
        return rows, values

    def _fill(self, tiles):
        t = self.TILE
        k = np.arange(t)
        jx = ((tiles // self.nty) * t)[:, None, None] + k[None, :, None]
        jy = ((tiles % self.nty) * t)[:, None, None] + k[None, None, :]
        jx, jy = np.broadcast_arrays(jx, jy)
        jx, jy = jx.ravel(), jy.ravel()
        self.values[jx * self.ny + jy] = self.fill(jx + self.ix0, jy + self.iy0)


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
        self._grids = {}

    def _grid(self, kind, mat, value):
        key = (kind, mat, float(value))
        if key not in self._grids:
            grid = None
            if mat in self._boxes:
                cell, fill, dtype, width = _KINDS[kind]
                lo, hi = self._boxes[mat]
                i0 = np.floor(lo / cell).astype(np.int64) - 1
                n = np.floor(hi / cell).astype(np.int64) + 2 - i0
                if n[0] * n[1] <= self.MAX_CELLS:
                    grid = _CellGrid(int(i0[0]), int(i0[1]), int(n[0]), int(n[1]),
                                     lambda ix, iy, f=fill, v=value: f(ix, iy, v), dtype, width)
            self._grids[key] = grid
        return self._grids[key]

    def _per_material(self, kind, points, mat, table):
        """
        Values (K, width) of texture kind for hits at points (K, 3) of materials mat (K,).

        Each row's cell is looked up in its material's grid; rows outside any grid are hashed.
        """
        cell, fill, dtype, width = _KINDS[kind]
        if mat.size == 0:
            return np.zeros((0, width), dtype)
        ix, iy = _cells(points, cell)
        out = np.empty((mat.size, width), dtype)
        done = np.zeros(mat.shape, bool)
        for m in np.flatnonzero(np.bincount(mat, minlength=1)):   # the few ground materials
            grid = self._grid(kind, int(m), table[m])
            if grid is None:
                continue
            rows = np.flatnonzero(mat == m)
            inside, values = grid.lookup(ix[rows], iy[rows])
            rows = rows[inside]
            out[rows] = values
            done[rows] = True
        rest = np.flatnonzero(~done)
        if rest.size:
            out[rest] = fill(ix[rest], iy[rest], table[mat[rest]])
        return out

    def albedo(self, points, mat, sd_table):
        """Albedo (K,) float32 of ground hits at points (K, 3) of materials mat (K,) uint8."""
        return self._per_material('albedo', points, mat, sd_table)[:, 0]

    def tilt(self, points, normals, dirs, mat, slope_table):
        """
        Tilt the unit normals (K, 3) of ground hits by their cells' micro-slope angles.

        points (K, 3), dirs (K, 3) of the hits, mat (K,) their materials, slope_table (17,) deg.
        """
        cs = self._per_material('tilt', points, mat, slope_table)
        return _tilt(normals, dirs, cs[:, 0], cs[:, 1])
