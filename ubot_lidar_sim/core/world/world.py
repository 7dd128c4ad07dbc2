"""
The world (docs/worlds.md): objects from a YAML file (or a built-in world) traced by rays.

``World.load('demo' | 'flat' | path)`` reads the file (core/yaml_io.py), checks it (schema.py),
turns every object into world-frame triangles (objects.py, shapes.py, loaders.py, occupancy.py)
and hands them to a ray-casting backend (raycast/backend.py, open3d by default) under the
multi-hit ``raycast.tracer.Tracer``. Bad input raises one-line WorldErrors that name the file,
the key and the problem. Built once per scene; weather and poses are passed per scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.limits import DEFAULT_CASTER, glass_physical
from ubot_lidar_sim.core.raycast.actor_casting import (ActorCasting, ActorFrame, one_instant,
                                                       PoseAt, RayTimes)
from ubot_lidar_sim.core.raycast.backend import Caster, CasterFactory
from ubot_lidar_sim.core.raycast.casters import caster_factory, CASTERS
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.raycast.smoke import smoke_entry
from ubot_lidar_sim.core.raycast.tracer import check_rays, Tracer
from ubot_lidar_sim.core.world.actors import Actor, build_actors
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.names import resolve_world
from ubot_lidar_sim.core.world.objects import build_objects, WorldObject
from ubot_lidar_sim.core.world.query import (ActorPoses, NO_ACTOR_POSES, RayBatch,
                                             SweepActors, TraceSettings)
from ubot_lidar_sim.core.world.schema import (check_actor_list, check_smoke, check_sun,
                                              check_world, Context, MAX_ACTORS, MAX_TRIANGLES,
                                              SDF_GEOMETRY_DEFAULT)
from ubot_lidar_sim.core.world.sdf.entry import sdf_entry
from ubot_lidar_sim.core.world.sources import read_world


class World:
    """Objects of one world in a ray-casting scene; built once, traced per scan."""

    sun_direction: NDArray[np.float64] | None = None    # schema.check_sun (None: no direction)

    def __init__(self, frame: str, objects: Sequence[WorldObject],
                 geometries: Sequence[Geometry], smoke: NDArray[np.float64],
                 smoke_density: NDArray[np.float64], materials: MaterialTable | None = None,
                 caster: CasterFactory | None = None, actors: Sequence[Actor] = ()):
        """
        Use World.load or World.from_dict; attributes follow docs/architecture.md.

        caster: a backend.CasterFactory built once from the geometries (default: casters.py),
        and once per actor from its geometry (core/world/actors.py, raycast/actor_casting.py).
        """
        self.frame = frame
        self.objects = list(objects)
        self.actors = list(actors)
        self.smoke, self.smoke_density = smoke, smoke_density
        self.materials = materials
        self._geoms = list(geometries)
        every = self.objects + [a.obj for a in self.actors]
        self._names = {o.name: i for i, o in enumerate(every)}
        # the world file and every file it references (World.load)
        self.files: tuple[Path, ...] = ()
        # (object, material, why) of the SDF surfaces (sdf/materials.py)
        self.sdf_report: list[tuple[str, str, str]] = []
        self._caster_factory = CASTERS[DEFAULT_CASTER] if caster is None else caster
        n = len(self.objects)
        casting = ActorCasting([a.geometry for a in self.actors], self._caster_factory, n) \
            if self.actors else None
        instance = np.r_[np.zeros(n), np.arange(1, len(self.actors) + 1)].astype(np.uint16)
        # Which objects pass rays under glass: physical is a property of their material.
        panes = (MaterialTable.load() if materials is None else materials).panes
        self._tracer = Tracer(self._geoms + [a.geometry for a in self.actors],
                              [o.material for o in every], [o.class_id for o in every],
                              [o.foliage for o in every], [o.ground for o in every],
                              self._caster_factory(self._geoms), casting, instance,
                              panes[np.array([o.material for o in every], np.intp)])

    def __reduce__(self) -> tuple[type[World], tuple[Any, ...], dict[str, Any]]:
        """Pickle as the parts the world is built from (a caster's scenes need not pickle)."""
        return (World, (self.frame, self.objects, self._geoms, self.smoke,
                        self.smoke_density, self.materials, self._caster_factory, self.actors),
                {'files': self.files, 'sun_direction': self.sun_direction})

    @property
    def geometries(self) -> list[Geometry]:
        """Return the static objects' world-frame Geometry list, in the order of objects."""
        return list(self._geoms)

    @property
    def n_triangles(self) -> int:
        """Total triangle count of the scene."""
        return int(self._tracer.n_triangles)

    @property
    def caster(self) -> Caster:
        """
        Return the world's ray-casting backend (a raycast.backend.Caster) for a bare cast.

        ``world.caster.cast_rays(rays (M, 6) float32)``: object indices follow ``objects``.
        """
        return self._tracer.caster

    @classmethod
    def load(cls, spec: str | Path, materials: MaterialTable | None = None,
             max_triangles: int = MAX_TRIANGLES, caster: CasterFactory | None = None,
             model_paths: Sequence[str] = (),
             sdf_geometry: str = SDF_GEOMETRY_DEFAULT, sdf_missing: str = 'error') -> World:
        """
        Load 'demo', 'flat', an example by name, a world YAML path or an SDF world (.sdf).

        materials: the MaterialTable whose reflectivity_sd / micro_slope_deg texture the ground
        (None loads the default table); max_triangles caps the whole world; caster: the
        backend.CasterFactory (None: the default of raycast/casters.py); model_paths,
        sdf_geometry, sdf_missing: the SDF options (docs/worlds.md, "Gazebo SDF worlds"). The
        kinds of world are the loaders of sources.py; a node's or a command's world comes
        through load_for_config.
        """
        materials = MaterialTable.load() if materials is None else materials
        src = read_world(resolve_world(spec))
        world = cls.from_dict(src.data, src.source, src.base_dir, materials, max_triangles,
                              caster, (tuple(model_paths), sdf_geometry, sdf_missing),
                              src.direct_sdf)
        if src.read_file:
            world.files = (Path(src.source), *world.files)
        return world

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = '<dict>', base_dir: Path | None = None,
                  materials: MaterialTable | None = None, max_triangles: int = MAX_TRIANGLES,
                  caster: CasterFactory | None = None,
                  sdf: tuple[Sequence[str], str, str] = ((), SDF_GEOMETRY_DEFAULT, 'error'),
                  direct_sdf: bool = False) -> World:
        """
        Build a world from the parsed YAML mapping; relative files resolve against base_dir.

        sdf: (model_paths, sdf_geometry, sdf_missing) of its SDF entries; direct_sdf: the file is
        SDF itself.
        """
        ctx = Context(source, base_dir, max_triangles, *sdf)
        frame, entries = check_world(data, ctx)
        check_actor_list(data, ctx)         # the count, before anything is built
        is_sdf = [isinstance(e, dict) and e.get('type') == 'sdf' for e in entries]
        objects, geoms = build_objects([e for e, s in zip(entries, is_sdf) if not s], ctx,
                                       max_triangles)
        scenes = [sdf_entry(e, k, ctx, max_triangles - sum(o.n_triangles for o in objects),
                            direct_sdf) for k, (e, s) in enumerate(zip(entries, is_sdf)) if s]
        names = {o.name for o in objects}
        for scene in scenes:            # a Python loop over SDF entries, then their surfaces
            for obj, geom in scene.parts:
                if obj.name in names:
                    raise ctx.error('objects', f"duplicate name '{obj.name}' (an SDF surface)")
                names.add(obj.name)
                objects.append(obj)
                geoms.append(geom)
        actors = build_actors(data, ctx, max_triangles - sum(o.n_triangles for o in objects),
                              [o.name for o in objects])
        actors += [a for scene in scenes for a in scene.actors]
        if len(actors) > MAX_ACTORS:
            raise ctx.error('actors', f'{len(actors)} actors (with the SDF ones), at most '
                            f'{MAX_ACTORS}')
        smoke, density = check_smoke(data.get('smoke', []) or [], ctx)
        world = cls(frame, objects, geoms, smoke, density, materials, caster, actors)
        world.files, world.sun_direction = tuple(ctx.files), check_sun(data, ctx, scenes)
        world.sdf_report = [row for scene in scenes for row in scene.report]
        return world

    def with_actors(self, extra: Sequence[Actor]) -> World:
        """Return this world with the actors extra after its own (e.g. actors.fleet_actors)."""
        world = World(self.frame, self.objects, self._geoms, self.smoke, self.smoke_density,
                      self.materials, self._caster_factory, self.actors + list(extra))
        world.files, world.sun_direction = self.files, self.sun_direction
        return world

    def actor_frame(self, n: int, times: RayTimes | None = None,
                    actor_poses: Mapping[str, PoseAt] | None = None) -> ActorFrame | None:
        """
        Return the actors of a cast of n rays fired at times (None: all at t = 0 s).

        An actor is posed by actor_poses[its name] when given there (a node's /tf lookup),
        else by its trajectory (times from the recording start); a frame actor without an
        entry is not drawn. None when the world has no actors.
        """
        casting = self._tracer.actors
        if not self.actors or casting is None:
            return None
        times = one_instant(n, 0.0) if times is None else times
        if times.time_s.shape != (n,) or times.column.shape != (n,):
            raise ConfigError('times', f'{times.time_s.shape} {times.column.shape}',
                              f'({n},) firing times and columns, one per ray')
        poses = actor_poses or {}
        chosen = [(k, poses.get(a.name, a.trajectory)) for k, a in enumerate(self.actors)]
        return casting.frame([(k, p) for k, p in chosen if p is not None], times)

    def _texture(self, materials: MaterialTable | None, sd: ArrayLike | None,
                 slope: ArrayLike | None) -> tuple[NDArray[np.float64] | None,
                                                   NDArray[np.float64] | None]:
        """Return per-material (17,) reflectivity_sd and micro_slope_deg arrays (None = off)."""
        materials = self.materials if materials is None else materials
        if materials is not None:
            sd = materials.reflectivity_sd if sd is None else sd
            slope = materials.micro_slope_deg if slope is None else slope
        return (None if sd is None else np.asarray(sd, np.float64),
                None if slope is None else np.asarray(slope, np.float64))

    def ground_albedo(self, points: NDArray[np.float64], material: NDArray[np.uint8],
                      sd_table: NDArray[np.float64]) -> NDArray[np.float32]:
        """
        Albedo (K,) float32 of the ground texture at points (K, 3) of materials (K,) uint8.

        sd_table (17,): each material's reflectivity_sd. The values a ground hit there gets.
        """
        albedo: NDArray[np.float32] = self._tracer.ground_albedo(points, material, sd_table)
        return albedo

    def ignored_indices(self, ignored: str | Iterable[str]) -> frozenset[int]:
        """Map ignored object names to a frozenset of object indices."""
        if isinstance(ignored, str):
            ignored = (ignored,)
        out: set[int] = set()
        for name in ignored:
            if name not in self._names:
                names = ', '.join(list(self._names)[:8])
                names += ', ...' if len(self._names) > 8 else ''
                raise ConfigError('ignored_objects', name, f'names of world objects ({names})')
            out.add(self._names[name])
        return frozenset(out)

    def trace(self, origins: ArrayLike, dirs: ArrayLike, max_range_m: ArrayLike, *,
              rays32: NDArray[np.float32] | None = None, times: RayTimes | None = None,
              actor_poses: Mapping[str, PoseAt] | None = None, **settings: Any) -> Hits:
        """
        Keyword form of trace_rays: rays (N, 3) world frame, settings TraceSettings' fields.

        times, actor_poses: when each ray meets the world's actors and where they are
        (actor_frame; None: t = 0 s). Hits.instance_id names the actor hit (0: static world).
        """
        return self.trace_rays(RayBatch(origins, dirs, max_range_m, rays32, times),
                               TraceSettings(**settings), ActorPoses(actor_poses))

    def trace_rays(self, rays: RayBatch, settings: TraceSettings,
                   sweep: SweepActors = NO_ACTOR_POSES) -> Hits:
        """
        Trace rays through foliage and smoke under settings; returns Hits sorted by (ray, range).

        query.py's TraceSettings say what each setting does; sweep.actor_poses pose the actors.
        """
        s = settings
        o, d, rng = check_rays(rays.origins, rays.dirs, rays.max_range_m)
        panes = glass_physical(s.glass)
        actors = self.actor_frame(o.shape[0], rays.times, sweep.actor_poses)
        rays32 = rays.rays32
        if rays32 is not None and (rays32.dtype != np.float32 or rays32.shape != (o.shape[0], 6)):
            raise ConfigError('rays32', f'{rays32.dtype} {rays32.shape}',
                              f'float32 ({o.shape[0]}, 6): the rays of origins and dirs')
        smoke_range = None
        if s.smoke_enabled:
            cells, dens = self.smoke_cells(s.smoke, s.smoke_density)
            if len(cells):
                smoke_range = smoke_entry(o, d, cells, dens, s.smoke_radius_scale,
                                          s.smoke_density_threshold, rng)
        sd, slope = self._texture(s.materials, s.reflectivity_sd, s.micro_slope_deg)
        return self._tracer.trace(o, d, rng, int(s.max_hits), float(s.continue_step_m),
                                  self.ignored_indices(s.ignored), smoke_range, True, sd, slope,
                                  bool(s.with_points), bool(s.with_normals), rays32, actors,
                                  panes)

    def smoke_cells(self, smoke: ArrayLike | None, smoke_density: ArrayLike | None
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return the world's smoke cells (K, 4) and densities (K,) with a scan's own added."""
        cells, dens = self.smoke, self.smoke_density
        extra = np.asarray(() if smoke is None else smoke, np.float64)
        if not extra.size:
            return cells, dens
        if extra.ndim == 2 and extra.shape[1] == 5 and smoke_density is None:
            extra, extra_d = extra[:, :4], extra[:, 4]
        else:
            extra_d = np.asarray(smoke_density, np.float64).reshape(-1)
        if extra.ndim != 2 or extra.shape[1] != 4 or extra_d.shape != extra.shape[:1]:
            raise ConfigError('smoke', extra.shape, '(K, 4) with smoke_density (K,), or (K, 5)')
        return np.concatenate([cells, extra]), np.concatenate([dens, extra_d])

    def cast(self, origins: ArrayLike, dirs: ArrayLike, max_range_m: ArrayLike,
             ignored: str | Iterable[str] = (), materials: MaterialTable | None = None,
             reflectivity_sd: ArrayLike | None = None,
             micro_slope_deg: ArrayLike | None = None, texture: bool = True,
             times: RayTimes | None = None,
             actor_poses: Mapping[str, PoseAt] | None = None, glass: str = 'opaque') -> Hits:
        """
        Return the first hit of each ray (no foliage continuation, no smoke), <= N Hits rows.

        texture False: no ground texture (albedo 1, the faces' own normals), for a caller that
        needs only ranges, objects and materials. times, actor_poses: as in trace; glass as in
        first_surfaces.
        """
        o, d, rng = check_rays(origins, dirs, max_range_m)
        sd, slope = self._texture(materials, reflectivity_sd, micro_slope_deg) if texture \
            else (None, None)
        return self._tracer.trace(o, d, rng, 1, 1.0, self._first_ignored(ignored, glass), None,
                                  False,
                                  sd, slope, actors=self.actor_frame(o.shape[0], times,
                                                                     actor_poses))

    def _first_ignored(self, ignored: str | Iterable[str], glass: str) -> frozenset[int]:
        """Return the object indices a first-hit cast ignores: ignored, and panes for physical."""
        out = self.ignored_indices(ignored)
        if glass_physical(glass):
            out = out | frozenset(np.flatnonzero(self._tracer.panes).tolist())
        return out

    def first_surfaces(self, origins: NDArray[np.float64], dirs: NDArray[np.float64],
                       rays32: NDArray[np.float32], max_range_m: float,
                       ignored: str | Iterable[str] = (), times: RayTimes | None = None,
                       actor_poses: Mapping[str, PoseAt] | None = None, glass: str = 'opaque'
                       ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.uint8],
                                  NDArray[np.uint16], NDArray[np.uint16]]:
        """
        Return the first surface each of a sensor's rays meets (World.cast without texture).

        origins, dirs (N, 3) float64 (unit dirs, no -0.0 in origins) and rays32 (N, 6) float32
        the same rays (sensors.sweep_passes.rotate_sub_rays gives all three; not checked again).
        Returns ray (K,) int64 ascending, range (K,) float64 (<= max_range_m), material and
        class_id (K,) uint16 and instance_id (K,) uint16 of the K rays that hit. times,
        actor_poses: as in trace. glass 'physical': the rays pass glass panes (the geometric
        model keeps no pane return), 'opaque': a pane is a wall.
        """
        actors = self.actor_frame(origins.shape[0], times, actor_poses)
        ray, rng, obj = self._tracer.first_hits(origins, dirs, rays32, float(max_range_m),
                                                self._first_ignored(ignored, glass), actors)
        return (ray, rng, self._tracer.material[obj], self._tracer.class_id[obj],
                self._tracer.instance_of(obj))


# The parameters load_for_config reads: two nodes whose values agree can share one World.
WORLD_PARAMETERS = ('world_file', 'materials_file', 'model_paths', 'sdf_geometry', 'sdf_missing',
                    'caster')


class WorldOptions(Protocol):
    """What load_for_config reads of a config (core/config/shared.py WorldParams)."""

    @property
    def world_file(self) -> str: ...  # noqa: D102

    @property
    def material_table_file(self) -> str: ...  # noqa: D102

    @property
    def model_paths(self) -> Sequence[str]: ...  # noqa: D102

    @property
    def sdf_geometry(self) -> str: ...  # noqa: D102

    @property
    def sdf_missing(self) -> str: ...  # noqa: D102

    @property
    def caster(self) -> str: ...  # noqa: D102


def materials_for_config(cfg: WorldOptions) -> MaterialTable:
    """Return the MaterialTable of a config: the defaults, then its materials_file."""
    table: MaterialTable = MaterialTable.load(cfg.material_table_file or None)
    return table


def world_key(cfg: WorldOptions) -> tuple[str, str, tuple[str, ...], str, str, str]:
    """Return the values load_for_config reads of cfg: equal keys load equal worlds."""
    return (cfg.world_file, cfg.material_table_file, tuple(cfg.model_paths), cfg.sdf_geometry,
            cfg.sdf_missing, cfg.caster)


def load_for_config(cfg: WorldOptions, cast_threads: int = 0) -> tuple[World, MaterialTable]:
    """
    Load the world of a config: the one loading function of the nodes, scan, run and dataset.

    Reads world_file, materials_file (material_table_file), model_paths, sdf_geometry,
    sdf_missing and caster (core/config/shared.py WorldParams); cast_threads: threads per
    cast (0: every core).
    Returns (World, MaterialTable).
    """
    materials = materials_for_config(cfg)
    return World.load(cfg.world_file, materials, caster=caster_factory(cfg.caster, cast_threads),
                      model_paths=cfg.model_paths, sdf_geometry=cfg.sdf_geometry,
                      sdf_missing=cfg.sdf_missing), materials
