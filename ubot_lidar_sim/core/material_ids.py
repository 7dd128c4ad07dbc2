"""
The material bytes: a hit's material is its index in MATERIAL_NAMES (uint8).

In the base layer so that physics and output name materials without importing the world;
world/materials.py holds their properties.
"""

MATERIAL_NAMES = ('other', 'soil', 'grass', 'gravel', 'asphalt', 'concrete', 'water',
                  'corn_leaf', 'soybean_leaf', 'tree_foliage', 'bark', 'shrub', 'building',
                  'metal_bin', 'vehicle', 'mud', 'potato_leaf', 'snow', 'glass', 'mirror',
                  'wood', 'metal', 'fabric', 'plastic', 'paper', 'carpet', 'tile')
FOLIAGE_MATERIALS = ('corn_leaf', 'soybean_leaf', 'tree_foliage', 'shrub', 'potato_leaf')
OTHER = 0
WATER = MATERIAL_NAMES.index('water')
GLASS = MATERIAL_NAMES.index('glass')
MIRROR = MATERIAL_NAMES.index('mirror')
