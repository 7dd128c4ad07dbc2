"""
A ``{type: sdf, file: PATH}`` entry of a YAML world (or a .world / .sdf world file itself).

Keys: ``file`` (the SDF world), ``materials`` ({glob: material}, beside or instead of the
sidecar ``<world>.materials.yaml``, where ``<world>`` is the file's name with or without its
suffix: ``cafe.materials.yaml`` or ``cafe.world.materials.yaml``), ``material`` (the default,
``other``) and ``missing`` (``error`` | ``warn``: build.py). The options ``model_paths``,
``sdf_geometry`` and ``sdf_missing`` (the default of ``missing``) come from the sensor's
parameters (schema.Context).
"""

from typing import Any

from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.world.schema import Context, short
from ubot_lidar_sim.core.world.sdf.build import load_sdf, MISSING, SdfScene
from ubot_lidar_sim.core.world.sdf.materials import check_mapping
from ubot_lidar_sim.core.world.sdf.reading import SdfError
from ubot_lidar_sim.core.yaml_io import read_yaml

SDF_SUFFIXES = ('.world', '.sdf')
ENTRY_KEYS = ('type', 'name', 'file', 'materials', 'material', 'missing')


def sdf_entry(entry: dict[str, Any], index: int, ctx: Context, budget: int,
              direct: bool = False) -> SdfScene:
    """
    Load the SDF world of objects[index]; returns its build.SdfScene.

    direct: the world file is the SDF file itself (errors are the SDF's own lines).
    """
    where = f'objects[{index}]'
    unknown = sorted(set(map(str, entry)) - set(ENTRY_KEYS))
    if unknown:
        raise ctx.error(f'{where}.{unknown[0]}', 'unknown key for an sdf entry, allowed '
                        + ', '.join(ENTRY_KEYS))
    default = entry.get('material', 'other')
    if default not in MATERIAL_NAMES:
        raise ctx.error(f'{where}.material', f'unknown material {short(default)}, allowed '
                        + ', '.join(MATERIAL_NAMES))
    missing = entry.get('missing', ctx.sdf_missing)
    if missing not in MISSING:
        raise ctx.error(f'{where}.missing', f'{short(missing)} is not one of '
                        + ', '.join(MISSING))
    path = ctx.path(entry, where)
    try:
        # the entry's patterns first, then the sidecar's: the first match wins
        mapping = check_mapping(entry.get('materials'), f'{ctx.source}: {where}.materials')
        for sidecar in (path.with_suffix('.materials.yaml'),
                        path.with_name(path.name + '.materials.yaml')):
            if sidecar.is_file():
                for pattern, material in check_mapping(read_yaml(sidecar),
                                                       str(sidecar)).items():
                    mapping.setdefault(pattern, material)
                ctx.files.append(sidecar)
        scene = load_sdf(path, ctx.model_paths,
                         ctx.sdf_geometry, mapping, default, budget,
                         missing)
    except SdfError as exc:
        if direct:
            raise WorldError(str(exc)) from None
        raise ctx.error(f'{where}.file', str(exc)) from None
    ctx.files += [f for f in scene.files if f not in ctx.files]
    return scene
