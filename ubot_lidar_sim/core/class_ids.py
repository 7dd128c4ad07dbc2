"""
The class-id scheme: a point's ``class_id`` is a SemanticKITTI class id or a simulator class.

SemanticKITTI's ids (PRBonn/semantic-kitti-api ``config/semantic-kitti.yaml`` lines 2-36) reach
259 (moving-other-vehicle) and the semantic part of a ``.label`` word is 16 bits
(``auxiliary/laserscan.py`` SemLaserScan.set_label: ``label & 0xFFFF``), so a class id is a
uint16 (CLASS_DTYPE) everywhere: world objects, hits, echoes, the full point layout.

- A world object's ``class_id`` is one of CLASS_NAMES (SemanticKITTI's or core/labels.py's);
  check_class_id refuses any other id with one line.
- Without one, its class is its material's (MATERIAL_CLASS, keyed by material name so that the
  table covers every material by name, whatever its index).
"""

import numpy as np

from ubot_lidar_sim.core import labels

CLASS_DTYPE = np.uint16
PERSON_CLASS = 30                   # what a Gazebo <actor> is (core/world/sdf/actors.py)

#: SemanticKITTI's labels and BGR colours (semantic-kitti-api config/semantic-kitti.yaml
#: ``labels`` lines 2-36, ``color_map`` lines 37-71).
SEMANTICKITTI = {
    0: ('unlabeled', [0, 0, 0]), 1: ('outlier', [0, 0, 255]), 10: ('car', [245, 150, 100]),
    11: ('bicycle', [245, 230, 100]), 13: ('bus', [250, 80, 100]),
    15: ('motorcycle', [150, 60, 30]), 16: ('on-rails', [255, 0, 0]),
    18: ('truck', [180, 30, 80]), 20: ('other-vehicle', [255, 0, 0]),
    30: ('person', [30, 30, 255]), 31: ('bicyclist', [200, 40, 255]),
    32: ('motorcyclist', [90, 30, 150]), 40: ('road', [255, 0, 255]),
    44: ('parking', [255, 150, 255]), 48: ('sidewalk', [75, 0, 75]),
    49: ('other-ground', [75, 0, 175]), 50: ('building', [0, 200, 255]),
    51: ('fence', [50, 120, 255]), 52: ('other-structure', [0, 150, 255]),
    60: ('lane-marking', [170, 255, 150]), 70: ('vegetation', [0, 175, 0]),
    71: ('trunk', [0, 60, 135]), 72: ('terrain', [80, 240, 150]),
    80: ('pole', [150, 240, 255]), 81: ('traffic-sign', [0, 0, 255]),
    99: ('other-object', [255, 255, 50]), 252: ('moving-car', [245, 150, 100]),
    253: ('moving-bicyclist', [200, 40, 255]), 254: ('moving-person', [30, 30, 255]),
    255: ('moving-motorcyclist', [90, 30, 150]), 256: ('moving-on-rails', [255, 0, 0]),
    257: ('moving-bus', [250, 80, 100]), 258: ('moving-truck', [180, 30, 80]),
    259: ('moving-other-vehicle', [255, 0, 0])}

#: Every class a point may carry: {id: name}.
CLASS_NAMES = {**{i: v[0] for i, v in SEMANTICKITTI.items()},
               **{i: v[0] for i, v in labels.SIM_CLASSES.items()}}

#: Each material's class (SemanticKITTI README's class definitions: terrain is grass and soil,
#: vegetation trees, bushes and crops, other-ground what is neither road nor terrain; a floor
#: covering is other-ground, a loose thing other-object).
MATERIAL_CLASS = {
    'other': 99, 'soil': 72, 'grass': 72, 'gravel': 72, 'asphalt': 40, 'concrete': 48,
    'water': 49, 'corn_leaf': 70, 'soybean_leaf': 70, 'tree_foliage': 70, 'bark': 71,
    'shrub': 70, 'building': 50, 'metal_bin': 99, 'vehicle': 10, 'mud': 72,
    'potato_leaf': 70, 'snow': 49, 'glass': 50, 'mirror': 99, 'wood': 99, 'metal': 99,
    'fabric': 99, 'plastic': 99, 'paper': 99, 'carpet': 49, 'tile': 49,
    'tinted_glass': 50, 'polished_metal': 99}


def default_class(material: str) -> int:
    """Return the class id of a material name (MATERIAL_CLASS)."""
    return MATERIAL_CLASS[material]


def is_class_id(value: object) -> bool:
    """Return True when value is an int that is a class id of CLASS_NAMES."""
    return (not isinstance(value, bool) and isinstance(value, (int, np.integer))
            and int(value) in CLASS_NAMES)


#: What a class id may be, for the one-line refusal of any other.
CLASS_ID_RULE = ('expected a SemanticKITTI class id (' + ', '.join(map(str, SEMANTICKITTI))
                 + ') or a simulator class (' + ', '.join(
                     f'{k} {v[0]}' for k, v in labels.SIM_CLASSES.items()) + ')')
