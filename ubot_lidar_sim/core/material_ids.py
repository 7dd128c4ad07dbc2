"""
The material bytes: a hit's material is its index in MATERIAL_NAMES (uint8).

In the base layer so that physics and output name materials without importing the world;
world/materials.py holds their properties. Append only: a material's index is its byte in
written clouds and datasets, so a new material goes at the end and none is ever renumbered.
"""

MATERIAL_NAMES = ('other', 'soil', 'grass', 'gravel', 'asphalt', 'concrete', 'water',
                  'corn_leaf', 'soybean_leaf', 'tree_foliage', 'bark', 'shrub', 'building',
                  'metal_bin', 'vehicle', 'mud', 'potato_leaf', 'snow', 'glass', 'mirror',
                  'wood', 'metal', 'fabric', 'plastic', 'paper', 'carpet', 'tile',
                  'tinted_glass', 'polished_metal')
FOLIAGE_MATERIALS = ('corn_leaf', 'soybean_leaf', 'tree_foliage', 'shrub', 'potato_leaf')
OTHER = 0
WATER = MATERIAL_NAMES.index('water')
GLASS = MATERIAL_NAMES.index('glass')
MIRROR = MATERIAL_NAMES.index('mirror')
