"""
Ray casting on open3d: multi-hit traces through foliage, smoke truncation and ground texture.

Geometry arrives as one ``Geometry`` (world-frame triangles) per world object. ``Tracer`` owns one
``open3d.t.geometry.RaycastingScene`` per distinct set of ignored objects (built on first use and
cached) and per-object lookup arrays (material, class, foliage, ground, analytic shape).

Spheres and cylinder sides are tessellated (48 x 24, 48 sides), then every hit on them is moved
onto the analytic surface (the ray-quadric root nearest the triangle hit, with the analytic
normal), so ranges are exact to float64 for any radius. Closed foliage volumes (box, sphere,
cylinder) record only the face where the ray enters: the face where it leaves is passed without a
hit, so a crown in front of a wall gives two hits (crown, wall). Open foliage (plane, mesh,
heightfield) records every face it is hit on, as a sheet. Normals are returned facing the ray.

Ground texture (ground objects only, fixed per world position): albedo exp(sd z - sd^2 / 2) per
0.1 m cell and a normal tilt of micro_slope_deg x z in the plane of incidence per 0.25 m cell, each
z ~ N(0, 1) from a SplitMix64 hash of the integer cell (x, y) through Box-Muller.
"""

from dataclasses import dataclass, field

import numpy as np
import open3d as o3d

from ubot_lidar_sim.core.errors import ConfigError

SMOKE_CLASS = 21
PRECIPITATION_CLASS = 20
ALBEDO_CELL_M = 0.1
SLOPE_CELL_M = 0.25
KIND_MESH, KIND_SPHERE, KIND_CYLINDER = 0, 1, 2
_INVALID = np.uint32(0xFFFFFFFF)
_EXIT_STEP_M = 1e-3       # re-cast offset after passing a closed foliage volume's far face
_SCENE_CACHE_SIZE = 8
_SALT_ALBEDO, _SALT_SLOPE = 0x5EED0A1BED0, 0x5EED051093


@dataclass(frozen=True)
class Geometry:
    """
    World-frame triangles of one object plus its analytic shape (spheres and cylinders).

    vertices (V, 3) float64, triangles (T, 3) int64. For a cylinder the first ``n_side`` triangles
    are the side wall; ``axis`` is its unit axis and ``half_height_m`` half its length.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    kind: int = KIND_MESH
    closed: bool = False
    center: np.ndarray = field(default_factory=lambda: np.zeros(3))
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    radius_m: float = 0.0
    half_height_m: float = 0.0
    n_side: int = 0


@dataclass(frozen=True)
class Hits:
    """
    Surfaces met by a set of rays, flat and sorted by (ray, range); H rows.

    ray (H,) int64, range_m (H,) float64, point (H, 3) float64 world, normal (H, 3) float32 world
    unit facing the ray (micro-relief applied), cos_inc (H,) float32 |cos| of incidence, material,
    class_id (H,) uint8, foliage, ground, smoke (H,) bool, albedo (H,) float32, obj (H,) int32
    (-1 for smoke).
    """

    ray: np.ndarray
    range_m: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    cos_inc: np.ndarray
    material: np.ndarray
    class_id: np.ndarray
    foliage: np.ndarray
    ground: np.ndarray
    albedo: np.ndarray
    smoke: np.ndarray
    obj: np.ndarray

    def __len__(self):
        """Return the number of hits H."""
        return int(self.ray.shape[0])


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
    """Albedo multiplier exp(sd z - sd^2 / 2) of the 0.1 m cell under each point (H, 3)."""
    z = cell_normal(*_cells(points, ALBEDO_CELL_M), _SALT_ALBEDO)
    return np.exp(sd * z - 0.5 * sd * sd)


def dot3(a, b):
    """
    Row dot products (N,) of (N, 3) arrays, bitwise equal to np.sum(a * b, axis=1).

    Three column products summed in numpy's order ((0 + p0) + p1) + p2, several times faster
    than the reduction over a short axis.
    """
    out = a[:, 0] * b[:, 0]
    out += 0.0                  # numpy's reduction starts at +0.0: -0.0 + 0.0 is +0.0
    out += a[:, 1] * b[:, 1]
    out += a[:, 2] * b[:, 2]
    return out


def tilt_normals(points, normals, dirs, slope_deg):
    """
    Tilt unit normals (H, 3) in the plane of incidence by a fixed N(0, slope) angle per cell.

    The 0.25 m cell under each point fixes z ~ N(0, 1); the normal turns by z * slope_deg towards
    the ray's along-surface direction. Rays along the normal (no plane of incidence) keep it.
    """
    delta = np.radians(slope_deg) * cell_normal(*_cells(points, SLOPE_CELL_M), _SALT_SLOPE)
    return _tilt(normals, dirs, np.cos(delta), np.sin(delta))


def _tilt(normals, dirs, cos_d, sin_d):
    """Turn normals (H, 3) towards the rays' along-surface direction by an angle (its cos, sin)."""
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


def _albedo_cells(ix, iy, sd):
    """Albedo (K, 1) float32 of cells (ix, iy) for one material's sd (as ground_albedo)."""
    z = cell_normal(ix, iy, _SALT_ALBEDO)
    return np.exp(sd * z - 0.5 * sd * sd).astype(np.float32)[:, None]


def _tilt_cells(ix, iy, slope_deg):
    """Return cos and sin (K, 2) of the micro-slope tilt of cells (ix, iy), one slope."""
    delta = np.radians(slope_deg) * cell_normal(ix, iy, _SALT_SLOPE)
    return np.stack([np.cos(delta), np.sin(delta)], axis=1)


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
                cell = ALBEDO_CELL_M if kind == 'albedo' else SLOPE_CELL_M
                lo, hi = self._boxes[mat]
                i0 = np.floor(lo / cell).astype(np.int64) - 1
                n = np.floor(hi / cell).astype(np.int64) + 2 - i0
                if n[0] * n[1] <= self.MAX_CELLS:
                    fill = (_albedo_cells if kind == 'albedo' else _tilt_cells)
                    grid = _CellGrid(int(i0[0]), int(i0[1]), int(n[0]), int(n[1]),
                                     lambda ix, iy, f=fill, v=value: f(ix, iy, v),
                                     np.float32 if kind == 'albedo' else np.float64,
                                     1 if kind == 'albedo' else 2)
            self._grids[key] = grid
        return self._grids[key]

    def _per_material(self, kind, points, mat, value_of, compute):
        """Look each row's cell up in its material's grid; rows outside use compute(rows)."""
        if mat.size == 0:
            return np.zeros((0, 1), np.float32) if kind == 'albedo' else np.zeros((0, 2))
        cell = ALBEDO_CELL_M if kind == 'albedo' else SLOPE_CELL_M
        ix, iy = _cells(points, cell)
        out = None
        done = np.zeros(mat.shape, bool)
        for m in np.flatnonzero(np.bincount(mat, minlength=1)):   # the few ground materials
            grid = self._grid(kind, int(m), value_of[m])
            if grid is None:
                continue
            rows = np.flatnonzero(mat == m)
            inside, values = grid.lookup(ix[rows], iy[rows])
            rows = rows[inside]
            if out is None:
                out = np.empty((mat.size, values.shape[1]), values.dtype)
            out[rows] = values
            done[rows] = True
        rest = np.flatnonzero(~done)
        if rest.size:
            values = compute(rest)
            if out is None:
                out = np.empty((mat.size, values.shape[1]), values.dtype)
            out[rest] = values
        return out

    def albedo(self, points, mat, sd_table):
        """Albedo (K,) float32 of ground hits at points (K, 3) of materials mat (K,) uint8."""
        sd = sd_table[mat]
        return self._per_material(
            'albedo', points, mat, sd_table,
            lambda rows: ground_albedo(take_rows(points, rows), sd[rows]).astype(
                np.float32)[:, None])[:, 0]

    def tilt(self, points, normals, dirs, mat, slope_table):
        """tilt_normals of ground hits (K, 3) of materials mat (K,) with cached cos / sin."""
        slope = slope_table[mat]

        def compute(rows):
            ix, iy = _cells(take_rows(points, rows), SLOPE_CELL_M)
            delta = np.radians(slope[rows]) * cell_normal(ix, iy, _SALT_SLOPE)
            return np.stack([np.cos(delta), np.sin(delta)], axis=1)

        cs = self._per_material('tilt', points, mat, slope_table, compute)
        return _tilt(normals, dirs, cs[:, 0], cs[:, 1])


def smoke_entry(origins, dirs, cells, density, radius_scale, threshold, limit_m):
    """
    Return the range (N,) at which each ray enters its nearest dense smoke cell (inf if none).

    cells (K, 4): x, y, z, radius_m; density (K,). A cell counts for a ray when its effective
    density, density * (1 - (b / r)^2), is > 0 and >= threshold, b the ray's closest approach to
    the centre and r = radius_m * radius_scale: a ray through the middle sees the full density, one
    grazing the rim none. A ray starting inside a cell enters at 0; entries beyond limit_m are inf.
    """
    n = origins.shape[0]
    best = np.full(n, np.inf)
    if cells is None or len(cells) == 0 or n == 0:
        return best
    od = np.sum(origins * dirs, axis=1)[:, None]
    oo = np.sum(origins * origins, axis=1)[:, None]
    for k0 in range(0, len(cells), 32):       # chunks of cells bound the (N, K) temporaries
        c = cells[k0:k0 + 32, :3]
        r2 = (cells[k0:k0 + 32, 3] * radius_scale) ** 2
        tc = dirs @ c.T - od
        b2 = np.maximum(oo - 2.0 * (origins @ c.T) + np.sum(c * c, axis=1) - tc * tc, 0.0)
        eff = density[k0:k0 + 32] * (1.0 - b2 / r2)
        half = np.sqrt(np.maximum(r2 - b2, 0.0))
        ok = (b2 < r2) & (eff > 0.0) & (eff >= threshold) & (tc + half > 0.0)
        t_in = np.where(ok, np.maximum(tc - half, 0.0), np.inf)
        best = np.minimum(best, t_in.min(axis=1))
    return np.where(best < limit_m, best, np.inf)


def _quadric_fix(o, d, t, normal, sph, center, axis, radius):
    """
    Move sphere / cylinder-side hits onto the analytic surface.

    All arguments are rows of the hits to fix only: o, d (K, 3) ray origin and direction, t (K,)
    facet range, normal (K, 3) facet normal, sph (K,) bool sphere (else cylinder side), center,
    axis (K, 3), radius (K,). Returns the fixed (t, normal) float64.
    """
    oc = o - center
    ax = np.where(sph[:, None], 0.0, axis)        # a sphere is a cylinder with no axis term
    oc_p = oc - dot3(oc, ax)[:, None] * ax
    d_p = d - dot3(d, ax)[:, None] * ax
    a = dot3(d_p, d_p)
    b = dot3(oc_p, d_p)
    c = dot3(oc_p, oc_p) - radius ** 2
    disc = b * b - a * c
    good = (disc >= 0.0) & (a > 1e-12)
    sq = np.sqrt(np.maximum(disc, 0.0))
    a_safe = np.where(good, a, 1.0)
    r1, r2 = (-b - sq) / a_safe, (-b + sq) / a_safe
    root = np.where(np.abs(r1 - t) <= np.abs(r2 - t), r1, r2)
    # Keep the facet hit when the quadric root is implausible (grazing the rim, or a ray starting
    # between a facet and the true surface, whose nearest root lies behind it).
    good &= (np.abs(root - t) < 0.1 * radius + 1e-3) & (root >= 0.0)
    t = np.where(good, root, t)
    radial = oc_p + t[:, None] * d_p
    radial /= np.maximum(np.sqrt(dot3(radial, radial)), 1e-12)[:, None]
    return t, np.where(good[:, None], radial, normal)


def take_rows(a, index):
    """
    Return a[index] of a 2-D array (rows), a C-contiguous result.

    Rows are moved as one opaque item each: several times faster than fancy indexing.
    """
    if a.flags.c_contiguous and a.ndim == 2:
        item = np.dtype((np.void, a.dtype.itemsize * a.shape[1]))
        return np.take(a.view(item).reshape(-1), index).view(a.dtype).reshape(-1, a.shape[1])
    return np.take(a, index, axis=0)


def put_rows(dst, index, rows):
    """Set dst[index] = rows for C-contiguous 2-D arrays of one dtype (rows as opaque items)."""
    item = np.dtype((np.void, dst.dtype.itemsize * dst.shape[1]))
    dst.view(item).reshape(-1)[index] = np.ascontiguousarray(rows, dst.dtype).view(
        item).reshape(-1)


class Tracer:
    """Ray casting over a fixed list of Geometry objects with per-object attributes."""

    def __init__(self, geometries, material, class_id, foliage, ground):
        """Store geometries (list of Geometry) and per-object arrays (O,) of their attributes."""
        self._geoms = list(geometries)
        self.material = np.asarray(material, np.uint8)
        self.class_id = np.asarray(class_id, np.uint8)
        self.foliage = np.asarray(foliage, bool)
        self.ground = np.asarray(ground, bool)
        g = self._geoms
        self._kind = np.array([x.kind for x in g], np.int8)
        self._closed = np.array([x.closed for x in g], bool)
        self._center = np.array([x.center for x in g], np.float64).reshape(-1, 3)
        self._axis = np.array([x.axis for x in g], np.float64).reshape(-1, 3)
        self._radius = np.array([x.radius_m for x in g], np.float64)
        self._half_h = np.array([x.half_height_m for x in g], np.float64)
        self._n_side = np.array([x.n_side for x in g], np.int64)
        # Per-object lookups with one extra last entry for smoke (obj -1 indexes it).
        self._quadric = np.isin(self._kind, (KIND_SPHERE, KIND_CYLINDER))
        self._fol_closed = self.foliage & self._closed
        self._ext_material = np.append(self.material, np.uint8(0))
        self._ext_class = np.append(self.class_id, np.uint8(SMOKE_CLASS))
        self._ext_foliage = np.append(self.foliage, False)
        self._ext_ground = np.append(self.ground, False)
        self._texture = GroundTexture(self._geoms, self.material, self.ground)
        self._scenes = {}

    @property
    def geometries(self):
        """Return the Geometry objects, in object order (a new list)."""
        return list(self._geoms)

    @property
    def n_triangles(self):
        """Total number of triangles over all objects."""
        return int(sum(x.triangles.shape[0] for x in self._geoms))

    def scene(self, ignored=frozenset()):
        """Return (RaycastingScene, geometry id -> object index) without the ignored objects."""
        key = frozenset(ignored)
        if key not in self._scenes:
            if len(self._scenes) >= _SCENE_CACHE_SIZE:
                self._scenes.pop(next(iter(self._scenes)))
            scene = o3d.t.geometry.RaycastingScene()
            ids, objs = [], []
            for index, geom in enumerate(self._geoms):
                if index in key or geom.triangles.shape[0] == 0:
                    continue
                ids.append(scene.add_triangles(
                    o3d.core.Tensor(np.ascontiguousarray(geom.vertices, np.float32)),
                    o3d.core.Tensor(np.ascontiguousarray(geom.triangles, np.uint32))))
                objs.append(index)
            lookup = np.full(max(ids, default=-1) + 1, -1, np.int32)
            lookup[np.asarray(ids, np.int64)] = objs
            self._scenes[key] = (scene, lookup)
        return self._scenes[key]

    def _cast(self, scene, lookup, rays):
        """Cast rays (M, 6) float32 once; returns hit rows (K,), t (K,) float64, obj, result."""
        res = scene.cast_rays(o3d.core.Tensor.from_numpy(rays))
        gid = res['geometry_ids'].numpy()
        hidx = np.flatnonzero(gid != _INVALID)
        t = np.take(res['t_hit'].numpy(), hidx).astype(np.float64)
        obj = np.take(lookup, np.take(gid, hidx))
        return hidx, t, obj, res

    def _surface(self, res, hidx, t, obj, o, d):
        """
        Outward normals (K, 3) float64 of the hits; spheres and cylinder sides moved exactly.

        res, hidx, t, obj from _cast; o (M, 3) the cast origins; d (K, 3) the hits' directions.
        Returns (t, normal).
        """
        normal = take_rows(res['primitive_normals'].numpy(), hidx).astype(np.float64)
        q = np.flatnonzero(np.take(self._quadric, obj))
        if q.size:
            oq = obj[q]
            kind = self._kind[oq]
            pid = res['primitive_ids'].numpy()[hidx[q]]
            sph = kind == KIND_SPHERE
            fix = sph | ((kind == KIND_CYLINDER) & (pid < self._n_side[oq]))
            q, sph, oq = q[fix], sph[fix], oq[fix]
            if q.size:
                t_q, n_q = _quadric_fix(
                    take_rows(o, hidx[q]), take_rows(d, q), t[q], take_rows(normal, q), sph,
                    self._center[oq], self._axis[oq], self._radius[oq])
                t[q] = t_q
                put_rows(normal, q, n_q)
        return t, normal

    def trace(self, origins, dirs, limit_m, max_hits, continue_step_m, ignored=frozenset(),
              smoke_range_m=None, continue_foliage=True, reflectivity_sd=None,
              micro_slope_deg=None, with_points=True, with_normals=True):
        """
        Trace rays (N, 3) float64 up to limit_m (N,); see World.trace for the semantics.

        with_points / with_normals False leave Hits.point / Hits.normal None (not computed).
        """
        n = origins.shape[0]
        origins = np.ascontiguousarray(origins)
        dirs = np.ascontiguousarray(dirs)
        scene, lookup = self.scene(ignored)
        limit = np.minimum(limit_m, smoke_range_m) if smoke_range_m is not None else limit_m
        limit = np.asarray(limit, np.float64)
        if limit.ndim == 0 or (limit.size and limit.strides == (0,)):
            limit = _Uniform(limit.reshape(-1)[0] if limit.size else 0.0)
        else:
            limit = np.ascontiguousarray(limit)
        tex = (reflectivity_sd, micro_slope_deg, with_points, with_normals)
        count = np.zeros(n, np.int64)
        stopped = np.zeros(n, bool)
        layers = []
        active = start = None          # None: the first layer, every ray from its origin
        for _ in range(2 * max_hits + 2 if continue_foliage else 1):   # loop over hit layers
            m = n if active is None else active.size
            if m == 0:
                break
            rays = np.empty((m, 6), np.float32)
            if active is None:
                # origin + 0 x dir is the origin, except that it turns a -0.0 into +0.0.
                o = origins
                if not origins.all() and np.any(np.signbit(origins[origins == 0.0])):
                    o = origins + 0.0 * dirs
                rays[:, :3] = o
                rays[:, 3:] = dirs
                hidx, t, obj, res = self._cast(scene, lookup, rays)
                ray = hidx
            else:
                o = take_rows(origins, active)
                d_act = take_rows(dirs, active)
                rays[:, 3:] = d_act
                d_act *= start[:, None]
                o += d_act
                rays[:, :3] = o
                hidx, t, obj, res = self._cast(scene, lookup, rays)
                ray = np.take(active, hidx)
            d = take_rows(dirs, ray)
            t, normal = self._surface(res, hidx, t, obj, o, d)
            rng = np.add(t, 0.0, out=t) if active is None else np.take(start, hidx) + t
            inside = rng <= limit.take(ray)
            if not inside.all():
                keep = np.flatnonzero(inside)
                ray, rng, obj = ray[keep], rng[keep], obj[keep]
                normal, d = take_rows(normal, keep), take_rows(d, keep)
            dot = dot3(normal, d)
            foliage = np.take(self.foliage, obj)
            leaving = None
            if continue_foliage:
                fc = np.flatnonzero(np.take(self._fol_closed, obj))
                if fc.size:
                    leave = fc[dot[fc] > 0.0]
                    if leave.size:
                        leaving = np.zeros(ray.shape, bool)
                        leaving[leave] = True
            if leaving is not None:
                keep = np.flatnonzero(~leaving)
                r_ray, r_fol = ray[keep], foliage[keep]
                layers.append(self._record(origins, r_ray, count[r_ray], rng[keep], obj[keep],
                                           take_rows(normal, keep), take_rows(d, keep),
                                           dot[keep], tex))
            else:
                r_ray, r_fol = ray, foliage
                layers.append(self._record(origins, ray, count[ray], rng, obj, normal, d, dot,
                                           tex))
            count[r_ray] += 1
            stopped[np.compress(~r_fol, r_ray)] = True
            if not continue_foliage:
                break
            f = np.flatnonzero(foliage)
            f_ray = ray[f]
            step = np.full(f.size, continue_step_m)
            if leaving is not None:
                step[leaving[f]] = _EXIT_STEP_M
            nxt = rng[f] + step
            go = np.flatnonzero((count[f_ray] < max_hits) & (nxt < limit.take(f_ray)))
            active, start = f_ray[go], nxt[go]
        if smoke_range_m is not None:
            s_ray = np.flatnonzero(np.isfinite(smoke_range_m) & ~stopped & (count < max_hits))
            if s_ray.size:
                # A smoke return faces the ray: normal -d, |cos| = d . d.
                d = take_rows(dirs, s_ray)
                nd = -d
                layers.append(self._record(origins, s_ray, count[s_ray], smoke_range_m[s_ray],
                                           np.full(s_ray.size, -1, np.int32), nd, d,
                                           dot3(nd, d), (None, None) + tex[2:]))
                count[s_ray] += 1
        return self._assemble(n, count, layers, with_points, with_normals)

    def _record(self, origins, ray, slot, rng, obj, normal, d, dot, tex):
        """
        Finish one layer's recorded hits: facing normals, |cos|, ground texture, points.

        slot (K,) is each hit's index among its ray's hits; normal (K, 3) outward (modified),
        d (K, 3) the rays' directions, dot = normal . d. Returns the layer's columns.
        """
        sd, slope, with_points, with_normals = tex
        cos = np.abs(dot)           # |n . d| is unchanged by turning n to face the ray
        g = np.flatnonzero(np.take(self._ext_ground, obj))
        albedo = None
        if with_normals:
            np.negative(normal, out=normal, where=(dot > 0.0)[:, None])
        if g.size and (sd is not None or slope is not None):
            d_g = take_rows(d, g)
            p_g = take_rows(origins, ray[g])
            p_g += rng[g, None] * d_g
            m_g = self.material[obj[g]]
            if sd is not None:
                lit = np.flatnonzero(sd[m_g] != 0.0)      # sd 0: exp(0) = 1 exactly
                albedo = (g[lit], self._texture.albedo(take_rows(p_g, lit), m_g[lit], sd))
            if slope is not None:
                n_g = take_rows(normal, g)
                if not with_normals:
                    np.negative(n_g, out=n_g, where=(dot[g] > 0.0)[:, None])
                n_g = self._texture.tilt(p_g, n_g, d_g, m_g, slope)
                cos[g] = np.abs(dot3(n_g, d_g))
                if with_normals:
                    put_rows(normal, g, n_g)
        point = None
        if with_points:
            point = take_rows(origins, ray)
            point += rng[:, None] * d
        return (ray, slot, rng, obj, cos.astype(np.float32), albedo,
                normal.astype(np.float32) if with_normals else None, point)

    def _assemble(self, n, count, layers, with_points, with_normals):
        """Scatter the layers into Hits in (ray, range) order (obj -1: smoke)."""
        # No sort: a ray's hits come layer after layer (then its smoke hit), so each lands at
        # its ray's offset plus its slot (the ray's count before that layer).
        offsets = np.cumsum(count) - count
        h = int(offsets[-1] + count[-1]) if n else 0
        ray_f = np.repeat(np.arange(n, dtype=np.int64), count)
        rng_f = np.empty(h)
        obj_f = np.empty(h, np.int32)
        cos_f = np.empty(h, np.float32)
        albedo_f = np.ones(h, np.float32)
        normal_f = np.empty((h, 3), np.float32) if with_normals else None
        point_f = np.empty((h, 3)) if with_points else None
        for ray, slot, rng, obj, cos, albedo, normal, point in layers:
            pos = np.take(offsets, ray)
            pos += slot
            rng_f[pos] = rng
            obj_f[pos] = obj
            cos_f[pos] = cos
            if albedo is not None:
                albedo_f[pos[albedo[0]]] = albedo[1]
            if with_normals:
                put_rows(normal_f, pos, normal)
            if with_points:
                put_rows(point_f, pos, point)
        return Hits(ray_f, rng_f, point_f, normal_f, cos_f, np.take(self._ext_material, obj_f),
                    np.take(self._ext_class, obj_f), np.take(self._ext_foliage, obj_f),
                    np.take(self._ext_ground, obj_f), albedo_f, obj_f < 0, obj_f)


class _Uniform:
    """One trace limit for every ray: take() returns the scalar (no per-ray gather)."""

    def __init__(self, value):
        self.value = np.float64(value)

    def take(self, index):
        """Return the limit of the rays index (the same for all)."""
        return self.value


def check_rays(origins, dirs, max_range_m):
    """Validate and convert ray arrays; returns origins, dirs (N, 3) float64 and range (N,)."""
    o = np.asarray(origins, np.float64)
    d = np.asarray(dirs, np.float64)
    if o.ndim != 2 or o.shape[1] != 3:
        raise ConfigError('origins', o.shape, 'an (N, 3) array')
    if d.shape != o.shape:
        raise ConfigError('dirs', d.shape, f'an array of the origins shape {o.shape}')
    if d.shape[0]:
        length2 = dot3(d, d)
        if length2.max() - 1.0 > 1e-4 or 1.0 - length2.min() > 1e-4:
            raise ConfigError('dirs', 'non-unit rows', 'unit vectors')
    limit = np.asarray(max_range_m, np.float64)
    rng = np.broadcast_to(limit, (o.shape[0],))
    if rng.size and not np.all(limit > 0.0):
        raise ConfigError('max_range_m', float(np.min(limit)), '> 0')
    return o, d, rng
