"""
File formats of one sensor result: one frame writer per file extension, each atomic.

Each frame writer ``(path, result, cfg, sensor) -> None`` writes through
``atomic.atomic_write`` (output/atomic.py: a whole file or none, never through a link); the
extension and the sensors each one serves are registered in pipeline/writers.py WRITERS, the
one table of the ``--out`` formats (``.mcap``, the whole run in one file, included).
``NpzStream`` writes a .npz whose arrays arrive one at a time (a dataset's labels). Results:
``ScanResult`` (lidar_3d), ``LaserScanResult`` (laser_scan), ``(stamp_s, TerrainResult)``
(terrain_sensor).
"""

import contextlib
import errno
import json
import os
from pathlib import Path
import shutil
import tempfile
from typing import Any, Callable, Dict, Mapping, Tuple, Union
import zipfile

import numpy as np

from ubot_lidar_sim.core.sensors.laser import LaserScanResult
from ubot_lidar_sim.core.sensors.lidar import ScanResult
from ubot_lidar_sim.core.sensors.organised_rows import layout_cloud
from ubot_lidar_sim.core.sensors.terrain import TerrainResult
from ubot_lidar_sim.output.atomic import atomic_write, naming, temp_prefix
from ubot_lidar_sim.output.json_values import jsonable
from ubot_lidar_sim.output.messages import sim_ns
from ubot_lidar_sim.output.pcd import save_pcd

Result = Union[ScanResult, LaserScanResult, Tuple[float, TerrainResult]]
Writer = Callable[[Path, Result, Any, str], None]
Fields = Dict[str, Any]

LASER_FIELDS = ('ranges', 'intensities', 'angle_min', 'angle_max', 'angle_increment',
                'range_min', 'range_max', 'time_increment', 'scan_time')
TERRAIN_FIELDS = ('hit_flg', 'enabled', 'hit_loc', 'start_loc', 'veh_hit_dist',
                  'tire_hit_dist')


def _npz_entry(zf: zipfile.ZipFile, name: str, arr: Any) -> None:
    """Write one array of a .npz, with a fixed zip timestamp (equal arrays, equal bytes)."""
    info = zipfile.ZipInfo(name + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
    with zf.open(info, 'w', force_zip64=True) as f:
        np.lib.format.write_array(f, np.asanyarray(arr), allow_pickle=False)


def write_npz(path: Union[str, Path], arrays: Mapping[str, Any]) -> None:
    """Write a .npz with fixed zip timestamps, so equal arrays give byte-identical files."""
    def write(tmp):
        with zipfile.ZipFile(tmp, 'w', compression=zipfile.ZIP_STORED) as zf:
            for name, arr in arrays.items():
                _npz_entry(zf, name, arr)
    atomic_write(path, write)


class NpzStream:
    """
    A .npz written one array at a time, for arrays that arrive over a long run; a context.

    The bytes of write_npz with the same arrays in the same order. It grows in a temporary
    directory beside path; close() renames it in (with the other files of an open
    all_or_none); an exception or abort() leaves nothing. Errors name path (WriteError).
    """

    def __init__(self, path: Union[str, Path]):
        self.path = Path(path)
        self._dir, self._zip = None, None

    def __enter__(self):
        """Open the temporary file; returns self."""
        try:
            with naming(self.path):
                self._dir = Path(tempfile.mkdtemp(prefix=temp_prefix(self.path),
                                                  dir=self.path.parent))
                self._zip = zipfile.ZipFile(self._dir / self.path.name, 'w',
                                            compression=zipfile.ZIP_STORED)
        except BaseException:
            self.abort()
            raise
        return self

    def add(self, name: str, arr: Any) -> None:
        """Append the array ``name``."""
        with naming(self.path):
            _npz_entry(self._zip, name, arr)

    def abort(self) -> None:
        """Drop what was written."""
        zf, self._zip = self._zip, None
        if zf is not None:
            with contextlib.suppress(OSError):     # a full disk fails the flush again
                zf.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __exit__(self, exc_type, exc, tb):
        """Finish and rename in, or abort on an exception."""
        if exc_type is not None:
            self.abort()
            return False
        try:
            with naming(self.path):
                zf, self._zip = self._zip, None
                zf.close()
                done = self._dir / self.path.name
                atomic_write(self.path, lambda tmp: os.replace(done, tmp))
        finally:
            self.abort()
        return False


def write_json(path: Union[str, Path], obj: Any) -> None:
    """Write JSON (inf and NaN as JavaScript's Infinity / NaN, which Python's json reads)."""
    def write(tmp):
        with open(tmp, 'w', encoding='utf-8') as f:
            json.dump(jsonable(obj), f, indent=1)
            f.write('\n')
    atomic_write(path, write)


_PLY_TYPES = {'f4': 'float', 'u1': 'uchar', 'u2': 'uint16', 'u4': 'uint32', 'f8': 'double'}


def write_ply(path: Union[str, Path], points: np.ndarray) -> None:
    """
    Write a structured point array as a binary PLY, one vertex property per field.

    The header, then the records as they are in memory (little-endian, packed): open3d and
    every PLY reader read it. (open3d's own writer printed 'RPly: Failed writing' on a full disk
    and reported success, leaving a truncated file.)
    """
    points = np.ascontiguousarray(points)
    props = ''.join(f'property {_PLY_TYPES[points.dtype[n].str[1:]]} {n}\n'
                    for n in points.dtype.names)
    header = ('ply\nformat binary_little_endian 1.0\ncomment ubot_lidar_sim\n'
              f'element vertex {len(points)}\n{props}end_header\n').encode('ascii')

    def write(tmp):
        with open(tmp, 'wb') as f:
            f.write(header)
            f.write(points.tobytes())
        if os.path.getsize(tmp) != len(header) + points.nbytes:
            raise OSError(errno.EIO, 'short write')
    atomic_write(path, write)


def message_fields(result: Result, cfg: Any, sensor: str) -> Tuple[Fields, Fields]:
    """Return (header {frame_id, stamp_s}, fields by message name) of a 2D or terrain result."""
    if sensor == 'laser_scan':
        fields = {k: getattr(result, k) for k in LASER_FIELDS}
        fields.update(stamp_s=result.stamp_s, sensor_pose=result.sensor_pose)
        return {'frame_id': cfg.frame_id, 'stamp_s': result.stamp_s}, fields
    stamp_s, terrain = result
    return ({'frame_id': cfg.world_frame, 'stamp_s': stamp_s},
            {k: getattr(terrain, k) for k in TERRAIN_FIELDS})


def write_npz_result(path: Path, result: Result, cfg: Any, sensor: str) -> None:
    """Write a result as .npz: the point fields (lidar_3d) or the message fields."""
    if sensor == 'lidar_3d':
        arrays = {name: result.points[name] for name in result.points.dtype.names}
        arrays.update(stamp_s=np.float64(result.stamp_s), sensor_pose=result.sensor_pose)
    else:
        header, fields = message_fields(result, cfg, sensor)
        arrays = {k: np.asarray(v) for k, v in fields.items()}
        if sensor == 'terrain_sensor':
            arrays = {'stamp_s': np.float64(header['stamp_s']), **arrays}
    write_npz(path, arrays)


def write_json_result(path: Path, result: Result, cfg: Any, sensor: str) -> None:
    """Write a laser_scan or terrain_sensor result as JSON: a header and the message fields."""
    header, fields = message_fields(result, cfg, sensor)
    write_json(path, {'header': header, **fields})


def write_ply_result(path: Path, result: Result, cfg: Any, sensor: str) -> None:
    """Write a lidar_3d sweep as a binary PLY of its points."""
    write_ply(path, result.points)


def layout_points(result: ScanResult, cfg: Any) -> Tuple[np.ndarray, int]:
    """
    Return (a sweep's points in cfg.point_layout, stamped as in a recording (sim_ns), height).

    In its driver's order and rows (organised_rows.layout_cloud: ouster's are organised).
    """
    cloud, _, height = layout_cloud(result, cfg, sim_ns(result.stamp_s))
    return cloud, height


def write_pcd_result(path: Path, result: Result, cfg: Any, sensor: str) -> None:
    """Write a lidar_3d sweep as a binary PCD of its points in the sensor's point_layout."""
    points, height = layout_points(result, cfg)
    atomic_write(path, lambda tmp: save_pcd(tmp, points, cfg.point_layout, height))
