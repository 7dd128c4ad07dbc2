"""
Point layouts (docs/nodes.md): packed little-endian dtypes, conversion, PointField specs.

The core packs every sweep in the full layout; ``to_layout`` converts it to the velodyne, ouster
or livox one. ``point_fields`` gives the PointField list of any such dtype as plain tuples (no
rclpy), which ros/conversions.py and the rosbag writer turn into messages.
"""

from typing import Dict, List, Tuple

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError

FULL_DTYPE = np.dtype([
    ('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'), ('ring', '<u2'),
    ('time', '<f4'), ('reflectivity', '<f4'), ('signal', '<u2'), ('range', '<f4'),
    ('return_index', 'u1'), ('return_count', 'u1'), ('return_flags', 'u1'), ('material', 'u1'),
    ('class_id', 'u1')])
VELODYNE_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                           ('ring', '<u2'), ('time', '<f4')])
OUSTER_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                         ('t', '<u4'), ('reflectivity', '<u2'), ('ring', '<u2'),
                         ('ambient', '<u2'), ('range', '<u4')])
#: livox_ros_driver2's PointCloud2 point, LivoxPointXyzrtlt (src/comm/comm.h, #pragma pack(1),
#: 26 bytes; fields as src/lddc.cpp InitPointcloud2MsgHeader declares them, commit bf4d062).
LIVOX_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                        ('tag', 'u1'), ('line', 'u1'), ('timestamp', '<f8')])
#: Packed (no padding), little-endian dtypes of the layouts.
LAYOUT_DTYPES: Dict[str, np.dtype] = {'full': FULL_DTYPE, 'velodyne': VELODYNE_DTYPE,
                                      'ouster': OUSTER_DTYPE, 'livox': LIVOX_DTYPE}

#: sensor_msgs/PointField datatype codes of the numpy element types (INT8 = 1 ... FLOAT64 = 8).
POINT_FIELD_DATATYPES: Dict[np.dtype, int] = {
    np.dtype('i1'): 1, np.dtype('u1'): 2, np.dtype('<i2'): 3, np.dtype('<u2'): 4,
    np.dtype('<i4'): 5, np.dtype('<u4'): 6, np.dtype('<f4'): 7, np.dtype('<f8'): 8,
}
#: The numpy element type (little-endian) of each PointField datatype code.
NUMPY_OF_DATATYPE: Dict[int, np.dtype] = {v: k for k, v in POINT_FIELD_DATATYPES.items()}


def concat_records(arrays) -> np.ndarray:
    """
    Return np.concatenate(arrays) of record arrays (P_i,) of one packed dtype, copied as bytes.

    numpy copies a packed structured array field by field: 3.9 ms for the 68k points of an
    OS1-128 sweep here, against 0.07 ms for the same bytes (docs/dev/performance-log.md).
    """
    arrays = [np.ascontiguousarray(a) for a in arrays]
    dtype = arrays[0].dtype
    out = np.empty(sum(a.shape[0] for a in arrays), dtype=dtype)
    raw, offset = out.view(np.uint8), 0
    for a in arrays:
        raw[offset:offset + a.nbytes] = a.view(np.uint8)
        offset += a.nbytes
    return out


def take_records(records: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Return records[index] of a packed record array (P,), each record moved as its bytes."""
    records = np.ascontiguousarray(records)
    raw = records.view(np.dtype((np.void, records.dtype.itemsize)))
    return raw[np.asarray(index, dtype=np.intp)].view(records.dtype)


def copy_records(dst: np.ndarray, src: np.ndarray) -> None:
    """Write the record array src (P,) into dst (P,) of the same packed dtype, as bytes."""
    dst.view(np.uint8)[...] = np.ascontiguousarray(src).view(np.uint8)


def point_fields(dtype: np.dtype) -> List[Tuple[str, int, int, int]]:
    """Return the PointField specs (name, offset, datatype code, count 1) of a structured dtype."""
    fields = []
    for name in dtype.names:
        sub, offset = dtype.fields[name][:2]
        key = sub.newbyteorder('<') if sub.itemsize > 1 else sub
        fields.append((name, offset, POINT_FIELD_DATATYPES[key], 1))
    return fields


def to_layout(points: np.ndarray, layout: str, ambient_counts: float = 0.0,
              stamp_ns: int = 0) -> np.ndarray:
    """
    Convert FULL_DTYPE points (P,) to the 'full', 'velodyne', 'ouster' or 'livox' layout.

    ouster: intensity = signal (counts), t = time in ns (uint32: LidarConfig refuses stamp_at
    end with this layout),
    reflectivity = the calibrated byte, ambient = ambient_counts, range in mm. livox:
    intensity = the calibrated byte, tag 0 (no noise flags), line = ring, timestamp = the point's
    absolute time in ns as float64 (stamp_ns + time), as livox_ros_driver2 writes it
    (src/comm/pub_handler.cpp: packet time + i x point interval).
    """
    if layout == 'full':
        return np.ascontiguousarray(points, dtype=FULL_DTYPE)
    if layout not in LAYOUT_DTYPES:
        raise ConfigError('point_layout', layout, 'one of ' + ', '.join(LAYOUT_DTYPES))
    out = np.empty(points.shape[0], dtype=LAYOUT_DTYPES[layout])
    if layout == 'livox':
        return _to_livox(points, out, stamp_ns)
    for name in ('x', 'y', 'z', 'ring'):
        out[name] = points[name]
    if layout == 'velodyne':
        out['intensity'] = points['intensity']
        out['time'] = points['time']
        return out
    t_ns = np.rint(points['time'].astype(np.float64) * 1e9)
    out['intensity'] = points['signal']
    out['t'] = t_ns.astype(np.uint32)
    out['reflectivity'] = points['intensity']
    out['ambient'] = np.uint16(min(max(round(ambient_counts), 0), 65535))
    out['range'] = np.rint(points['range'].astype(np.float64) * 1000.0).astype(np.uint32)
    return out


def _to_livox(points: np.ndarray, out: np.ndarray, stamp_ns: int) -> np.ndarray:
    """Fill a LIVOX_DTYPE array from FULL_DTYPE points (see to_layout)."""
    for name in ('x', 'y', 'z', 'intensity'):
        out[name] = points[name]
    out['tag'] = 0
    out['line'] = points['ring']
    out['timestamp'] = float(stamp_ns) + np.rint(points['time'].astype(np.float64) * 1e9)
    return out
