"""
What loading a world reads, counted without building it: for the line a node says while it waits.

``outline('big.sdf')`` is e.g. ``'SDF: 40 meshes, 3 included models, 1 heightmap'``: the
elements of the file itself (an included model's own meshes are read when it is loaded). A YAML
world counts its objects by type and its actors. Only the file is parsed (defused XML or YAML,
the loaders' own readers), so this is quick beside the load it describes.
"""

from collections import Counter
from pathlib import Path

from ubot_lidar_sim.core.world.builtin import BUILTIN_WORLDS
from ubot_lidar_sim.core.world.names import resolve_world
from ubot_lidar_sim.core.world.sdf.entry import SDF_SUFFIXES
from ubot_lidar_sim.core.world.sdf.reading import read_xml
from ubot_lidar_sim.core.yaml_io import read_yaml

#: SDF elements counted, and their names in the outline.
_SDF_COUNTED = (('mesh', 'mesh', 'meshes'), ('include', 'included model', 'included models'),
                ('heightmap', 'heightmap', 'heightmaps'), ('actor', 'actor', 'actors'))


def _plural(n: int, one: str, many: str) -> str:
    return f'{n} {one if n == 1 else many}'


def outline(spec: str | Path) -> str:
    """Return what loading the world spec (a name or a path) reads, in a few words."""
    path = resolve_world(spec)
    if isinstance(path, str) and path in BUILTIN_WORLDS:
        return 'built in'
    path = Path(path)
    if path.suffix.lower() in SDF_SUFFIXES:
        root = read_xml(path)
        counts = [(sum(1 for _ in root.iter(tag)), one, many) for tag, one, many in _SDF_COUNTED]
        return 'SDF: ' + ', '.join(_plural(*c) for c in counts if c[0]) if any(
            c[0] for c in counts) else 'SDF'
    data = read_yaml(path)
    objects = data.get('objects', []) if isinstance(data, dict) else []
    kinds = Counter(o.get('type', '?') for o in objects if isinstance(o, dict))
    actors = data.get('actors', []) if isinstance(data, dict) else []
    parts = [f'{n} {kind}' for kind, n in sorted(kinds.items())]
    parts += [_plural(len(actors), 'actor', 'actors')] if actors else []
    return 'YAML: ' + ', '.join(parts) if parts else 'YAML'
