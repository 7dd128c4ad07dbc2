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
    """Mix uint64 values (vectorised SplitMix64 finaliser; wraps modulo 2**64)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def cell_normal(ix, iy, salt):
    """Return a fixed N(0, 1) value per integer cell (ix, iy) int64 arrays (hash + Box-Muller)."""
    ux = np.asarray(ix, np.int64).view(np.uint64)
    uy = np.asarray(iy, np.int64).view(np.uint64)
    h1 = _splitmix64(ux ^ _splitmix64(uy ^ np.uint64(salt)))
    h2 = _splitmix64(h1)
    scale = 1.0 / 9007199254740992.0      # 2**-53
    u1 = ((h1 >> np.uint64(11)).astype(np.float64) + 0.5) * scale
    u2 = (h2 >> np.uint64(11)).astype(np.float64) * scale
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def ground_albedo(points, sd):
    """Albedo multiplier exp(sd z - sd^2 / 2) of the 0.1 m cell under each point (H, 3)."""
    cells = np.floor(points[:, :2] / ALBEDO_CELL_M).astype(np.int64)
    z = cell_normal(cells[:, 0], cells[:, 1], _SALT_ALBEDO)
    return np.exp(sd * z - 0.5 * sd * sd)


def tilt_normals(points, normals, dirs, slope_deg):
    """
    Tilt unit normals (H, 3) in the plane of incidence by a fixed N(0, slope) angle per cell.

    The 0.25 m cell under each point fixes z ~ N(0, 1); the normal turns by z * slope_deg towards
    the ray's along-surface direction. Rays along the normal (no plane of incidence) keep it.
    """
    cells = np.floor(points[:, :2] / SLOPE_CELL_M).astype(np.int64)
    delta = np.radians(slope_deg) * cell_normal(cells[:, 0], cells[:, 1], _SALT_SLOPE)
    tangent = dirs - np.sum(dirs * normals, axis=1, keepdims=True) * normals
    length = np.linalg.norm(tangent, axis=1, keepdims=True)
    ok = length[:, 0] > 1e-9
    tangent = np.where(ok[:, None], tangent / np.where(ok, length[:, 0], 1.0)[:, None], 0.0)
    delta = np.where(ok, delta, 0.0)[:, None]
    return np.cos(delta) * normals + np.sin(delta) * tangent


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


def _quadric_fix(o, d, t, normal, kind, center, axis, radius, half_h, side):
    """Move sphere / cylinder-side hits onto the analytic surface; returns (t, normal) float64."""
    sph = kind == KIND_SPHERE
    cyl = (kind == KIND_CYLINDER) & side
    todo = sph | cyl
    if not np.any(todo):
        return t, normal
    i = np.nonzero(todo)[0]
    oc, dd, ax = o[i] - center[i], d[i], axis[i]
    ax = np.where(sph[i, None], 0.0, ax)          # a sphere is a cylinder with no axis term
    oc_p = oc - np.sum(oc * ax, axis=1, keepdims=True) * ax
    d_p = dd - np.sum(dd * ax, axis=1, keepdims=True) * ax
    a = np.sum(d_p * d_p, axis=1)
    b = np.sum(oc_p * d_p, axis=1)
    c = np.sum(oc_p * oc_p, axis=1) - radius[i] ** 2
    disc = b * b - a * c
    good = (disc >= 0.0) & (a > 1e-12)
    sq = np.sqrt(np.maximum(disc, 0.0))
    a_safe = np.where(good, a, 1.0)
    r1, r2 = (-b - sq) / a_safe, (-b + sq) / a_safe
    root = np.where(np.abs(r1 - t[i]) <= np.abs(r2 - t[i]), r1, r2)
    # Keep the facet hit when the quadric root is implausible (grazing the rim, or a ray starting
    # between a facet and the true surface, whose nearest root lies behind it).
    good &= (np.abs(root - t[i]) < 0.1 * radius[i] + 1e-3) & (root >= 0.0)
    t = t.copy()
    normal = normal.copy()
    t[i] = np.where(good, root, t[i])
    radial = oc_p + t[i, None] * d_p
    radial /= np.maximum(np.linalg.norm(radial, axis=1, keepdims=True), 1e-12)
    normal[i] = np.where(good[:, None], radial, normal[i])
    return t, normal


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
        self._scenes = {}

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

    def _cast(self, scene, lookup, o, d):
        """Cast rays (M,) once; returns (hit mask, t, obj, outward normal) in float64."""
        rays = np.concatenate([o, d], axis=1).astype(np.float32)
        res = scene.cast_rays(o3d.core.Tensor(rays))
        gid = res['geometry_ids'].numpy()
        hit = gid != _INVALID
        t = res['t_hit'].numpy().astype(np.float64)[hit]
        obj = lookup[gid[hit].astype(np.int64)]
        normal = res['primitive_normals'].numpy().astype(np.float64)[hit]
        pid = res['primitive_ids'].numpy()[hit].astype(np.int64)
        t, normal = _quadric_fix(o[hit], d[hit], t, normal, self._kind[obj], self._center[obj],
                                 self._axis[obj], self._radius[obj], self._half_h[obj],
                                 pid < self._n_side[obj])
        return hit, t, obj, normal

    def trace(self, origins, dirs, limit_m, max_hits, continue_step_m, ignored=frozenset(),
              smoke_range_m=None, continue_foliage=True, reflectivity_sd=None,
              micro_slope_deg=None):
        """Trace rays (N, 3) float64 up to limit_m (N,); see World.trace for the semantics."""
        n = origins.shape[0]
        scene, lookup = self.scene(ignored)
        limit = np.minimum(limit_m, smoke_range_m) if smoke_range_m is not None else limit_m
        count = np.zeros(n, np.int64)
        stopped = np.zeros(n, bool)
        active = np.arange(n)
        start = np.zeros(n)
        layers = []
        for _ in range(2 * max_hits + 2 if continue_foliage else 1):   # loop over hit layers
            if active.size == 0:
                break
            o, d = origins[active] + start[:, None] * dirs[active], dirs[active]
            hit, t, obj, normal = self._cast(scene, lookup, o, d)
            ray, rng = active[hit], start[hit] + t
            inside = rng <= limit[ray]
            ray, rng, obj, normal, dd = ray[inside], rng[inside], obj[inside], normal[inside], \
                d[hit][inside]
            foliage = self.foliage[obj]
            leaving = np.zeros(ray.shape, bool)
            if continue_foliage:
                leaving = foliage & self._closed[obj] & (np.sum(normal * dd, axis=1) > 0.0)
            rec = ~leaving
            layers.append((ray[rec], rng[rec], obj[rec], normal[rec]))
            count[ray[rec]] += 1
            stopped[ray[rec & ~foliage]] = True
            go = foliage & (count[ray] < max_hits) & continue_foliage
            nxt = rng + np.where(leaving, _EXIT_STEP_M, continue_step_m)
            go &= nxt < limit[ray]
            active, start = ray[go], nxt[go]
        ray, rng, obj, normal = (np.concatenate(x) for x in zip(*layers)) if layers else (
            np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int32), np.zeros((0, 3)))
        n_geo = ray.shape[0]
        if smoke_range_m is not None:
            s_ray = np.nonzero(np.isfinite(smoke_range_m) & ~stopped & (count < max_hits))[0]
            ray = np.concatenate([ray, s_ray])
            rng = np.concatenate([rng, smoke_range_m[s_ray]])
        order = np.argsort(ray, kind='stable')       # layers are already in range order per ray
        return self._assemble(origins, dirs, ray, rng, obj, normal, n_geo, order,
                              reflectivity_sd, micro_slope_deg)

    def _assemble(self, origins, dirs, ray, rng, obj, normal, n_geo, order, sd, slope):
        """Build the Hits record: geometric hits first (n_geo rows), then smoke, then reorder."""
        h = ray.shape[0]
        is_smoke = np.arange(h) >= n_geo
        d = dirs[ray]
        point = origins[ray] + rng[:, None] * d
        nrm = np.concatenate([normal, -d[n_geo:]])
        nrm = np.where(np.sum(nrm * d, axis=1, keepdims=True) > 0.0, -nrm, nrm)
        obj_all = np.concatenate([obj, np.full(h - n_geo, -1)]).astype(np.int32)
        o_safe = np.maximum(obj_all, 0)
        material = np.where(is_smoke, 0, self.material[o_safe]).astype(np.uint8)
        class_id = np.where(is_smoke, SMOKE_CLASS, self.class_id[o_safe]).astype(np.uint8)
        foliage = self.foliage[o_safe] & ~is_smoke
        ground = self.ground[o_safe] & ~is_smoke
        albedo = np.ones(h)
        g = np.nonzero(ground)[0]
        if g.size and sd is not None:
            albedo[g] = ground_albedo(point[g], sd[material[g]])
        if g.size and slope is not None:
            nrm[g] = tilt_normals(point[g], nrm[g], d[g], slope[material[g]])
        cos_inc = np.abs(np.sum(nrm * d, axis=1))
        cols = (ray, rng, point, nrm.astype(np.float32), cos_inc.astype(np.float32), material,
                class_id, foliage, ground, albedo.astype(np.float32), is_smoke, obj_all)
        return Hits(*(np.ascontiguousarray(c[order]) for c in cols))


def check_rays(origins, dirs, max_range_m):
    """Validate and convert ray arrays; returns origins, dirs (N, 3) float64 and range (N,)."""
    o = np.asarray(origins, np.float64)
    d = np.asarray(dirs, np.float64)
    if o.ndim != 2 or o.shape[1] != 3:
        raise ConfigError('origins', o.shape, 'an (N, 3) array')
    if d.shape != o.shape:
        raise ConfigError('dirs', d.shape, f'an array of the origins shape {o.shape}')
    if d.shape[0] and np.max(np.abs(np.sum(d * d, axis=1) - 1.0)) > 1e-4:
        raise ConfigError('dirs', 'non-unit rows', 'unit vectors')
    rng = np.broadcast_to(np.asarray(max_range_m, np.float64), (o.shape[0],))
    if rng.size and not np.all(rng > 0.0):
        raise ConfigError('max_range_m', float(np.min(rng)), '> 0')
    return o, d, rng
