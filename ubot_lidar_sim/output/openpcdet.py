"""
OpenPCDet's custom dataset: ``ROOT/openpcdet/NN/{points,labels,ImageSets}``, one frame per sweep.

The layout and label format of open-mmlab/OpenPCDet ``docs/CUSTOM_DATASET_TUTORIAL.md``
(``pcdet/datasets/custom/custom_dataset.py`` reads it): ``points/NNNNNN.npy`` float32 (N, 4) x
y z intensity in the LiDAR frame, ``labels/NNNNNN.txt`` one box a line ``x y z dx dy dz
heading_angle num_points category_name`` in OpenPCDet's unified box definition (the centre,
the sizes along the box's x y z, the yaw about +z from +x; the frame of the written points,
output/boxes.py). ``num_points`` (the box's points by OpenPCDet's own in-box rule) is an eighth
number its reader drops (custom_dataset.py line 155 keeps ``gt_boxes_lidar[:, :7]``), so a
user can filter by it; a box with fewer than boxes.MIN_BOX_POINTS points is named
``DontCare``, which the reader drops (line 101). A frame without boxes holds one DontCare line
of a zero box at the origin: the reader cannot take an empty file (line 155 slices a 1-D
empty array). ``ImageSets/train.txt``, ``val.txt``, ``test.txt``: the frame ids in the
spec's split (output/kitti_object.py write_splits). Chosen over nuScenes-style JSON because
a detector trains on it as written (``DATA_PATH`` at the sequence's folder), boxes in the
LiDAR frame with no camera or calib to invent, and its category names are KITTI's types
(output/kitti_object.py).
intensity: the remission of the SemanticKITTI export (the intensity byte / 255).
"""

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.output.boxes import MIN_BOX_POINTS
from ubot_lidar_sim.output.kitti_object import KITTI_TYPES
from ubot_lidar_sim.output.label_maps import to_semantickitti
from ubot_lidar_sim.output.semantickitti import scan_arrays


def sequence_dir(root: str | Path, number: int) -> Path:
    """Return ROOT/openpcdet/NN."""
    return Path(root) / 'openpcdet' / f'{number:02d}'


#: The line of a frame without boxes (see module).
EMPTY_FRAME = '0.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0.0000 0 DontCare\n'


def label_lines(boxes: NDArray[np.void]) -> str:
    """Return the labels text of boxes (B,) BOX_DTYPE: x y z dx dy dz heading n category."""
    if not len(boxes):
        return EMPTY_FRAME
    kinds = to_semantickitti(boxes['class_id'])
    return ''.join(' '.join(f'{v:.4f}' for v in (*b['center'], *b['size'], b['rpy'][2]))
                   + f' {int(b["num_points"])} '
                   + ('DontCare' if b['num_points'] < MIN_BOX_POINTS
                      else KITTI_TYPES.get(int(k), 'Misc')) + '\n'
                   for b, k in zip(boxes, kinds))


def write_frame(folder: str | Path, k: int, points: NDArray[np.void],
                boxes: NDArray[np.void]) -> list[str]:
    """Write points/kkkkkk.npy (full-layout points) and labels/kkkkkk.txt; return the names."""
    names = [f'points/{k:06d}.npy', f'labels/{k:06d}.txt']
    for sub in ('points', 'labels'):
        (Path(folder) / sub).mkdir(exist_ok=True)
    np.save(Path(folder) / names[0], scan_arrays(points)[0], allow_pickle=False)
    (Path(folder) / names[1]).write_text(label_lines(boxes), encoding='ascii')
    return names
