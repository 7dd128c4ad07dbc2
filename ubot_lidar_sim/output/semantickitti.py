"""
SemanticKITTI sequences, written scan by scan into a staged tree that is renamed in whole.

``ROOT/sequences/NN/`` as the KITTI odometry devkit and the SemanticKITTI API lay it out.

Conventions (KITTI odometry devkit readme.txt; SemanticKITTI API, README and
``auxiliary/laserscan.py``):

- ``velodyne/NNNNNN.bin``: float32 x, y, z, remission per point, little-endian, in the LiDAR
  frame (the API reads ``np.fromfile(f, np.float32).reshape(-1, 4)``). KITTI's remission is in
  [0, 1]; here it is the full layout's intensity byte / 255 (docs/physics.md, "Reflectivity and
  intensity": 100 is a 100 % diffuse target, so 100 % diffuse gives 0.392).
- ``labels/NNNNNN.label``: uint32 per point, in the order of the .bin: the semantic id in the
  low 16 bits (the full layout's ``class_id``), the instance id in the high 16 bits (the full
  layout's ``instance_id`` where that field exists, else 0); the API reads ``label & 0xFFFF``
  and ``label >> 16``.
- ``poses.txt``: per scan, the first 3 rows of the 4 x 4 pose of the sensor at the scan's stamp
  in the first scan's sensor frame, row-major, 12 numbers a line (the first is the identity).
- ``calib.txt``: ``P0:`` .. ``P3:`` (3 x 4 camera projections) and ``Tr:`` (3 x 4,
  velodyne -> camera 0), 12 numbers each, as in KITTI. There is no camera: every P is [I | 0]
  (a placeholder) and Tr is the identity, so the poses are the LiDAR's, as KITTI's poses are
  those of camera 0 (tools that apply Tr, like KISS-ICP's kitti loader, change nothing).
- ``times.txt``: each scan's stamp in s from the first scan's, one per line.
- ``ROOT/poses/NN.txt``: a copy of poses.txt where the KITTI odometry devkit (and KISS-ICP's
  kitti dataloader) read the ground truth.
- ``ROOT/semantic-kitti.yaml``: the API's full data config (output/semantickitti_yaml.py);
  the label ids are the world's class ids or, with ``label_map: semantickitti``,
  SemanticKITTI's own (output/label_maps.py).

NN is 00..99 (``SEQUENCES``). ``ubot_lidar_sim.json`` in the sequence directory records what
wrote it (a key), so a later run tells its own sequence from another one.
"""

from collections.abc import Iterable
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.output import label_maps, safe_open, semantickitti_yaml
from ubot_lidar_sim.output.atomic import atomic_write, staged_tree

SEQUENCES = 100                   # NN has two digits
REMISSION_SCALE = 255.0           # intensity byte -> remission in [0, 1]
LABEL_MAP = semantickitti_yaml.LABEL_MAP
MARKER = 'ubot_lidar_sim.json'
_NO_CAMERA = np.hstack([np.eye(3), np.zeros((3, 1))])


def class_names() -> dict[int, str]:
    """Return {class id: name} of every class id (output/label_maps.py)."""
    return label_maps.native_names()


def label_map(kind: str = 'native', sequences: Iterable[int] = (0,)) -> dict[str, Any]:
    """Return the semantic-kitti.yaml mapping (output/semantickitti_yaml.py)."""
    return semantickitti_yaml.data_config(kind, sequences)


def scan_arrays(points: NDArray[np.void], kind: str = 'native'
                ) -> tuple[NDArray[np.float32], NDArray[np.uint32]]:
    """Return (scan (P, 4) float32 x y z remission, label (P,) uint32) of full-layout points."""
    scan = np.empty((len(points), 4), dtype=np.float32)
    for k, name in enumerate(('x', 'y', 'z')):
        scan[:, k] = points[name]
    scan[:, 3] = np.clip(points['intensity'] / REMISSION_SCALE, 0.0, 1.0)
    label = label_maps.semantic_ids(points, kind)
    if 'instance_id' in points.dtype.names:
        label |= points['instance_id'].astype(np.uint32) << 16
    return scan, label


def check_number(number: int, name: str = 'sequence') -> None:
    """Raise ConfigError unless number is a SemanticKITTI sequence number, 0..99."""
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < SEQUENCES:
        raise ConfigError(name, number, f'a SemanticKITTI sequence number 0-{SEQUENCES - 1} '
                          '(two digits)')


def sequence_dir(root: str | Path, number: int) -> Path:
    """Return ROOT/sequences/NN."""
    return Path(root) / 'sequences' / f'{number:02d}'


def check_free(root: str | Path, number: int, key: object, name: str = '--out') -> None:
    """Raise ConfigError when ROOT/sequences/NN holds a sequence other than the one of key."""
    folder = sequence_dir(root, number)
    if not folder.exists():
        return
    try:
        written = json.loads((folder / MARKER).read_text(encoding='utf-8')).get('key')
    except (OSError, ValueError, AttributeError):
        written = None
    if written != key:
        raise ConfigError(name, str(folder), 'a directory without this sequence number or '
                          'holding this same sequence (it holds another one: move it or '
                          'write elsewhere)')


def _matrix_lines(rows):
    return ''.join(' '.join(f'{v:.9e}' for v in r) + '\n' for r in rows)


class SequenceWriter:
    """
    One sequence written scan by scan: add(points, sensor_pose, stamp_s), then close().

    Use inside atomic.all_or_none(): the tree appears under ROOT/sequences/NN, with
    ROOT/poses/NN.txt, only when the whole batch succeeds. ROOT/semantic-kitti.yaml is written
    once per run by write_label_map (the dataset runner, the scan CLI).
    """

    def __init__(self, root: str | Path, number: int, key: object, kind: str = 'native') -> None:
        check_number(number)
        self.root, self.number, self.key, self.kind = Path(root), number, key, kind
        self.final = sequence_dir(root, number)
        self.tmp = staged_tree(self.final)
        for sub in ('velodyne', 'labels'):
            (self.tmp / sub).mkdir()
        self.poses: list[NDArray[np.float64]] = []
        self.stamps: list[float] = []

    def add(self, points: NDArray[np.void], sensor_pose: ArrayLike, stamp_s: float) -> None:
        """Write scan len(stamps): points (P,) full layout, world-from-sensor (4, 4), stamp."""
        k = len(self.stamps)
        scan, label = scan_arrays(points, self.kind)
        scan.astype('<f4').tofile(self.tmp / 'velodyne' / f'{k:06d}.bin')
        label.astype('<u4').tofile(self.tmp / 'labels' / f'{k:06d}.label')
        self.poses.append(np.asarray(sensor_pose, dtype=np.float64))
        self.stamps.append(float(stamp_s))

    def files(self) -> list[str]:
        """Return the paths of the sequence's files under their final names (relative to root)."""
        names = [f'{sub}/{k:06d}.{ext}' for k in range(len(self.stamps))
                 for sub, ext in (('velodyne', 'bin'), ('labels', 'label'))]
        seq = self.final.relative_to(self.root)
        return sorted([str(seq / n) for n in names + ['poses.txt', 'calib.txt', 'times.txt',
                                                      MARKER]]
                      + [f'poses/{self.number:02d}.txt'])

    def close(self) -> None:
        """Write poses.txt, calib.txt, times.txt and poses/NN.txt (the label map: the caller)."""
        first = np.linalg.inv(self.poses[0]) if self.poses else np.eye(4)
        rel = np.einsum('ij,njk->nik', first, np.asarray(self.poses).reshape(-1, 4, 4))
        poses = _matrix_lines(rel[:, :3, :].reshape(-1, 12))
        (self.tmp / 'poses.txt').write_text(poses, encoding='ascii')
        calib = ''.join(f'P{i}: ' + _matrix_lines(_NO_CAMERA.reshape(1, 12)) for i in range(4))
        calib += 'Tr: ' + _matrix_lines(_NO_CAMERA.reshape(1, 12))
        (self.tmp / 'calib.txt').write_text(calib, encoding='ascii')
        t0 = self.stamps[0] if self.stamps else 0.0
        (self.tmp / 'times.txt').write_text(''.join(f'{t - t0:.6e}\n' for t in self.stamps),
                                            encoding='ascii')
        (self.tmp / MARKER).write_text(json.dumps({'key': self.key}) + '\n', encoding='utf-8')
        safe_open.makedirs(self.root / 'poses')
        atomic_write(self.root / 'poses' / f'{self.number:02d}.txt',
                     lambda tmp: Path(tmp).write_text(poses, encoding='ascii'))


def write_label_map(root: str | Path, kind: str = 'native', sequences: Iterable[int] = (0,),
                    split: str = 'train') -> None:
    """Write ROOT/semantic-kitti.yaml (semantickitti_yaml.data_config) atomically."""
    semantickitti_yaml.write(root, kind, sequences, split)
