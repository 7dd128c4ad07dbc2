"""
The multi-hit trace: rays through foliage to the first solid surface, with smoke and texture.

``Tracer`` casts through a ``Caster`` (raycast/backend.py) and adds what a LiDAR needs on top of a
first-hit cast: foliage is passed (the ray goes on from the hit), up to max_hits surfaces per ray;
a smoke entry ends the ray; sphere and cylinder-side hits move onto the analytic surface
(raycast/quadrics.py); ground hits get their cell's albedo and micro-slope (world/texture.py).

Closed foliage volumes (box, sphere, cylinder) record only the face where the ray enters: the face
where it leaves is passed without a hit, so a crown in front of a wall gives two hits (crown,
wall). Where nothing else lies inside the volume along the ray, the exit is found analytically
and the next cast starts just past it (raycast/volumes.py) instead of casting to the far face.
Open foliage (plane, mesh, heightfield) records every face it is hit on, as a sheet. Normals
are returned facing the ray. Every step is a numpy operation over all active rays.
"""

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.classes import SMOKE_CLASS
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.raycast.arrays import dot3, put_rows, take_rows
from ubot_lidar_sim.core.raycast.backend import Caster
from ubot_lidar_sim.core.raycast.geometry import Geometry, KIND_CYLINDER, KIND_SPHERE
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.raycast.quadrics import quadric_fix
from ubot_lidar_sim.core.raycast.volumes import ClosedVolumes
from ubot_lidar_sim.core.world.texture import GroundTexture

_EXIT_STEP_M = 1e-3       # re-cast offset after passing a closed foliage volume's far face
# Analytic exits move float32 ranges by ~1e-6 m: off until the golden bytes are re-saved.
ANALYTIC_EXITS = False


class Tracer:
    """Multi-hit ray tracing over a fixed list of Geometry objects with per-object attributes."""

    def __init__(self, geometries: Sequence[Geometry], material: ArrayLike, class_id: ArrayLike,
                 foliage: ArrayLike, ground: ArrayLike, caster: Caster):
        """
        Store geometries (Sequence of Geometry), per-object arrays (O,) and the caster.

        caster: a backend.Caster built from the same geometries, in the same order.
        """
        self._geoms = list(geometries)
        self.caster = caster
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
        self._n_side = np.array([x.n_side for x in g], np.int64)
        # Per-object lookups with one extra last entry for smoke (obj -1 indexes it).
        self._quadric = np.isin(self._kind, (KIND_SPHERE, KIND_CYLINDER))
        self._fol_closed = self.foliage & self._closed
        self._ext_material = np.append(self.material, np.uint8(0))
        self._ext_class = np.append(self.class_id, np.uint8(SMOKE_CLASS))
        self._ext_foliage = np.append(self.foliage, False)
        self._ext_ground = np.append(self.ground, False)
        self._texture = GroundTexture(self._geoms, self.material, self.ground)
        volumes = ClosedVolumes(self._geoms, self._fol_closed)
        self._volumes = volumes if ANALYTIC_EXITS and volumes.handled.any() else None

    @property
    def geometries(self):
        """Return the Geometry objects, in object order (a new list)."""
        return list(self._geoms)

    @property
    def n_triangles(self):
        """Total number of triangles over all objects."""
        return int(sum(x.triangles.shape[0] for x in self._geoms))

    def _cast(self, rays, ignored):
        """
        Cast rays (M, 6) float32 once through the caster.

        Returns the hit rows (K,), t (K,) float64, obj (K,) int32 and the CastResult.
        """
        res = self.caster.cast_rays(rays, ignored)
        hidx = np.flatnonzero(res.obj >= 0)
        t = np.take(res.t, hidx).astype(np.float64)
        obj = np.take(res.obj, hidx)
        return hidx, t, obj, res

    def _surface(self, res, hidx, t, obj, o, d):
        """
        Outward normals (K, 3) float64 of the hits; spheres and cylinder sides moved exactly.

        res, hidx, t, obj from _cast; o (M, 3) the cast origins; d (K, 3) the hits' directions.
        Returns (t, normal).
        """
        normal = take_rows(res.normal, hidx).astype(np.float64)
        q = np.flatnonzero(np.take(self._quadric, obj))
        if q.size:
            oq = obj[q]
            kind = self._kind[oq]
            pid = res.primitive[hidx[q]]
            sph = kind == KIND_SPHERE
            fix = sph | ((kind == KIND_CYLINDER) & (pid < self._n_side[oq]))
            q, sph, oq = q[fix], sph[fix], oq[fix]
            if q.size:
                t_q, n_q = quadric_fix(
                    take_rows(o, hidx[q]), take_rows(d, q), t[q], take_rows(normal, q), sph,
                    self._center[oq], self._axis[oq], self._radius[oq])
                t[q] = t_q
                put_rows(normal, q, n_q)
        return t, normal

    def trace(self, origins: NDArray[np.float64], dirs: NDArray[np.float64], limit_m: ArrayLike,
              max_hits: int, continue_step_m: float, ignored: frozenset[int] = frozenset(),
              smoke_range_m: NDArray[np.float64] | None = None, continue_foliage: bool = True,
              reflectivity_sd: NDArray[np.float64] | None = None,
              micro_slope_deg: NDArray[np.float64] | None = None, with_points: bool = True,
              with_normals: bool = True) -> Hits:
        """
        Trace rays (N, 3) float64 up to limit_m (N,); see World.trace for the semantics.

        with_points / with_normals False leave Hits.point / Hits.normal None (not computed).
        """
        n = origins.shape[0]
        origins = np.ascontiguousarray(origins)
        dirs = np.ascontiguousarray(dirs)
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
                hidx, t, obj, res = self._cast(rays, ignored)
                ray = hidx
            else:
                o = take_rows(origins, active)
                d_act = take_rows(dirs, active)
                rays[:, 3:] = d_act
                d_act *= start[:, None]
                o += d_act
                rays[:, :3] = o
                hidx, t, obj, res = self._cast(rays, ignored)
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
            if self._volumes is not None:
                self._skip_volumes(origins, dirs, f_ray, obj[f], nxt,
                                   None if leaving is None else leaving[f])
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

    def _skip_volumes(self, origins, dirs, ray, obj, nxt, leaving):
        """
        Move the next start nxt (K,) of rays entering a closed foliage volume past its exit.

        ray, obj (K,) the foliage hits' rays and objects; leaving (K,) bool or None. Only where
        the exit lies beyond nxt and the stretch nxt..exit is free of other objects
        (volumes.ClosedVolumes); nxt is changed in place.
        """
        vol = self._volumes
        enter = vol.handled[obj]
        if leaving is not None:
            enter &= ~leaving
        e = np.flatnonzero(enter)
        if e.size == 0:
            return
        o, d = take_rows(origins, ray[e]), take_rows(dirs, ray[e])
        t_exit = vol.exit_range(obj[e], o, d)
        jump = t_exit + _EXIT_STEP_M
        c = np.flatnonzero(jump > nxt[e])       # False for NaN: no exit found, cast as before
        if c.size:
            ok = vol.free(obj[e[c]], take_rows(o, c), take_rows(d, c), nxt[e[c]], t_exit[c])
            nxt[e[c[ok]]] = jump[c[ok]]

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
