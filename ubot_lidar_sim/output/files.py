"""
Output files: one writer per file extension, each atomic.

``WRITERS`` maps an extension to an ``OutputFormat``: the sensors whose results it can write and
its writer ``(path, result, cfg, sensor) -> None``. A writer writes a temporary file beside the
target, flushes it to disk and renames it into place, so a reader never sees half a file; a
failed write (ENOSPC, ...) raises WriteError naming the file and leaves nothing under its name.
Inside ``all_or_none()`` the files of a multi-frame run are renamed into place only once all are
written, so a failed run leaves an earlier run's files as they were; ``staged_tree`` does the
same for a whole directory (a SemanticKITTI sequence, the PCD files of a sequence), and
``NpzStream`` for a .npz whose arrays arrive one at a time (a dataset's labels).

Links: no writer follows a symbolic link at an output name. An output path (file or staged
tree) that is a link is refused (LinkRefused, naming it); temporaries are created exclusively
(``mkdtemp``, mode 0700) beside the target and renamed over its name, and a rename replaces a
directory entry without following it. So ``--out link.npz`` and ``--out link.mcap`` behave the
same, and a link planted in a shared output directory cannot make a run write elsewhere
(``open_append`` appends with O_NOFOLLOW; below a run's output directory every component of a
path is checked, output/safe_open.py). Files get the mode the umask allows, as open() would
give them. A new format is one entry (and its writer). Results: ``ScanResult`` (lidar_3d),
``LaserScanResult`` (laser_scan), ``(stamp_s, TerrainResult)`` (terrain_sensor). A recording
format (``.mcap``) holds the whole run, every sensor and topic, in one file: dataset/record.py
writes it from the whole run.
"""

import contextlib
from dataclasses import dataclass
import errno
import json
import os
from pathlib import Path
import shutil
import tempfile
import threading
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union
import zipfile

import numpy as np

from ubot_lidar_sim.core.sensors.laser import LaserScanResult
from ubot_lidar_sim.core.sensors.lidar import ScanResult
from ubot_lidar_sim.core.sensors.point_layouts import configured_layout
from ubot_lidar_sim.core.sensors.terrain import TerrainResult
from ubot_lidar_sim.output import safe_open
from ubot_lidar_sim.output.messages import sim_ns
from ubot_lidar_sim.output.pcd import save_pcd
# Defined here before; their home is output/safe_open.py now.
from ubot_lidar_sim.output.safe_open import LinkRefused, open_append, WriteError  # noqa: F401

Result = Union[ScanResult, LaserScanResult, Tuple[float, TerrainResult]]
Writer = Callable[[Path, Result, Any, str], None]
Fields = Dict[str, Any]

LASER_FIELDS = ('ranges', 'intensities', 'angle_min', 'angle_max', 'angle_increment',
                'range_min', 'range_max', 'time_increment', 'scan_time')
TERRAIN_FIELDS = ('hit_flg', 'enabled', 'hit_loc', 'start_loc', 'veh_hit_dist',
                  'tire_hit_dist')


@dataclass(frozen=True)
class OutputFormat:
    """A file format: the writer and the sensors (CLI names) whose results it writes."""

    write: Optional[Writer]
    sensors: Tuple[str, ...]
    recording: bool = False     # the whole run in one file (dataset/record.py writes it)


def jsonable(value: Any) -> Any:
    """Return value with numpy arrays, numpy scalars and tuples turned into JSON types."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def refuse_link(path: Union[str, Path]) -> Path:
    """Return path; raise LinkRefused when it is a symbolic link (dangling or not)."""
    path = Path(path)
    if path.is_symlink():
        raise LinkRefused(path)
    return path


def temp_prefix(path: Union[str, Path]) -> str:
    """Return the prefix of path's temporaries: '.<name>.' (every writer names them so)."""
    return f'.{Path(path).name}.'


@contextlib.contextmanager
def naming(path):
    """Raise an OSError of the block (a full disk, ...) as WriteError naming path, the user's."""
    try:
        yield
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc


class _Batch:
    """Files written into temporary directories beside their targets, renamed in at the end."""

    def __init__(self):
        self.dirs, self.staged, self.trees = {}, [], []

    def stage(self, path, write):
        """Call write(tmp_path) for path (never a link) and flush it to disk."""
        target = refuse_link(path)
        safe_open.check_below(target)
        if not target.parent.is_dir():
            raise FileNotFoundError(errno.ENOENT, 'no such directory', str(target.parent))
        try:                        # errors name the user's file, never the temporary one
            if target.parent not in self.dirs:
                self.dirs[target.parent] = Path(tempfile.mkdtemp(prefix=temp_prefix(target),
                                                                 dir=target.parent))
            tmp = self.dirs[target.parent] / target.name
            write(str(tmp))
            _fsync(tmp)
        except OSError as exc:
            raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        self.staged.append((tmp, target))

    def stage_tree(self, path):
        """Return an empty temporary directory beside path that replaces it on commit."""
        path = refuse_link(path)
        safe_open.check_below(path)
        with naming(path):
            safe_open.makedirs(path.parent)
            tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(path), dir=path.parent))
        self.trees.append((tmp, path))
        return tmp

    def commit(self):
        """Rename every staged file, then every staged directory tree, into place."""
        for tmp, _ in self.trees:
            for folder, _, names in os.walk(tmp):
                for name in names:
                    _fsync(os.path.join(folder, name))
        for tmp, target in self.staged:
            try:
                safe_open.check_below(target)
                os.replace(tmp, target)
            except WriteError:
                raise
            except OSError as exc:
                raise WriteError(exc.errno, exc.strerror or str(exc), str(target)) from exc
        for tmp, target in self.trees:
            safe_open.check_below(target)
            old = None
            if target.exists():         # a directory cannot be replaced by rename: move it off
                old = Path(tempfile.mkdtemp(prefix=f'{temp_prefix(target)}old.',
                                            dir=target.parent))
                os.replace(target, old / target.name)
            os.replace(tmp, target)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)

    def discard(self):
        """Remove the temporary directories (and whatever is still in them)."""
        for folder in [*self.dirs.values(), *(tmp for tmp, _ in self.trees)]:
            shutil.rmtree(folder, ignore_errors=True)


def _fsync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)            # a filesystem may report a full disk only here
    finally:
        os.close(fd)


_current = threading.local()


@contextlib.contextmanager
def all_or_none():
    """Within it, the files atomic_write writes are renamed into place only if all succeed."""
    outer = getattr(_current, 'batch', None)
    if outer is not None:           # nested: the outer batch decides
        yield
        return
    _current.batch = batch = _Batch()
    try:
        yield
        batch.commit()
    finally:
        _current.batch = None
        batch.discard()


def atomic_write(path: Union[str, Path], write: Callable[[str], None]) -> None:
    """Call write(tmp_path) on a temporary file beside path, then rename it into place."""
    with all_or_none():
        _current.batch.stage(path, write)


def staged_tree(path: Union[str, Path]) -> Path:
    """
    Return an empty temporary directory that replaces the directory path when all_or_none ends.

    Only inside all_or_none(); the caller writes the whole tree into it (files are flushed to
    disk before the rename). A failed or interrupted run removes it and leaves path as it was.
    """
    batch = getattr(_current, 'batch', None)
    if batch is None:
        raise RuntimeError('staged_tree() is only for use inside all_or_none()')
    return batch.stage_tree(path)


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


def layout_points(result: ScanResult, cfg: Any):
    """Return a sweep's points in cfg.point_layout, stamped as in a recording (sim_ns)."""
    return configured_layout(result.points, cfg, sim_ns(result.stamp_s))


def write_pcd_result(path: Path, result: Result, cfg: Any, sensor: str) -> None:
    """Write a lidar_3d sweep as a binary PCD of its points in the sensor's point_layout."""
    points = layout_points(result, cfg)
    atomic_write(path, lambda tmp: save_pcd(tmp, points, cfg.point_layout))


WRITERS: Dict[str, OutputFormat] = {
    '.npz': OutputFormat(write_npz_result, ('lidar_3d', 'laser_scan', 'terrain_sensor')),
    '.ply': OutputFormat(write_ply_result, ('lidar_3d',)),
    '.pcd': OutputFormat(write_pcd_result, ('lidar_3d',)),
    '.json': OutputFormat(write_json_result, ('laser_scan', 'terrain_sensor')),
    '.mcap': OutputFormat(None, ('lidar_3d', 'laser_scan', 'terrain_sensor', 'all'),
                          recording=True),
}


def extensions(sensor: str) -> Tuple[str, ...]:
    """Return the file extensions whose writer takes the sensor's results, in WRITERS order."""
    return tuple(ext for ext, fmt in WRITERS.items() if sensor in fmt.sensors)
