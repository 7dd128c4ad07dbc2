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
from ubot_lidar_sim.core.world.sdf.name_rules import material_from_names, words
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
# The specular materials a surface's names or material script choose, in this order (any case;
# a word inside a name counts): mirror first, tinted before glass (a tinted pane's names say
# glass too), polished metal by its finishes. Plain metal words (metal, steel, aluminium) stay
# the diffuse `metal` of name_rules.py: railings, racks and beams are painted or brushed.
SPECULAR_WORDS = (('mirror', 'mirror'), ('tinted', 'tinted_glass'), ('glass', 'glass'),
                  ('chrome', 'polished_metal'), ('stainless', 'polished_metal'))
# With one of these, the word 'polished' makes a surface polished_metal.
METAL_WORDS = ('metal', 'steel', 'aluminium', 'aluminum', 'brass', 'copper')


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
    Return (specular material, why) of a see-through or mirror-like surface, else None.

    A <transparency> above 0 (SDF: 0 opaque, 1 fully transparent) is glass (tinted_glass when a
    name says tinted); a name or Gazebo material script with a word of SPECULAR_WORDS (any case)
    is its material, 'polished' with a metal word polished_metal.
    """
    try:
        transparency = float((element.findtext('transparency') or '0').strip()) \
            if element is not None else 0.0
    except ValueError:
        transparency = 0.0
    script = '' if element is None else (element.findtext('material/script/name') or '')
    said = [n.lower() for n in names] + [script.lower()]
    if transparency > 0.0:
        tint = any('tinted' in n for n in said)
        return 'tinted_glass' if tint else 'glass', f'<transparency> {transparency:g}'
    for word, material in SPECULAR_WORDS:
        if any(word in n for n in said):
            return material, f"'{word}' in its name"
    for name in names + [script]:
        w = words(name)
        if 'polished' in w and any(m in w for m in METAL_WORDS):
            return 'polished_metal', f"'polished' metal in its name '{name}'"
    return None
