"""
The world-file format: allowed keys per object type, and the checks with their one-line errors.

Every problem raises a WorldError '<file>: <key path>: <problem>', e.g.
``worlds/farm.yaml: objects[3] 'barn'.size_m: expected a list of 3 numbers > 0, got [4, 2]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.class_ids import CLASS_ID_RULE, default_class, is_class_id
from ubot_lidar_sim.core.errors import shown, WorldError
from ubot_lidar_sim.core.material_ids import FOLIAGE_MATERIALS, MATERIAL_NAMES
from ubot_lidar_sim.core.yaml_io import check_regular_file, FileRefused

MAX_TRIANGLES = 5_000_000
# Every length and coordinate of a world: float32 geometry keeps ~6 cm at 1000 km, and beyond
# float32's 3.4e38 an object would silently vanish from the scene.
MAX_EXTENT_M = 1e6
WORLD_KEYS = ('frame', 'objects', 'actors', 'smoke', 'sun')
# Actors are cast one caster each, per cast: a thousand keeps a world's actors a fleet, not a
# crowd the cast cannot carry; checked before any actor is built.
MAX_ACTORS = 1024
ACTOR_TYPES = ('box', 'sphere', 'cylinder', 'mesh')
COMMON_KEYS = {'name', 'type', 'material', 'class_id', 'foliage', 'ground', 'pose'}
TYPE_KEYS = {
    'plane': {'size_m'}, 'box': {'size_m'}, 'sphere': {'radius_m'},
    'cylinder': {'radius_m', 'height_m'}, 'mesh': {'file', 'scale'},
    'heightfield': {'file', 'cell_m', 'height_scale_m'},
    'occupancy_map': {'file', 'wall_height_m'},
}
SMOKE_KEYS = ('center', 'radius_m', 'density')
SUN_KEYS = ('direction',)
# Which geometry of an SDF link the rays meet (docs/worlds.md, "Gazebo SDF worlds"): the one
# default of the sdf_geometry parameter, World.load and the SDF loader.
SDF_GEOMETRIES = ('visual', 'collision')
SDF_GEOMETRY_DEFAULT = 'visual'


def short(value: object) -> str:
    """Return repr(value) cut to one short line for an error message (errors.shown)."""
    text = shown(value).replace('\n', ' ')
    return text if len(text) <= 60 else text[:57] + '...'


class Context:
    """Where the values come from (file name, directory for relative paths) and the budget."""

    def __init__(self, source: str, base_dir: Path | None, max_triangles: int,
                 model_paths: Sequence[str] = (), sdf_geometry: str = SDF_GEOMETRY_DEFAULT,
                 sdf_missing: str = 'error') -> None:
        """
        Name the file (source) in errors; base_dir resolves relative paths (None: cwd).

        model_paths, sdf_geometry, sdf_missing: the options of the world's SDF entries
        (sdf/entry.py).
        """
        self.source, self.base_dir, self.budget = source, base_dir, max_triangles
        self.model_paths, self.sdf_geometry = tuple(model_paths), sdf_geometry
        self.sdf_missing = sdf_missing
        # every file path() returned, in order: what the world was read from
        self.files: list[Path] = []

    def error(self, where: str, problem: str) -> WorldError:
        """Return the WorldError '<source>: <where>: <problem>'."""
        return WorldError(f'{self.source}: {where}: {problem}')

    def number(self, obj: Mapping[str, Any], key: str, where: str, default: float | None = None,
               positive: bool = True) -> float:
        """Return obj[key] as a finite float (> 0 if positive), |value| <= MAX_EXTENT_M."""
        value = obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or (positive and value <= 0):
            need = 'a number > 0' if positive else 'a finite number'
            raise self.error(f'{where}.{key}', f'expected {need}, got {short(value)}')
        self.within_extent(abs(value), f'{where}.{key}', short(value))
        return float(value)

    def within_extent(self, largest: float, where: str, what: str) -> None:
        """Raise '<where>: <what> is beyond ...' when largest (m) exceeds MAX_EXTENT_M."""
        if largest > MAX_EXTENT_M:
            raise self.error(where, f'{what} is beyond the {MAX_EXTENT_M:g} m a world may span '
                             '(float32 geometry)')

    def vector(self, obj: Mapping[str, Any], key: str, where: str, n: int,
               default: Sequence[float] | None = None, positive: bool = False
               ) -> NDArray[np.float64]:
        """Return obj[key] as an (n,) float64 array of finite numbers (> 0 if positive)."""
        value = obj.get(key, default)
        ok = isinstance(value, (list, tuple)) and len(value) == n and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            and (v > 0 or not positive) for v in value)
        if not ok:
            need = 'numbers > 0' if positive else 'numbers'
            raise self.error(f'{where}.{key}',
                             f'expected a list of {n} {need}, got {short(value)}')
        self.within_extent(max(abs(v) for v in value), f'{where}.{key}', short(value))
        return np.asarray(value, np.float64)

    def path(self, obj: Mapping[str, Any], where: str) -> Path:
        """Return the existing regular file named by obj['file'] (relative to base_dir)."""
        value = obj.get('file')
        if not isinstance(value, str) or not value:
            raise self.error(f'{where}.file', f'expected a file path, got {short(value)}')
        path = Path(value)
        if not path.is_absolute() and self.base_dir is not None:
            path = self.base_dir / path
        try:
            check_regular_file(path)
        except FileRefused as exc:
            raise self.error(f'{where}.file', f"'{path}' is {exc.strerror}") from None
        except OSError:
            raise self.error(f'{where}.file', f"file '{path}' not found") from None
        self.files.append(path)
        return path


def check_world(data: object, ctx: Context) -> tuple[str, list[Any]]:
    """Check the top level of a world file; returns (frame, list of object mappings)."""
    if not isinstance(data, dict):
        raise ctx.error('file', f'expected a mapping with frame, objects, smoke; got '
                        f'{type(data).__name__}')
    unknown = sorted(set(data) - set(WORLD_KEYS))
    if unknown:
        raise ctx.error(unknown[0], 'unknown key, allowed ' + ', '.join(WORLD_KEYS))
    frame = data.get('frame', 'map')
    if not isinstance(frame, str) or not frame:
        raise ctx.error('frame', f'expected a non-empty string, got {short(frame)}')
    entries = data.get('objects', [])
    if not isinstance(entries, list):
        raise ctx.error('objects', f'expected a list, got {short(entries)}')
    return frame, entries


def check_actor_list(data: object, ctx: Context) -> list[Any]:
    """Return the world's actors list (at most MAX_ACTORS entries), before any is built."""
    actors = data.get('actors', []) if isinstance(data, dict) else []
    actors = [] if actors is None else actors
    if not isinstance(actors, list):
        raise ctx.error('actors', f'expected a list, got {short(actors)}')
    if len(actors) > MAX_ACTORS:
        raise ctx.error('actors', f'{len(actors)} actors, at most {MAX_ACTORS}')
    return actors


@dataclass(frozen=True)
class ObjectKeys:
    """The checked common keys of one object entry (its type keys are read by its builder)."""

    kind: str
    name: str
    where: str                      # "objects[3] 'barn'": the key path of its errors
    material: int
    class_id: int
    foliage: bool
    ground: bool
    xyz: np.ndarray                 # (3,) float64 m
    rpy_deg: np.ndarray             # (3,) float64 deg


def check_object(obj: object, index: int, ctx: Context, section: str = 'objects'
                 ) -> ObjectKeys:
    """
    Check the keys of objects[index] and its common values; returns ObjectKeys.

    section 'actors': an entry of the actors list (its types ACTOR_TYPES, plus ``motion``).
    """
    where = f'{section}[{index}]'
    if not isinstance(obj, dict):
        raise ctx.error(where, f'expected a mapping, got {short(obj)}')
    kinds = ACTOR_TYPES if section == 'actors' else tuple(TYPE_KEYS)
    extra = {'motion'} if section == 'actors' else set()
    kind = obj.get('type')
    name = obj.get('name', f'{kind}_{index}')
    if not isinstance(name, str) or not name:
        raise ctx.error(f'{where}.name', f'expected a non-empty string, got {short(name)}')
    if kind not in kinds:
        named = f"{where} '{name}'" if section == 'actors' and 'name' in obj else where
        raise ctx.error(f'{named}.type', f'unknown type {short(kind)}, allowed '
                        + ', '.join(kinds))
    where = f"{section}[{index}] '{name}'"
    unknown = sorted(set(obj) - COMMON_KEYS - TYPE_KEYS[kind] - extra)
    if unknown:
        raise ctx.error(f'{where}.{unknown[0]}', f'unknown key for a {kind}, allowed '
                        + ', '.join(sorted(COMMON_KEYS | TYPE_KEYS[kind] | extra)))
    material = obj.get('material', 'other')
    if material not in MATERIAL_NAMES:
        raise ctx.error(f'{where}.material', f'unknown material {short(material)}, allowed '
                        + ', '.join(MATERIAL_NAMES))
    mat = MATERIAL_NAMES.index(material)
    class_id = obj.get('class_id', default_class(material))
    if not is_class_id(class_id):
        raise ctx.error(f'{where}.class_id', f'{CLASS_ID_RULE}, got {short(class_id)}')
    flags: dict[str, Any] = {}
    for key, default in (('foliage', material in FOLIAGE_MATERIALS),
                         ('ground', kind in ('plane', 'heightfield'))):
        flags[key] = obj.get(key, default)
        if not isinstance(flags[key], bool):
            raise ctx.error(f'{where}.{key}', f'expected true or false, got {short(flags[key])}')
    pose = obj.get('pose', {})
    if not isinstance(pose, dict) or set(pose) - {'xyz', 'rpy_deg'}:
        bad = sorted(set(pose) - {'xyz', 'rpy_deg'}) if isinstance(pose, dict) else None
        raise ctx.error(f'{where}.pose' + (f'.{bad[0]}' if bad else ''),
                        'unknown key, allowed xyz, rpy_deg' if bad else 'expected a mapping')
    return ObjectKeys(kind, name, where, mat, class_id, flags['foliage'], flags['ground'],
                      ctx.vector(pose, 'xyz', f'{where}.pose', 3, [0.0, 0.0, 0.0]),
                      ctx.vector(pose, 'rpy_deg', f'{where}.pose', 3, [0.0, 0.0, 0.0]))


def check_smoke(entries: object, ctx: Context
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Check the static smoke list; returns cells (K, 4) x, y, z, radius_m and densities (K,)."""
    if not isinstance(entries, list):
        raise ctx.error('smoke', f'expected a list, got {short(entries)}')
    cells: list[list[float]] = []
    dens: list[float] = []
    for k, cell in enumerate(entries):
        where = f'smoke[{k}]'
        if not isinstance(cell, dict):
            raise ctx.error(where, f'expected a mapping, got {short(cell)}')
        unknown = sorted(set(cell) - set(SMOKE_KEYS))
        if unknown:
            raise ctx.error(f'{where}.{unknown[0]}',
                            'unknown key, allowed ' + ', '.join(SMOKE_KEYS))
        density = ctx.number(cell, 'density', where, positive=False)
        if not 0.0 <= density <= 1.0:
            raise ctx.error(f'{where}.density', f'expected 0-1, got {density}')
        cells.append([*ctx.vector(cell, 'center', where, 3), ctx.number(cell, 'radius_m', where)])
        dens.append(density)
    return np.asarray(cells, np.float64).reshape(-1, 4), np.asarray(dens, np.float64)


def check_sun(data: Mapping[str, Any], ctx: Context, scenes: Sequence[Any] = ()
              ) -> NDArray[np.float64] | None:
    """
    Return the world's sun direction: None (no sun) or the unit (3,) vector light travels.

    ``sun: {direction: [x, y, z]}`` of the world mapping data, in the world frame, the way
    SDF's directional ``<light><direction>`` gives it (from the sun to the scene; z < 0 by
    day); without it the first SDF scene's directional light (scenes: sdf.build.SdfScene).
    """
    entry = data.get('sun')
    if entry is None:
        sun = next((s.sun for s in scenes if s.sun is not None), None)
        return None if sun is None else np.asarray(sun / np.linalg.norm(sun), np.float64)
    if not isinstance(entry, dict):
        raise ctx.error('sun', f'expected a mapping, got {short(entry)}')
    unknown = sorted(set(entry) - set(SUN_KEYS))
    if unknown:
        raise ctx.error(f'sun.{unknown[0]}', 'unknown key, allowed ' + ', '.join(SUN_KEYS))
    d = ctx.vector(entry, 'direction', 'sun', 3)
    norm = float(np.linalg.norm(d))
    if not norm > 0.0:
        raise ctx.error('sun.direction', f'expected a non-zero vector, got {short(d.tolist())}')
    return d / norm
