"""
rosbag2 recordings in one MCAP file, written with rosbags; no rclpy.

The file embeds every message definition (sensor_msgs, tf2_msgs, rosgraph_msgs from rosbags'
ROS 2 store; ubot_lidar_sim_msgs parsed from its .msg files), so Foxglove, ``ros2 bag`` and
any MCAP reader decode it without this package. Writing is atomic: rosbags writes a bag
directory under a temporary name beside the target; only a closed, complete file is renamed
to the final name. The bytes depend on the messages alone (no wall clock, no random ids), so
equal inputs give equal files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
import contextlib
from functools import lru_cache
import os
from pathlib import Path
import shutil
import tempfile
from typing import Any, TYPE_CHECKING

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.point_layouts import is_dense
from ubot_lidar_sim.output import messages, safe_open
from ubot_lidar_sim.output.atomic import atomic_write, naming

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.physics.weather import Weather
    from ubot_lidar_sim.core.sensors.laser import LaserScanResult
    from ubot_lidar_sim.core.sensors.terrain import TerrainResult

MSG_PACKAGE = messages.MSG_PACKAGE
CLOCK_START_NS = messages.CLOCK_START_NS
ns = messages.sim_ns
ENVIRONMENT_MSG = messages.ENVIRONMENT
TERRAIN_MSG = messages.TERRAIN
POINTS_MSG = 'sensor_msgs/msg/PointCloud2'
SCAN_MSG = messages.SCAN
TF_MSG = 'tf2_msgs/msg/TFMessage'
CLOCK_MSG = 'rosgraph_msgs/msg/Clock'
COMPRESSIONS = ('none', 'zstd')


def msg_dir() -> Path:
    """
    Return the directory of the ubot_lidar_sim_msgs .msg files.

    Looks beside the source tree (repo/ubot_lidar_sim_msgs/msg), then in every prefix of
    AMENT_PREFIX_PATH and above this file (<prefix>/share/ubot_lidar_sim_msgs/msg).
    """
    here = Path(__file__).resolve()
    candidates = [here.parents[2] / MSG_PACKAGE / 'msg']
    prefixes = [Path(p) for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    for prefix in prefixes + list(here.parents):
        candidates.append(prefix / 'share' / MSG_PACKAGE / 'msg')
    for path in candidates:
        if (path / 'Environment.msg').is_file():
            return path
    raise FileNotFoundError(f'{MSG_PACKAGE}/msg/Environment.msg not found near {here} '
                            'nor in AMENT_PREFIX_PATH')


@lru_cache(maxsize=1)
def typestore() -> Any:
    """Return rosbags' ROS 2 typestore with the ubot_lidar_sim_msgs types registered."""
    from rosbags.typesys import get_types_from_msg, get_typestore, Stores

    store = get_typestore(Stores.ROS2_KILTED)
    types = {}
    for path in sorted(msg_dir().glob('*.msg')):
        types.update(get_types_from_msg(path.read_text(encoding='utf-8'),
                                        f'{MSG_PACKAGE}/msg/{path.stem}'))
    store.register(types)
    return store


def _qos(depth, latched):
    from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness,
                                    QosReliability, QosTime)
    zero = QosTime(0, 0)
    return Qos(QosHistory.KEEP_LAST, depth, QosReliability.RELIABLE,
               QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
               zero, zero, QosLiveliness.AUTOMATIC, zero, False)


class BagWriter:
    """
    A rosbag2 (storage mcap, version 9) written to one ``.mcap`` file; use it as a context.

    ``write(topic, msgtype, log_ns, msg)`` takes a message built by the functions below.
    compression 'zstd' compresses the MCAP chunks (Foxglove and ros2 bag read both).
    Leaving the context with an exception removes everything it wrote.
    """

    def __init__(self, path: str | Path, compression: str = 'none') -> None:
        self.path = Path(path)
        if compression not in COMPRESSIONS:
            raise ConfigError('compression', compression, ' or '.join(COMPRESSIONS))
        with naming(self.path):     # the folders of a new output name are made, link-safe
            safe_open.makedirs(self.path.parent)
        self.compression = compression
        self.store = typestore()
        self._tmp = None
        self._writer = None
        self._conns = {}
        self.counts = {}

    def __enter__(self):
        """Create the temporary bag beside the target; returns self."""
        from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer

        try:
            with naming(self.path):
                self._tmp = Path(tempfile.mkdtemp(prefix=f'.{self.path.name}.',
                                                  dir=self.path.parent))
                # The bag directory is named like the target, so the metadata it embeds names
                # the file as it ends up (relative_file_paths: [<target>.mcap]) and the bytes
                # do not depend on the temporary name.
                self._writer = Writer(self._tmp / self.path.stem, version=9,
                                      storage_plugin=StoragePlugin.MCAP)
                if self.compression == 'zstd':
                    self._writer.set_compression(CompressionMode.STORAGE,
                                                 CompressionFormat.ZSTD)
                self._writer.open()
        except BaseException:       # no __exit__ after a failed __enter__: clean up here
            self._cleanup()
            raise
        return self

    def write(self, topic: str, msgtype: str, log_ns: int, msg: Any, latched: bool = False
              ) -> None:
        """Serialise msg (CDR) and write it at log time log_ns (int ns)."""
        conn = self._conns.get(topic)
        if conn is None:
            conn = self._writer.add_connection(
                topic, msgtype, typestore=self.store,
                offered_qos_profiles=[_qos(1 if latched else 10, latched)])
            self._conns[topic] = conn
            self.counts[topic] = 0
        with naming(self.path):
            self._writer.write(conn, int(log_ns), self.store.serialize_cdr(msg, msgtype))
        self.counts[topic] += 1

    def close(self) -> None:
        """Finish the file and rename it to the target (replacing an older one)."""
        writer, self._writer = self._writer, None
        try:
            with naming(self.path):
                writer.close()
                done = self._tmp / self.path.stem / f'{self.path.stem}.mcap'
                # Renamed in with the other files of atomic.all_or_none() when one is open.
                atomic_write(self.path, lambda tmp: os.replace(done, tmp))
        finally:
            self._cleanup()

    def abort(self) -> None:
        """Drop everything written; nothing appears under the target name."""
        writer, self._writer = self._writer, None
        try:
            if writer is not None:
                # Closing flushes buffered bytes: on a full disk that fails again, and would
                # hide the error that made us abort. The file is removed either way.
                with contextlib.suppress(OSError):
                    writer.abort()
        finally:
            self._cleanup()

    def _cleanup(self):
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __exit__(self, exc_type, exc, tb):
        """Close the bag, or abort it on an exception (KeyboardInterrupt included)."""
        if exc_type is None:
            self.close()
        else:
            self.abort()
        return False


#: numpy types of rosbags' numeric base types (its sequences of them are numpy arrays).
_NUMPY_BASE = {'bool': np.bool_, 'byte': np.uint8, 'char': np.uint8, 'int8': np.int8,
               'uint8': np.uint8, 'int16': np.int16, 'uint16': np.uint16, 'int32': np.int32,
               'uint32': np.uint32, 'int64': np.int64, 'uint64': np.uint64,
               'float32': np.float32, 'float64': np.float64}


def _default_value(store, kind):
    """Return the default (0, '', False, empty, nested defaults) of a rosbags field kind."""
    from rosbags.typesys.base import Nodetype

    node, detail = kind
    if node == Nodetype.NAME:
        return _make(store, detail, {})
    if node == Nodetype.BASE:
        return '' if detail[0] in ('string', 'wstring') else _NUMPY_BASE[detail[0]](0).item()
    inner, count = detail
    if inner[0] == Nodetype.BASE and inner[1][0] in _NUMPY_BASE:
        return np.zeros(count if node == Nodetype.ARRAY else 0, _NUMPY_BASE[inner[1][0]])
    return [_default_value(store, inner) for _ in range(count if node == Nodetype.ARRAY else 0)]


def _make(store, name, fields):
    """Return rosbags' message name of fields, the fields not given at their defaults."""
    for field, kind in store.fielddefs[name][1]:
        if field not in fields:
            fields[field] = _default_value(store, kind)
    return store.types[name](**fields)


def to_rosbags(message: messages.Message) -> Any:
    """
    Return the rosbags message object of an output/messages.Message.

    rosbags' types take every field: one a Message leaves out gets its default (as rclpy's).
    """
    store = typestore()
    return messages.build(message, lambda name, fields: _make(store, name, fields))


def header(frame_id: str, stamp_ns: int) -> Any:
    """Return a std_msgs/Header."""
    return to_rosbags(messages.header(frame_id, stamp_ns))


def points_msg(array: np.ndarray, fields: Sequence[tuple[str, int, int, int]], frame_id: str,
               stamp_ns: int, height: int = 1) -> Any:
    """
    Return a PointCloud2 of a packed structured array (P,) (little-endian), height rows.

    fields: [(name, offset, datatype, count)] of its layout (PointField datatype codes); width
    P / height; is_dense unless a point is NaN (the empty cells of an organised cloud).
    """
    types = typestore().types
    pf = types['sensor_msgs/msg/PointField']
    array = np.ascontiguousarray(array)
    return types[POINTS_MSG](
        header=header(frame_id, stamp_ns), height=height, width=len(array) // height,
        fields=[pf(name=n, offset=o, datatype=d, count=c) for n, o, d, c in fields],
        is_bigendian=False, point_step=array.dtype.itemsize,
        row_step=array.dtype.itemsize * (len(array) // height),
        data=array.view(np.uint8).reshape(-1), is_dense=is_dense(array))


def scan_msg(res: LaserScanResult, frame_id: str, stamp_ns: int) -> Any:
    """Return a LaserScan of a core LaserScanResult (messages.laser_scan)."""
    return to_rosbags(messages.laser_scan(res, frame_id, stamp_ns))


def terrain_msg(res: TerrainResult, frame_id: str, stamp_ns: int) -> Any:
    """Return a ubot_lidar_sim_msgs/TerrainSensor of a core TerrainResult (messages.terrain)."""
    return to_rosbags(messages.terrain(res, frame_id, stamp_ns))


def tf_msg(transforms: Iterable[tuple[str, str, int, np.ndarray]],
           quaternion_of: Callable[[np.ndarray], Sequence[float]]) -> Any:
    """
    Return a tf2_msgs/TFMessage of [(parent, child, stamp_ns, parent-from-child (4, 4))].

    quaternion_of(rotation (3, 3)) -> (x, y, z, w).
    """
    types = typestore().types
    out = []
    for parent, child, stamp_ns, m in transforms:
        m = np.asarray(m, dtype=np.float64)
        q = quaternion_of(m[:3, :3])
        tf = types['geometry_msgs/msg/Transform'](
            translation=types['geometry_msgs/msg/Vector3'](x=float(m[0, 3]), y=float(m[1, 3]),
                                                           z=float(m[2, 3])),
            rotation=types['geometry_msgs/msg/Quaternion'](x=float(q[0]), y=float(q[1]),
                                                           z=float(q[2]), w=float(q[3])))
        out.append(types['geometry_msgs/msg/TransformStamped'](
            header=header(parent, stamp_ns), child_frame_id=child, transform=tf))
    return types[TF_MSG](transforms=out)


def environment_msg(weather: Weather, frame_id: str, stamp_ns: int) -> Any:
    """Return a ubot_lidar_sim_msgs/Environment of a core Weather (messages.environment)."""
    return to_rosbags(messages.environment(weather, frame_id, stamp_ns))


def clock_msg(stamp_ns: int) -> Any:
    """Return a rosgraph_msgs/Clock."""
    return to_rosbags(messages.Message(CLOCK_MSG, {'clock': messages.stamp(stamp_ns)}))
