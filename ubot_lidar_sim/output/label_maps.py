"""
Label maps of the SemanticKITTI export: our own class ids (native) or SemanticKITTI's.

``native`` writes the world's ``class_id`` (0-255: a material index by default, 20
precipitation, 21 smoke, any other id a world gives). ``semantickitti`` writes SemanticKITTI's
own ids (PRBonn/semantic-kitti-api ``config/semantic-kitti.yaml``: car 10, person 30, road 40,
building 50, vegetation 70, terrain 72, other-object 99, ...) by this rule:

- a class id that is a material index (0-17, the default class_id of an object) maps by
  MATERIAL_TO_SEMANTICKITTI;
- 20 (precipitation, fog clutter) and 21 (smoke) map to 1, ``outlier`` (returns of no surface);
- any other class id that is a SemanticKITTI id (30 person, 51 fence, 80 pole, 252 moving-car,
  ...) is kept: a world that gives SemanticKITTI's ids gets them;
- any other class id maps by the point's material, as a default class_id would.

docs/cli-and-datasets.md ("SemanticKITTI label maps") has the table.
"""

import numpy as np

from ubot_lidar_sim.core import labels
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES

LABEL_MAPS = ('native', 'semantickitti')
CLASS_IDS = 256                     # class_id is one byte (world files: 0-255)

#: SemanticKITTI's labels and BGR colours (semantic-kitti-api config/semantic-kitti.yaml).
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
#: semantic-kitti.yaml's learning_map: 19 classes + 0 (unlabeled, outlier, other-structure,
#: other-object), the moving classes as their static ones.
SEMANTICKITTI_LEARNING = {
    0: 0, 1: 0, 10: 1, 11: 2, 13: 5, 15: 3, 16: 5, 18: 4, 20: 5, 30: 6, 31: 7, 32: 8, 40: 9,
    44: 10, 48: 11, 49: 12, 50: 13, 51: 14, 52: 0, 60: 9, 70: 15, 71: 16, 72: 17, 80: 18,
    81: 19, 99: 0, 252: 1, 253: 7, 254: 6, 255: 8, 256: 5, 257: 5, 258: 4, 259: 5}
SEMANTICKITTI_LEARNING_INV = {0: 0, 1: 10, 2: 11, 3: 15, 4: 18, 5: 20, 6: 30, 7: 31, 8: 32,
                              9: 40, 10: 44, 11: 48, 12: 49, 13: 50, 14: 51, 15: 70, 16: 71,
                              17: 72, 18: 80, 19: 81}
OUTLIER = 1
#: Our materials as SemanticKITTI classes (its README's class definitions: terrain is grass
#: and soil, vegetation trees, bushes and crops, other-ground what is neither road nor terrain).
MATERIAL_TO_SEMANTICKITTI = {
    'other': 99, 'soil': 72, 'grass': 72, 'gravel': 72, 'asphalt': 40, 'concrete': 48,
    'water': 49, 'corn_leaf': 70, 'soybean_leaf': 70, 'tree_foliage': 70, 'bark': 71,
    'shrub': 70, 'building': 50, 'metal_bin': 99, 'vehicle': 10, 'mud': 72,
    'potato_leaf': 70, 'snow': 49, 'glass': 50, 'mirror': 50, 'wood': 99, 'metal': 99,
    'fabric': 99, 'plastic': 99, 'paper': 99, 'carpet': 49, 'tile': 49}


def check_label_map(value, name='label_map'):
    """Return value when it is a label map name (LABEL_MAPS), else raise ValueError."""
    if value not in LABEL_MAPS:
        raise ValueError(f'{name}: expected one of {", ".join(LABEL_MAPS)}, got {value!r}')
    return value


def native_names():
    """Return {class id: name} of every class id 0-255 (unnamed ones: class_<id>)."""
    names = {i: f'class_{i}' for i in range(CLASS_IDS)}
    names.update(enumerate(MATERIAL_NAMES))
    names[labels.PRECIPITATION_CLASS] = 'precipitation'
    names[labels.SMOKE_CLASS] = 'smoke'
    return names


def _material_lut():
    return np.array([MATERIAL_TO_SEMANTICKITTI[m] for m in MATERIAL_NAMES], dtype=np.uint32)


def class_lut():
    """Return (256,) int64: each class id's SemanticKITTI id, -1 where the material decides."""
    lut = np.full(CLASS_IDS, -1, dtype=np.int64)
    for i in range(CLASS_IDS):
        if i in SEMANTICKITTI:
            lut[i] = i
    lut[:len(MATERIAL_NAMES)] = _material_lut()
    lut[[labels.PRECIPITATION_CLASS, labels.SMOKE_CLASS]] = OUTLIER
    return lut


def to_semantickitti(class_id, material):
    """Return (P,) uint32 SemanticKITTI ids of points' class_id and material bytes (P,)."""
    by_class = class_lut()[np.asarray(class_id, dtype=np.intp)]
    mats = _material_lut()[np.minimum(np.asarray(material, dtype=np.intp),
                                      len(MATERIAL_NAMES) - 1)]
    return np.where(by_class >= 0, by_class, mats).astype(np.uint32)


def semantic_ids(points, label_map='native'):
    """Return (P,) uint32 semantic ids of full-layout points under label_map."""
    if label_map == 'semantickitti':
        return to_semantickitti(points['class_id'], points['material'])
    return points['class_id'].astype(np.uint32)
