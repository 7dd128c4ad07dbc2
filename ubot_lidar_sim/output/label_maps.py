"""
Label maps of the SemanticKITTI export: our class ids (native) or SemanticKITTI's alone.

A class id is a SemanticKITTI id or a simulator class (core/class_ids.py, core/labels.py).
``native`` writes it as it is; ``semantickitti`` writes each simulator class as the
SemanticKITTI class core/labels.py SIM_CLASSES gives it (precipitation, smoke and ghosts 1
``outlier``, the robot itself 0 ``unlabeled``), so every id is one of semantic-kitti.yaml's.

docs/cli-and-datasets.md ("SemanticKITTI label maps") has the table.
"""

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core import labels
from ubot_lidar_sim.core.class_ids import CLASS_NAMES, SEMANTICKITTI

LABEL_MAPS = ('native', 'semantickitti')

#: semantic-kitti.yaml's learning_map (lines 109-143): 19 classes + 0 (unlabeled, outlier,
#: other-structure, other-object), the moving classes as their static ones.
SEMANTICKITTI_LEARNING = {
    0: 0, 1: 0, 10: 1, 11: 2, 13: 5, 15: 3, 16: 5, 18: 4, 20: 5, 30: 6, 31: 7, 32: 8, 40: 9,
    44: 10, 48: 11, 49: 12, 50: 13, 51: 14, 52: 0, 60: 9, 70: 15, 71: 16, 72: 17, 80: 18,
    81: 19, 99: 0, 252: 1, 253: 7, 254: 6, 255: 8, 256: 5, 257: 5, 258: 4, 259: 5}
SEMANTICKITTI_LEARNING_INV = {0: 0, 1: 10, 2: 11, 3: 15, 4: 18, 5: 20, 6: 30, 7: 31, 8: 32,
                              9: 40, 10: 44, 11: 48, 12: 49, 13: 50, 14: 51, 15: 70, 16: 71,
                              17: 72, 18: 80, 19: 81}


def check_label_map(value: str, name: str = 'label_map') -> str:
    """Return value when it is a label map name (LABEL_MAPS), else raise ValueError."""
    if value not in LABEL_MAPS:
        raise ValueError(f'{name}: expected one of {", ".join(LABEL_MAPS)}, got {value!r}')
    return value


def native_names() -> dict[int, str]:
    """Return {class id: name} of every class id (SemanticKITTI's and the simulator's)."""
    return dict(CLASS_NAMES)


def class_lut() -> NDArray[np.uint32]:
    """Return (max class id + 1,) uint32: each class id's SemanticKITTI id (0 where none)."""
    lut = np.zeros(max(CLASS_NAMES) + 1, dtype=np.uint32)
    lut[list(SEMANTICKITTI)] = list(SEMANTICKITTI)
    for cid, (_, kitti) in labels.SIM_CLASSES.items():
        lut[cid] = kitti
    return lut


def to_semantickitti(class_id: ArrayLike) -> NDArray[np.uint32]:
    """Return (P,) uint32 SemanticKITTI ids of class ids (P,)."""
    return class_lut()[np.asarray(class_id, dtype=np.intp)]


def semantic_ids(points: NDArray[np.void], label_map: str = 'native') -> NDArray[np.uint32]:
    """Return (P,) uint32 semantic ids of full-layout points under label_map."""
    if label_map == 'semantickitti':
        return to_semantickitti(points['class_id'])
    return points['class_id'].astype(np.uint32)
