"""
Materials of textured models from their names (docs/worlds.md, "Materials of textured models").

Public Gazebo worlds (AWS RoboMaker houses, bookstore, hospital, racetrack; gazebo_models) draw
their surfaces with textures, not material scripts, so what a surface is made of is in its
names: the visual's, its textures' and mesh's file names (``<pbr><metal><albedo_map>``,
``<material><script><uri>`` and ``<name>``, ``<mesh><uri>``), the link's and the models'. Each
name is cut into lower-case words (at non-letters and camelCase: ``BookShelf_01`` -> book,
shelf); within a name the last word that a rule knows decides (English compounds end with their
head noun: a bookshelf is a shelf, not a book); the names are tried from the most specific
(visual) to the least (the top model). A word matches a keyword itself or with a plural ``s`` /
``es``. The sidecar's and the entry's patterns, and a Gazebo material script, come first
(materials.py); a surface no rule names keeps the default.
"""

import re
from xml.etree.ElementTree import Element

# (material, keywords), each word a material's surface is commonly named by in public models.
NAME_RULES = (
    ('mirror', ('mirror',)),
    ('glass', ('glass', 'window', 'windshield', 'windscreen', 'glazing', 'pane')),
    ('carpet', ('carpet', 'rug', 'doormat')),
    ('tile', ('tile', 'tiled', 'ceramic', 'porcelain', 'marble', 'toilet', 'sink', 'bathtub')),
    ('paper', ('paper', 'book', 'cardboard', 'carton', 'poster', 'magazine', 'newspaper')),
    ('fabric', ('fabric', 'cloth', 'curtain', 'sofa', 'couch', 'cushion', 'pillow', 'bed',
                'mattress', 'blanket', 'textile', 'upholstery', 'towel')),
    ('plastic', ('plastic', 'pvc', 'acrylic', 'bottle', 'bucket')),
    ('wood', ('wood', 'wooden', 'timber', 'plank', 'plywood', 'pallet', 'shelf', 'shelves',
              'bookshelf', 'bookcase', 'cabinet', 'cupboard', 'wardrobe', 'drawer', 'desk',
              'table', 'door', 'parquet', 'crate')),
    ('metal_bin', ('bin', 'trashcan', 'dumpster', 'dustbin')),
    ('vehicle', ('car', 'truck', 'van', 'bus', 'vehicle', 'suv', 'forklift')),
    ('metal', ('metal', 'metallic', 'steel', 'iron', 'aluminium', 'aluminum', 'rail',
               'railing', 'pipe', 'beam', 'girder', 'rack')),
    ('building', ('brick', 'wall', 'building', 'house', 'facade', 'plaster', 'roof')),
    ('concrete', ('concrete', 'cement', 'pavement', 'sidewalk', 'curb', 'kerb', 'stone',
                  'pillar', 'column', 'stairs', 'step')),
    ('asphalt', ('asphalt', 'road', 'street', 'tarmac', 'racetrack', 'track')),
    ('grass', ('grass', 'lawn', 'turf')),
    ('shrub', ('plant', 'bush', 'shrub', 'hedge', 'flower')),
    ('tree_foliage', ('tree', 'leaf', 'leaves', 'foliage', 'canopy')),
    ('bark', ('trunk', 'bark', 'log')),
    ('gravel', ('gravel', 'pebble')),
    ('mud', ('mud',)),
    ('soil', ('soil', 'dirt', 'sand')),
    ('water', ('water', 'pond', 'lake', 'pool')),
)
_KEYWORDS = {word: material for material, words in NAME_RULES for word in words}
_CAMEL = re.compile(r'[A-Z]+(?![a-z])|[A-Z]?[a-z]+')


def words(name: str) -> list[str]:
    """Return the lower-case words of a name: 'BookShelf_01.DAE' -> ['book', 'shelf', 'dae']."""
    return [w.lower() for w in _CAMEL.findall(name)]


def _keyword(word: str) -> str | None:
    """Return the material of a word (itself or without a plural s / es), or None."""
    for stem in (word, word[:-1] if word.endswith('s') else None,
                 word[:-2] if word.endswith('es') else None):
        if stem and stem in _KEYWORDS:
            return _KEYWORDS[stem]
    return None


def _texture_names(element: Element | None) -> list[str]:
    """Return the file and script names of a visual's textures, mesh and material script."""
    if element is None or not hasattr(element, 'iter'):
        return []
    out: list[str] = []
    for path in ('material/pbr/metal/albedo_map', 'material/pbr/specular/albedo_map',
                 'material/script/uri', 'material/script/name', 'geometry/mesh/uri'):
        text = (element.findtext(path) or '').strip()
        if text:
            out.append(text.replace('\\', '/').rstrip('/').split('/')[-1])
    return out


def material_from_names(scoped: str, element: Element | None) -> tuple[str | None, str]:
    """Return (material, why) named by a surface's names, or (None, '') when no rule does."""
    parts = scoped.split('::')
    names = parts[-1:] + _texture_names(element) + parts[-2::-1]
    for name in names:
        for word in reversed(words(name)):
            material = _keyword(word)
            if material is not None:
                return material, f"name '{name}' ({word} -> {material})"
    return None, ''
