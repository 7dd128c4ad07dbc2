"""
KITTI object trees: ``ROOT/kitti_object/NN/training/{velodyne,label_2,calib,image_2}/``, ImageSets.

The tree of the KITTI object devkit as OpenPCDet's KITTI reader opens it
(open-mmlab/OpenPCDet ``pcdet/datasets/kitti/kitti_dataset.py``: ``ImageSets/<split>.txt``,
``training/velodyne/NNNNNN.bin``, ``label_2``, ``calib``, and ``image_2/NNNNNN.png`` for the
image shape of its points-in-camera-view filter). There is no camera: ``image_2`` holds a black
1242 x 375 PNG per frame (KITTI's image size) so that the tree loads; it carries no picture.
``velodyne``: the SemanticKITTI scan format (float32 x y z remission, output/semantickitti.py).

Labels: the format of the KITTI object devkit (readme.txt), one line per object, 15 values::

    type truncated occluded alpha left top right bottom height width length x y z rotation_y

in camera 0's rectified frame (x right, y down, z forward; ``x y z`` the centre of the box's
bottom face). Camera 0 is a virtual one at the LiDAR, looking along its +x
(``Tr_velo_to_cam`` the axis change x_cam = -y, y_cam = -z, z_cam = x; ``R0_rect`` the
identity), so a reader that applies the calib gets the LiDAR frame back. The box conversion is
OpenPCDet's (``pcdet/utils/box_utils.py``, boxes3d_kitti_camera_to_lidar: heading =
-(rotation_y + pi / 2), the centre h / 2 above the location), so its KITTI loader reads the
boxes back; ``alpha = rotation_y - atan2(x_cam, z_cam)``. The 2D box is the projection of the
8 corners by P2 (KITTI's image size 1242 x 375 and focal length), clipped to the image; ``0 0 0
0`` (no 2D box) when a corner is behind the camera or the projection misses the image. Boxes
are level in KITTI (rotation_y only): roll and pitch are not written. A box with fewer than
boxes.MIN_BOX_POINTS points is ``DontCare``, written after the others (OpenPCDet's get_infos
takes the lines before the DontCare ones as the objects, kitti_dataset.py lines 186-193).

``type``: KITTI's classes from the object's SemanticKITTI id (output/label_maps.py): car Car,
truck Truck, person Pedestrian, bicyclist Cyclist, on-rails Tram, anything else Misc.

KITTI tracking (the tracking devkit's label format; JonathonLuiten/TrackEval
``trackeval/datasets/kitti_2d_box.py`` lines 68-82 and 198 read it):
``tracking/label_02/NNNN.txt``, a line per box ``frame track_id`` and the 15 values with
``truncated`` an integer level (0 none, 1 partly, 2 fully outside the field of view; TrackEval
reads it with ``astype(int)``), DontCare with track id -1;
``tracking/evaluate_tracking.seqmap.training`` the row ``NNNN empty 000000 <frames>``.
"""

from collections.abc import Iterable
from pathlib import Path
import zlib

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.poses import rotation_rpy
from ubot_lidar_sim.output.boxes import MIN_BOX_POINTS
from ubot_lidar_sim.output.label_maps import to_semantickitti

TR_VELO_TO_CAM = np.array([[0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
#: KITTI's image (1242 x 375) with its focal length and principal point (a virtual camera).
IMAGE_SIZE = (1242, 375)
P2 = np.array([[721.5377, 0.0, 609.5593, 0.0], [0.0, 721.5377, 172.854, 0.0],
               [0.0, 0.0, 1.0, 0.0]])
KITTI_TYPES = {10: 'Car', 252: 'Car', 18: 'Truck', 258: 'Truck', 30: 'Pedestrian',
               254: 'Pedestrian', 31: 'Cyclist', 253: 'Cyclist', 16: 'Tram', 256: 'Tram'}
SUBDIRS = ('velodyne', 'label_2', 'calib', 'image_2')
SPLITS = ('train', 'val', 'test')


def _wrap(a):
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def to_cam(xyz: ArrayLike) -> NDArray[np.float64]:
    """Return (N, 3) camera-0 coordinates of LiDAR points (N, 3)."""
    return np.asarray(xyz, np.float64) @ TR_VELO_TO_CAM[:, :3].T


def corners(box: np.void) -> NDArray[np.float64]:
    """Return the 8 corners, (8, 3) in the sensor frame, of one BOX_DTYPE box."""
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return (signs * box['size'] / 2.0) @ rotation_rpy(*box['rpy']).T + box['center']


def bbox_2d(box: np.void) -> tuple[float, float, float, float]:
    """Return (left, top, right, bottom) px of a box in the image; 0 0 0 0 when not in it."""
    cam = to_cam(corners(box))
    if np.any(cam[:, 2] <= 0.1):
        return (0.0, 0.0, 0.0, 0.0)
    uvw = np.c_[cam, np.ones(8)] @ P2.T
    uv = uvw[:, :2] / uvw[:, 2:]
    lo = np.clip(uv.min(axis=0), 0, IMAGE_SIZE)
    hi = np.clip(uv.max(axis=0), 0, IMAGE_SIZE)
    if np.any(hi <= lo):                    # the projection misses the image
        return (0.0, 0.0, 0.0, 0.0)
    return (lo[0], lo[1], hi[0], hi[1])


def label_order(boxes: NDArray[np.void]) -> NDArray[np.intp]:
    """Return the indices of boxes in label order: the objects, then the DontCare boxes."""
    return np.argsort(boxes['num_points'] < MIN_BOX_POINTS, kind='stable')


def _values(box, kind, truncated):
    """Return (type, the 14 values after it) of one box in KITTI's camera-0 frame."""
    length, width, height = box['size']
    bottom = box['center'] - np.array([0.0, 0.0, height / 2.0])
    x, y, z = to_cam(bottom[None])[0]
    ry = _wrap(-box['rpy'][2] - np.pi / 2.0)
    alpha = _wrap(ry - np.arctan2(x, z))
    name = 'DontCare' if box['num_points'] < MIN_BOX_POINTS else \
        KITTI_TYPES.get(int(kind), 'Misc')
    return name, [truncated, int(box['occlusion']), alpha, *bbox_2d(box), height, width,
                  length, x, y, z, ry]


def _line(name, values, head=''):
    return head + name + ' ' + ' '.join(
        str(v) if isinstance(v, int) else f'{v:.2f}' for v in values) + '\n'


def label_lines(boxes: NDArray[np.void]) -> str:
    """Return the label_2 text of boxes (B,) BOX_DTYPE (in label_order)."""
    kinds = to_semantickitti(boxes['class_id'])
    return ''.join(_line(*_values(boxes[i], kinds[i], float(boxes[i]['truncation'])))
                   for i in label_order(boxes))


def truncation_level(share: float) -> int:
    """Return KITTI tracking's integer truncation: 0 none, 1 partly, 2 fully outside."""
    return 0 if share <= 0.0 else (2 if share >= 1.0 else 1)


def tracking_lines(boxes: NDArray[np.void], frame: int) -> str:
    """Return the label_02 lines of one frame's boxes: ``frame track_id type`` + 14 values."""
    kinds = to_semantickitti(boxes['class_id'])
    out = []
    for i in label_order(boxes):
        name, values = _values(boxes[i], kinds[i], truncation_level(boxes[i]['truncation']))
        track = -1 if name == 'DontCare' else int(boxes[i]['track_id'])
        out.append(_line(name, values, f'{frame} {track} '))
    return ''.join(out)


def seqmap_line(number: int, frames: int) -> str:
    """Return a TrackEval seqmap row: ``NNNN empty 000000 <frames>``."""
    return f'{number:04d} empty 000000 {frames:06d}\n'


def _png(width, height):
    """Return a black 8-bit grey PNG of width x height (PNG spec: IHDR, one IDAT, IEND)."""
    def chunk(kind, data):
        body = kind + data
        return len(data).to_bytes(4, 'big') + body + zlib.crc32(body).to_bytes(4, 'big')
    header = width.to_bytes(4, 'big') + height.to_bytes(4, 'big') + bytes([8, 0, 0, 0, 0])
    rows = zlib.compress(bytes(height * (width + 1)), 9)
    return b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', rows) \
        + chunk(b'IEND', b'')


BLACK_IMAGE = _png(*IMAGE_SIZE)


def calib_text() -> str:
    """Return the calib/NNNNNN.txt of the virtual camera (KITTI object calib keys)."""
    rows = {'P0': P2, 'P1': P2, 'P2': P2, 'P3': P2, 'R0_rect': np.eye(3),
            'Tr_velo_to_cam': TR_VELO_TO_CAM, 'Tr_imu_to_velo': np.hstack([np.eye(3),
                                                                          np.zeros((3, 1))])}
    return ''.join(f'{k}: ' + ' '.join(f'{v:.12e}' for v in m.reshape(-1)) + '\n'
                   for k, m in rows.items())


def sequence_dir(root: str | Path, number: int) -> Path:
    """Return ROOT/kitti_object/NN."""
    return Path(root) / 'kitti_object' / f'{number:02d}'


def write_frame(folder: str | Path, k: int, boxes: NDArray[np.void], scan: ArrayLike) -> list[str]:
    """Write training/{velodyne,label_2,calib,image_2}/kkkkkk.* under folder; return names."""
    names = [f'training/{sub}/{k:06d}.{ext}' for sub, ext in zip(
        SUBDIRS, ('bin', 'txt', 'txt', 'png'))]
    for sub in SUBDIRS:
        (Path(folder) / 'training' / sub).mkdir(parents=True, exist_ok=True)
    np.ascontiguousarray(scan, np.float32).tofile(Path(folder) / names[0])
    (Path(folder) / names[1]).write_text(label_lines(boxes), encoding='ascii')
    (Path(folder) / names[2]).write_text(calib_text(), encoding='ascii')
    (Path(folder) / names[3]).write_bytes(BLACK_IMAGE)
    return names


def write_splits(folder: str | Path, frames: Iterable[int], split: str = 'train'
                 ) -> list[str]:
    """Write ImageSets/{train,val,test}.txt: frames in split's ('valid': val; 'every': all)."""
    (Path(folder) / 'ImageSets').mkdir(exist_ok=True)
    names: list[str] = []
    for name in SPLITS:
        names.append(f'ImageSets/{name}.txt')
        chosen = split == 'every' or name == {'valid': 'val'}.get(split, split)
        (Path(folder) / names[-1]).write_text(
            ''.join(f'{k:06d}\n' for k in frames) if chosen else '', encoding='ascii')
    return names
