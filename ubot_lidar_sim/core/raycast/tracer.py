"""
The multi-hit trace: rays through foliage to the first solid surface, with smoke and texture.

``Tracer`` casts through a ``Caster`` (raycast/backend.py) and adds what a LiDAR needs on top of a
first-hit cast: foliage is passed (the ray goes on from the hit), up to max_hits surfaces per ray;
a smoke entry ends the ray; sphere and cylinder-side hits move onto the analytic surface
(raycast/quadrics.py); ground hits get their cell's albedo and micro-slope
(raycast/ground_texture.py).

Closed foliage volumes (box, sphere, cylinder) record only the face where the ray enters: the face
where it leaves is passed without a hit, so a crown in front of a wall gives two hits (crown,
wall). Where nothing else lies inside the volume along the ray, the exit is found analytically
and the next cast starts just past it (raycast/volumes.py) instead of casting to the far face.
Open foliage (plane, mesh, heightfield) records every face it is hit on, as a sheet. Normals
are returned facing the ray. Every step is a numpy operation over all active rays.
"""

from collections.abc import Sequence

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.class_ids import CLASS_DTYPE
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.labels import SMOKE_CLASS
from ubot_lidar_sim.core.raycast.actor_casting import ActorCasting, ActorFrame
from ubot_lidar_sim.core.raycast.arrays import dot3, put_rows, take_rows
from ubot_lidar_sim.core.raycast.backend import Caster
from ubot_lidar_sim.core.raycast.geometry import Geometry, KIND_CYLINDER, KIND_SPHERE
from ubot_lidar_sim.core.raycast.ground_texture import GroundTexture
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.raycast.layer_kernel import (assemble_hits, finish_layer, first_rays,
                                                      ground_rows)
from ubot_lidar_sim.core.raycast.volumes import ClosedVolumes

_EXIT_STEP_M = 1e-3       # re-cast offset after passing a closed foliage volume's far face
# Where a ray leaves a closed foliage volume: found analytically (raycast/volumes.py) when True,
# else by casting to its far face (the test of volumes.py compares both).
ANALYTIC_EXITS = True


class Tracer:
    """Multi-hit ray tracing over a fixed list of Geometry objects with per-object attributes."""

    def __init__(self, geometries: Sequence[Geometry], material: ArrayLike, class_id: ArrayLike,
                 foliage: ArrayLike, ground: ArrayLike, caster: Caster,
                 actors: ActorCasting | None = None, instance_id: ArrayLike | None = None,
                 panes: ArrayLike | None = None):
        """
        Store geometries (Sequence of Geometry), per-object arrays (O,) and the caster.

        caster: a backend.Caster built from the same geometries, in the same order. actors: the
        moving objects (raycast/actor_casting.py), the last objects of the lists (plain meshes in
        their own frame), cast by their own casters; instance_id (O,) uint16 (None: all 0).
        panes (O,) bool: the objects whose material is a pane (MaterialTable.panes; None: none).
        """
        self._geoms = list(geometries)
        self.caster = caster
        self.material = np.asarray(material, np.uint8)
        self.class_id = np.asarray(class_id, CLASS_DTYPE)
        self.foliage = np.asarray(foliage, bool)
        self.ground = np.asarray(ground, bool)
        self._kind = np.array([x.kind for x in self._geoms], np.int8)
        # Per-object lookups with one extra last entry for smoke (obj -1 indexes it).
        self._ext_material = np.append(self.material, np.uint8(0))
        self._ext_class = np.append(self.class_id, CLASS_DTYPE(SMOKE_CLASS))
        self._ext_ground = np.append(self.ground, False)
        self.actors = actors
        inst = np.zeros(len(self.material), np.uint16) if instance_id is None else instance_id
        self._ext_instance = np.append(np.asarray(inst, np.uint16), np.uint16(0))
        self._texture = GroundTexture(self._geoms, self.material, self.ground)
        # Panes pass the ray on as foliage does when the caller asks (glass: physical).
        self.panes = (np.zeros(len(self.material), bool) if panes is None
                      else np.asarray(panes, bool))
        self._variants = {False: self._variant(self.foliage)}
        self._variants[True] = (self._variant(self.foliage | self.panes) if self.panes.any()
                                else self._variants[False])

    def _variant(self, through):
        """
        Return the layer kernel's per-object arrays, volumes and hit tables for pass-through.

        through (O,) bool: the objects a ray goes on from (foliage, and glass panes).
        """
        g = self._geoms
        closed = through & np.array([x.closed for x in g], bool)
        # The per-object arrays of the layer kernel (layer_kernel.finish_layer).
        shapes = (through, closed, np.isin(self._kind, (KIND_SPHERE, KIND_CYLINDER)), self._kind,
                  np.array([x.n_side for x in g], np.int64),
                  np.array([x.center for x in g], np.float64).reshape(-1, 3),
                  np.array([x.axis for x in g], np.float64).reshape(-1, 3),
                  np.array([x.radius_m for x in g], np.float64))
        tables = (self._ext_material, self._ext_class, np.append(through, False),
                  self._ext_ground)
        return shapes, ClosedVolumes(g, closed, ANALYTIC_EXITS).arrays, tables

    @property
    def geometries(self) -> list[Geometry]:
        """Return the Geometry objects, in object order (a new list)."""
        return list(self._geoms)

    @property
    def n_triangles(self) -> int:
        """Total number of triangles over all objects."""
        return int(sum(x.triangles.shape[0] for x in self._geoms))

    def trace(self, origins: NDArray[np.float64], dirs: NDArray[np.float64], limit_m: ArrayLike,
              max_hits: int, continue_step_m: float, ignored: frozenset[int] = frozenset(),
              smoke_range_m: NDArray[np.float64] | None = None, continue_foliage: bool = True,
              reflectivity_sd: NDArray[np.float64] | None = None,
              micro_slope_deg: NDArray[np.float64] | None = None, with_points: bool = True,
              with_normals: bool = True, rays32: NDArray[np.float32] | None = None,
              actors: ActorFrame | None = None, panes: bool = False) -> Hits:
        """
        Trace rays (N, 3) float64 up to limit_m (N,); see World.trace for the semantics.

        panes: glass objects pass the ray on as foliage does (glass: physical), else they are
        solid (glass: opaque).

        actors: the moving objects of this trace (ActorCasting.frame over these N rays).

        with_points / with_normals False leave Hits.point / Hits.normal None (not computed).
        rays32 (N, 6) float32: the first cast's rays (origins without -0.0), given by the caller.
        """
        n = origins.shape[0]
        origins = np.ascontiguousarray(origins)
        dirs = np.ascontiguousarray(dirs)
        limit = np.minimum(limit_m, smoke_range_m) if smoke_range_m is not None else limit_m
        limit = np.asarray(limit, np.float64)
        if limit.ndim == 0 or (limit.size and limit.strides == (0,)):
            limit = limit.reshape(-1)[:1].copy() if limit.size else np.zeros(1)   # one for all
        else:
            limit = np.ascontiguousarray(limit)
        tex = (reflectivity_sd, micro_slope_deg, with_points, with_normals)
        count = np.zeros(n, np.int64)
        stopped = np.zeros(n, bool)
        layers = []
        # The first cast: every ray from its origin (a -0.0 in them turned +0.0).
        rays, o = first_rays(origins, dirs) if rays32 is None else (rays32, origins)
        active, start, first = np.arange(n, dtype=np.int64), np.zeros(n), True
        # The actors whose spheres each ray's line meets, from its first cast (the later ones
        # go on along the same line).
        lines = (self.actors.lines(n, actors) if self.actors is not None and actors is not None
                 and actors.index else None)
        for _ in range(2 * max_hits + 2 if continue_foliage else 1):   # loop over hit layers
            if active.size == 0:
                break
            rec, (rays, active, start) = self._layer(
                rays, ignored, active, start, first, o, origins, dirs, limit, count, stopped,
                max_hits, continue_step_m, continue_foliage, actors, panes, lines)
            layers.append(rec)
            first = False
        if smoke_range_m is not None:
            s_ray = np.flatnonzero(np.isfinite(smoke_range_m) & ~stopped & (count < max_hits))
            if s_ray.size:
                # A smoke return faces the ray: normal -d, |cos| = d . d.
                d = take_rows(dirs, s_ray)
                nd = -d
                layers.append((s_ray, count[s_ray], smoke_range_m[s_ray],
                               np.full(s_ray.size, -1, np.int32), nd, dot3(nd, d)))
                count[s_ray] += 1
        return self._finish(origins, dirs, count, layers, tex, panes)

    def ground_albedo(self, points: NDArray[np.float64], material: NDArray[np.uint8],
                      sd_table: NDArray[np.float64]) -> NDArray[np.float32]:
        """Albedo (K,) float32 of the ground texture at points (K, 3) of materials (K,) uint8."""
        return self._texture.albedo(points, material, sd_table)

    def first_hits(self, origins: NDArray[np.float64], dirs: NDArray[np.float64],
                   rays32: NDArray[np.float32], limit_m: float,
                   ignored: frozenset[int] = frozenset(), actors: ActorFrame | None = None
                   ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int32]]:
        """
        Return the first hit of each ray within limit_m, one cast: ray, range, object (K,).

        The first layer of trace (the same cast and layer_kernel.finish_layer: float64 range,
        exact quadric surfaces) without continuation, smoke or texture. origins, dirs (N, 3)
        float64 with no -0.0 in origins and rays32 (N, 6) float32 the same rays; the records
        come in ray order.
        """
        n = origins.shape[0]
        rec, _ = self._layer(rays32, ignored, np.arange(n, dtype=np.int64), np.zeros(n), True,
                             origins, origins, dirs, np.array([limit_m]),
                             np.zeros(n, np.int64), np.zeros(n, bool), 1, 1.0, False, actors)
        return rec[0], rec[2], rec[3]

    def _layer(self, rays, ignored, active, start, first, o, origins, dirs, limit, count,
               stopped, max_hits, continue_step_m, continue_foliage, actors=None, panes=False,
               lines=None):
        """
        Cast rays (M, 6) float32 once and finish the layer (layer_kernel.finish_layer).

        actors: the moving objects, each met at the firing time of the ray (rows ``active``);
        lines: the trace's actor bits (ActorCasting.lines), set by the first cast.

        Returns the recorded hits (ray, slot, range, object, outward normal, n . d) and the next
        cast's (rays, active, start); count and stopped are updated.
        """
        m = active.size
        res = self.caster.cast_rays(rays, ignored)
        if actors is not None and actors.index:
            res = self.actors.cast(rays, res, active, actors, ignored, lines, first)
        rec = (np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m),
               np.empty(m, np.int32), np.empty((m, 3)), np.empty(m))
        nxt = (np.empty((m, 6), np.float32), np.empty(m, np.int64), np.empty(m))
        shapes, volumes, _ = self._variants[bool(panes)]
        k, j = finish_layer(res.t, res.obj, res.primitive, res.normal, active, start, first, o,
                            origins, dirs, limit, shapes, volumes, count, stopped,
                            max_hits, continue_step_m, _EXIT_STEP_M, continue_foliage, *rec,
                            *nxt)
        return tuple(x[:k] for x in rec), tuple(x[:j] for x in nxt)

    def _finish(self, origins, dirs, count, layers, tex, panes=False):
        """
        Hits of the recorded layers (tuples ray, slot, range, object, outward normal, n . d).

        Ground hits get their cells' albedo and micro-slope tilt (ground_texture.py); every hit
        is scattered to its row in (ray, range) order by layer_kernel.assemble_hits.
        """
        sd, slope, with_points, with_normals = tex
        ray, slot, rng, obj, normal, dot = (
            layers[0] if len(layers) == 1 else
            tuple(np.concatenate(c) for c in zip(*layers)) if layers else
            (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int32),
             np.zeros((0, 3)), np.zeros(0)))
        (ray_f, rng_f, obj_f, cos_f, normal_f, point_f, material, class_id, foliage, ground,
         smoke, pos) = assemble_hits(count, ray, slot, rng, obj, normal, dot, origins, dirs,
                                     self._variants[bool(panes)][2], with_points,
                                     with_normals)
        albedo_f = np.ones(rng_f.shape[0], np.float32)
        if sd is not None or slope is not None:
            # Ground hits: points, directions, normals facing the ray, materials (one pass).
            g, p_g, d_g, n_g, m_g = ground_rows(ray, rng, obj, normal, dot, origins, dirs,
                                                self._ext_ground, self._ext_material)
        if (sd is not None or slope is not None) and g.size:
            if sd is not None:
                lit = np.flatnonzero(sd[m_g] != 0.0)      # sd 0: exp(0) = 1 exactly
                albedo_f[pos[g[lit]]] = self._texture.albedo(take_rows(p_g, lit), m_g[lit], sd)
            if slope is not None:
                n_g, cos_g = self._texture.tilt(p_g, n_g, d_g, m_g, slope)
                cos_f[pos[g]] = cos_g
                if with_normals:
                    put_rows(normal_f, pos[g], n_g.astype(np.float32))
        return Hits(ray_f, rng_f, point_f if with_points else None,
                    normal_f if with_normals else None, cos_f, material, class_id, foliage,
                    ground, albedo_f, smoke, obj_f, self._ext_instance[obj_f])

    def instance_of(self, obj: NDArray[np.int32]) -> NDArray[np.uint16]:
        """Return the instance ids (K,) uint16 of objects (K,) (-1, smoke: 0)."""
        return self._ext_instance[obj]


@numba.njit(cache=True, nogil=True)
def _unit_rows(d: NDArray[np.float64]) -> bool:
    """Return False when a row of d (N, 3) has a squared length over 1e-4 off 1 (NaN: True)."""
    for i in range(d.shape[0]):
        length2 = ((d[i, 0] * d[i, 0] + 0.0) + d[i, 1] * d[i, 1]) + d[i, 2] * d[i, 2]
        if length2 != length2:
            return True         # NaN: numpy's max / min of the lengths was NaN, which passed
    for i in range(d.shape[0]):
        length2 = ((d[i, 0] * d[i, 0] + 0.0) + d[i, 1] * d[i, 1]) + d[i, 2] * d[i, 2]
        if length2 - 1.0 > 1e-4 or 1.0 - length2 > 1e-4:
            return False
    return True


def check_rays(origins: ArrayLike, dirs: ArrayLike, max_range_m: ArrayLike
               ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Validate and convert ray arrays; returns origins, dirs (N, 3) float64 and range (N,)."""
    o = np.asarray(origins, np.float64)
    d = np.asarray(dirs, np.float64)
    if o.ndim != 2 or o.shape[1] != 3:
        raise ConfigError('origins', o.shape, 'an (N, 3) array')
    if d.shape != o.shape:
        raise ConfigError('dirs', d.shape, f'an array of the origins shape {o.shape}')
    if d.shape[0] and not _unit_rows(d):
        raise ConfigError('dirs', 'non-unit rows', 'unit vectors')
    limit = np.asarray(max_range_m, np.float64)
    rng = np.broadcast_to(limit, (o.shape[0],))
    if rng.size and not np.all(limit > 0.0):
        raise ConfigError('max_range_m', float(np.min(limit)), '> 0')
    return o, d, rng
