"""
KITTI object labels per frame: ``ROOT/kitti_object/NN/label_2/NNNNNN.txt`` + ``calib/NNNNNN.txt``.

The format of the KITTI object devkit (readme.txt): one line per object, 15 values::

    type truncated occluded alpha left top right bottom height width length x y z rotation_y

in camera 0's rectified frame (x right, y down, z forward; ``x y z`` the centre of the box's
bottom face). There is no camera: camera 0 is a virtual one at the LiDAR, looking along its +x
(``Tr_velo_to_cam`` the axis change x_cam = -y, y_cam = -z, z_cam = x; ``R0_rect`` the
identity), so a reader that applies the calib gets the LiDAR frame back. The box conversion is
OpenPCDet's (open-mmlab/OpenPCDet ``pcdet/utils/box_utils.py``, boxes3d_kitti_camera_to_lidar:
heading = -(rotation_y + pi / 2), the centre h / 2 above the location), so its KITTI loader
reads the boxes back; ``alpha = rotation_y - atan2(x_cam, z_cam)``. The 2D box is the
projection of the 8 corners by P2 (KITTI's image size 1242 x 375 and focal length, a virtual
camera), clipped to the image, and ``0 0 0 0`` for a box with a corner behind it. Boxes are
level in KITTI (rotation_y only): a box's roll and pitch are not written.

``type``: KITTI's classes from the object's SemanticKITTI id (output/label_maps.py): car Car,
truck Truck, person Pedestrian, bicyclist Cyclist, on-rails Tram, anything else Misc.
"""

from pathlib import Path

import numpy as np

from ubot_lidar_sim.core.poses import rotation_rpy
from ubot_lidar_sim.output.label_maps import to_semantickitti

TR_VELO_TO_CAM = np.array([[0.0, -1.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])
#: KITTI's image (1242 x 375) with its focal length and principal point (a virtual camera).
IMAGE_SIZE = (1242, 375)
P2 = np.array([[721.5377, 0.0, 609.5593, 0.0], [0.0, 721.5377, 172.854, 0.0],
               [0.0, 0.0, 1.0, 0.0]])
KITTI_TYPES = {10: 'Car', 252: 'Car', 18: 'Truck', 258: 'Truck', 30: 'Pedestrian',
               254: 'Pedestrian', 31: 'Cyclist', 253: 'Cyclist', 16: 'Tram', 256: 'Tram'}


def _wrap(a):
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def to_cam(xyz):
    """Return (N, 3) camera-0 coordinates of LiDAR points (N, 3)."""
    return np.asarray(xyz, np.float64) @ TR_VELO_TO_CAM[:, :3].T


def corners(box):
    """Return the 8 corners, (8, 3) in the sensor frame, of one BOX_DTYPE box."""
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
    return (signs * box['size'] / 2.0) @ rotation_rpy(*box['rpy']).T + box['center']


def _bbox(box):
    cam = to_cam(corners(box))
    if np.any(cam[:, 2] <= 0.1):
        return (0.0, 0.0, 0.0, 0.0)
    uvw = np.c_[cam, np.ones(8)] @ P2.T
    uv = uvw[:, :2] / uvw[:, 2:]
    lo = np.clip(uv.min(axis=0), 0, IMAGE_SIZE)
    hi = np.clip(uv.max(axis=0), 0, IMAGE_SIZE)
    return (lo[0], lo[1], hi[0], hi[1])


def label_lines(boxes):
    """Return the label_2 text of boxes (B,) BOX_DTYPE (sensor frame at the stamp)."""
    kinds = to_semantickitti(boxes['class_id'])
    lines = []
    for box, kind in zip(boxes, kinds):
        length, width, height = box['size']
        bottom = box['center'] - np.array([0.0, 0.0, height / 2.0])
        x, y, z = to_cam(bottom[None])[0]
        ry = _wrap(-box['rpy'][2] - np.pi / 2.0)
        alpha = _wrap(ry - np.arctan2(x, z))
        values = [box['truncation'], int(box['occlusion']), alpha, *_bbox(box), height, width,
                  length, x, y, z, ry]
        lines.append(KITTI_TYPES.get(int(kind), 'Misc') + ' '
                     + ' '.join(f'{v:.2f}' if i != 1 else str(v)
                                for i, v in enumerate(values)) + '\n')
    return ''.join(lines)


def calib_text():
    """Return the calib/NNNNNN.txt of the virtual camera (KITTI object calib keys)."""
    rows = {'P0': P2, 'P1': P2, 'P2': P2, 'P3': P2, 'R0_rect': np.eye(3),
            'Tr_velo_to_cam': TR_VELO_TO_CAM, 'Tr_imu_to_velo': np.hstack([np.eye(3),
                                                                          np.zeros((3, 1))])}
    return ''.join(f'{k}: ' + ' '.join(f'{v:.12e}' for v in m.reshape(-1)) + '\n'
                   for k, m in rows.items())


def sequence_dir(root, number):
    """Return ROOT/kitti_object/NN."""
    return Path(root) / 'kitti_object' / f'{number:02d}'


def write_frame(folder, k, boxes):
    """Write label_2/kkkkkk.txt and calib/kkkkkk.txt under folder; returns their names."""
    names = [f'label_2/{k:06d}.txt', f'calib/{k:06d}.txt']
    for sub in ('label_2', 'calib'):
        (Path(folder) / sub).mkdir(exist_ok=True)
    (Path(folder) / names[0]).write_text(label_lines(boxes), encoding='ascii')
    (Path(folder) / names[1]).write_text(calib_text(), encoding='ascii')
    return names
