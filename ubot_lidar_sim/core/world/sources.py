"""
World loaders, registered in one place: how a world name or file becomes a world-file mapping.

A loader answers two questions: ``accepts(spec)`` (spec a built-in name or a resolved Path) and
``read(spec)``, the world-file mapping (docs/worlds.md) World.from_dict builds, with the name
errors give and the directory relative files resolve against. The first loader that accepts a
spec reads it: builtin ('demo', 'flat'), sdf (.world, .sdf), occupancy (a Nav2 map_server YAML
given as the world itself), yaml (every other file). A new kind of world is its loader and one
``register_loader`` call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ubot_lidar_sim.core.world.builtin import build as build_builtin, BUILTIN_WORLDS
from ubot_lidar_sim.core.world.sdf.entry import SDF_SUFFIXES
from ubot_lidar_sim.core.yaml_io import read_yaml

# The keys of a Nav2 map_server YAML (nav2_map_server/src/map_io.cpp, loadMapYaml: image,
# resolution and origin are required); a world file has none of them.
MAP_SERVER_KEYS = ('image', 'resolution', 'origin')


class WorldSource(NamedTuple):
    """What a loader read: the world-file mapping, its name in errors, its directory."""

    data: dict[str, Any]
    source: str             # '<demo>' or the file's path
    base_dir: Path | None   # relative files resolve against it (None: a built-in world)
    direct_sdf: bool        # the file is an SDF world itself (its errors are the SDF's lines)
    read_file: bool         # the spec is a file read by the loader (it joins World.files)


class WorldLoader(NamedTuple):
    """A kind of world: its name, the test of a spec and the reader."""

    name: str
    accepts: Callable[[str | Path], bool]
    read: Callable[[Any], WorldSource]


def _is_builtin(spec: str | Path) -> bool:
    return isinstance(spec, str) and spec in BUILTIN_WORLDS


def _read_builtin(spec: str) -> WorldSource:
    return WorldSource(build_builtin(spec), f'<{spec}>', None, False, False)


def _is_sdf(spec: str | Path) -> bool:
    return isinstance(spec, Path) and spec.suffix.lower() in SDF_SUFFIXES


def _read_sdf(path: Path) -> WorldSource:
    return WorldSource({'objects': [{'type': 'sdf', 'file': path.name}]}, str(path),
                       path.parent, True, False)


def _is_map(spec: str | Path) -> bool:
    if not isinstance(spec, Path) or spec.suffix.lower() not in ('.yaml', '.yml'):
        return False
    data = read_yaml(spec)
    return isinstance(data, dict) and all(k in data for k in MAP_SERVER_KEYS)


def _read_map(path: Path) -> WorldSource:
    entry = {'name': path.stem, 'type': 'occupancy_map', 'file': path.name}
    return WorldSource({'objects': [entry]}, str(path), path.parent, False, False)


def _read_yaml(path: Path) -> WorldSource:
    return WorldSource(read_yaml(path), str(path), path.parent, False, True)


LOADERS: list[WorldLoader] = []


def register_loader(name: str, accepts: Callable[[str | Path], bool],
                    read: Callable[[Any], WorldSource]) -> None:
    """Add a kind of world; it is tried after those registered before it."""
    LOADERS.append(WorldLoader(name, accepts, read))


register_loader('builtin', _is_builtin, _read_builtin)
register_loader('sdf', _is_sdf, _read_sdf)
register_loader('occupancy', _is_map, _read_map)
register_loader('yaml', lambda spec: isinstance(spec, Path), _read_yaml)


def read_world(spec: str | Path) -> WorldSource:
    """Return the WorldSource of a resolved spec (names.resolve_world) by the first loader."""
    for loader in LOADERS:
        if loader.accepts(spec):
            return loader.read(spec)
    raise ValueError(f'no world loader accepts {spec!r}')   # 'yaml' takes every path
