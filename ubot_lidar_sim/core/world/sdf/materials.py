"""
Which material of config/materials.yaml each SDF surface gets, and why (docs/worlds.md).

In order: the first glob pattern of the mapping (a YAML sidecar ``<world>.materials.yaml``
beside the SDF file, or ``materials:`` of the YAML world's ``{type: sdf}`` entry, which wins)
that matches the scoped name ``model::link::visual`` or any one of its names; else the Gazebo
material script name (``<material><script><name>``) by GAZEBO_SCRIPTS; else the words of the
surface's names and texture names (name_rules.py); else the default material (``other``, or
the entry's ``material``). The PBR / COLLADA diffuse colour is not used:
no published rule maps an RGB albedo to a reflectance at 905 nm (docs/worlds.md).
"""

from collections.abc import Mapping
from fnmatch import fnmatchcase
from xml.etree.ElementTree import Element

from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.world.sdf.name_rules import material_from_names
from ubot_lidar_sim.core.world.sdf.reading import SdfError

# Gazebo's stock material scripts (gazebo.material of Gazebo Classic, also read by Gazebo Sim)
# -> the material of the table whose surface they draw; each target carries its own published
# 905 nm values in config/materials.yaml. Greys and bricks are the concrete / building walls of
# the stock worlds; the wood scripts are wood.
GAZEBO_SCRIPTS = {
    'Gazebo/Grass': 'grass', 'Gazebo/GrassFloor': 'grass',
    'Gazebo/Asphalt': 'asphalt', 'Gazebo/Road': 'asphalt', 'Gazebo/Residential': 'asphalt',
    'Gazebo/Water': 'water', 'Gazebo/Dirt': 'soil', 'Gazebo/Mud': 'mud',
    'Gazebo/Wood': 'wood', 'Gazebo/WoodFloor': 'wood', 'Gazebo/WoodPallet': 'wood',
    'Gazebo/Grey': 'concrete', 'Gazebo/Gray': 'concrete', 'Gazebo/DarkGrey': 'concrete',
    'Gazebo/LightGrey': 'concrete', 'Gazebo/Concrete': 'concrete',
    'Gazebo/Bricks': 'building', 'Gazebo/CeilingTiled': 'building',
    'Gazebo/PaintedWall': 'building',
}


def check_mapping(mapping: object, where: str) -> dict[str, str]:
    """Return a checked {glob: material name} mapping (SdfError naming where otherwise)."""
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise SdfError(f'{where}: expected a mapping of name patterns to materials')
    for pattern, material in mapping.items():
        if not isinstance(pattern, str) or material not in MATERIAL_NAMES:
            raise SdfError(f"{where}.{pattern}: unknown material '{material}', allowed "
                           + ', '.join(MATERIAL_NAMES))
    return dict(mapping)


def choose(scoped: str, element: Element | None, mapping: Mapping[str, str], default: str
           ) -> tuple[str, str]:
    """
    Return (material name, why) of a surface.

    scoped: 'model::link::visual' (nested models add names); element: the <visual> or
    <collision> element (its <material><script><name>), or None.
    """
    names = scoped.split('::')
    for pattern, material in mapping.items():
        if fnmatchcase(scoped, pattern) or any(fnmatchcase(n, pattern) for n in names):
            return material, f"pattern '{pattern}'"
    pane = _pane(names, element)
    if pane:
        return pane
    script = None if element is None else element.findtext('material/script/name')
    if script and script.strip() in GAZEBO_SCRIPTS:
        return GAZEBO_SCRIPTS[script.strip()], f"Gazebo material '{script.strip()}'"
    named, why = material_from_names(scoped, element)
    if named is not None:
        return named, why
    return default, 'default' + (f" (Gazebo material '{script.strip()}' unmapped)"
                                 if script else '')


def _pane(names: list[str], element: Element | None) -> tuple[str, str] | None:
    """
    Return (glass or mirror, why) of a see-through or mirror surface, else None.

    A <transparency> above 0 (SDF: 0 opaque, 1 fully transparent) is glass; a name or Gazebo
    material script that says mirror or glass (any case) is that material.
    """
    try:
        transparency = float((element.findtext('transparency') or '0').strip()) \
            if element is not None else 0.0
    except ValueError:
        transparency = 0.0
    if transparency > 0.0:
        return 'glass', f'<transparency> {transparency:g}'
    script = '' if element is None else (element.findtext('material/script/name') or '')
    for word in ('mirror', 'glass'):
        if any(word in n.lower() for n in names) or word in script.lower():
            return word, f"'{word}' in its name"
    return None
