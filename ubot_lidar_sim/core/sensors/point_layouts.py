"""
Point layouts (docs/nodes.md): packed little-endian dtypes, conversion, PointField specs.

The core packs every sweep in the full layout; ``to_layout`` converts it to the velodyne, ouster,
livox or autoware one. ``point_fields`` gives the PointField list of any such dtype as plain
tuples (no rclpy), which ros/conversions.py and the rosbag writer turn into messages.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, TYPE_CHECKING

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.return_selection import (
    FLAG_FIRST, FLAG_LAST, FLAG_SECOND_STRONGEST, FLAG_STRONGEST)
from ubot_lidar_sim.core.sensors.driver_order import (driver_points, intensity_bytes, livox_tags,
                                                      nebula_angles, robosense_return_types,
                                                      velodyne_return_types, vendor_of)

if TYPE_CHECKING:       # annotations only: the layouts stay a light import
    from ubot_lidar_sim.core.config.lidar import LidarConfig

FULL_DTYPE = np.dtype([
    ('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'), ('ring', '<u2'),
    ('time', '<f4'), ('reflectivity', '<f4'), ('signal', '<u2'), ('range', '<f4'),
    ('return_index', 'u1'), ('return_count', 'u1'), ('return_flags', 'u1'), ('material', 'u1'),
    ('class_id', '<u2'), ('instance_id', '<u2')])
VELODYNE_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                           ('ring', '<u2'), ('time', '<f4')])
OUSTER_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                         ('t', '<u4'), ('reflectivity', '<u2'), ('ring', '<u2'),
                         ('ambient', '<u2'), ('range', '<u4')])
#: livox_ros_driver2's PointCloud2 point, LivoxPointXyzrtlt (src/comm/comm.h, #pragma pack(1),
#: 26 bytes; fields as src/lddc.cpp InitPointcloud2MsgHeader declares them, commit bf4d062).
LIVOX_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4'),
                        ('tag', 'u1'), ('line', 'u1'), ('timestamp', '<f8')])
#: Autoware's point, Nebula's PointXYZIRCAEDT (tier4/nebula docs/point_types.md and
#: nebula_common/include/nebula_common/point_types.hpp, commit 0056c9a: a plain C struct, no
#: padding, 32 bytes; field names as its POINT_CLOUD_REGISTER_POINT_STRUCT registers them).
AUTOWARE_DTYPE = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', 'u1'),
                           ('return_type', 'u1'), ('channel', '<u2'), ('azimuth', '<f4'),
                           ('elevation', '<f4'), ('distance', '<f4'), ('time_stamp', '<u4')])
#: Packed (no padding), little-endian dtypes of the layouts.
LAYOUT_DTYPES: Dict[str, np.dtype] = {'full': FULL_DTYPE, 'velodyne': VELODYNE_DTYPE,
                                      'ouster': OUSTER_DTYPE, 'livox': LIVOX_DTYPE,
                                      'autoware': AUTOWARE_DTYPE}

#: Nebula's ``enum class ReturnType : uint8_t`` (tier4/nebula
#: nebula_common/include/nebula_common/nebula_common.hpp: UNKNOWN = 0, LAST, FIRST, STRONGEST,
#: FIRST_WEAK, LAST_WEAK, IDENTICAL, SECOND, SECONDSTRONGEST, FIRST_STRONGEST, LAST_STRONGEST):
#: the values the autoware layout uses.
NEBULA_RETURN_TYPE = {'unknown': 0, 'last': 1, 'first': 2, 'strongest': 3, 'identical': 6,
                      'second_strongest': 8, 'first_strongest': 9, 'last_strongest': 10}
#: The return_flags bits each return_mode emits (core/physics/return_selection.py); None: the
#: mode is not known, all three count.
_MODE_FLAGS = {'strongest': FLAG_STRONGEST, 'first': FLAG_FIRST, 'last': FLAG_LAST,
               'dual_strongest_last': FLAG_STRONGEST | FLAG_LAST,
               'dual_first_last': FLAG_FIRST | FLAG_LAST,
               'triple_first_strongest_last': FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST,
               None: FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST}

#: sensor_msgs/PointField datatype codes of the numpy element types (INT8 = 1 ... FLOAT64 = 8).
POINT_FIELD_DATATYPES: Dict[np.dtype, int] = {
    np.dtype('i1'): 1, np.dtype('u1'): 2, np.dtype('<i2'): 3, np.dtype('<u2'): 4,
    np.dtype('<i4'): 5, np.dtype('<u4'): 6, np.dtype('<f4'): 7, np.dtype('<f8'): 8,
}
#: The numpy element type (little-endian) of each PointField datatype code.
NUMPY_OF_DATATYPE: Dict[int, np.dtype] = {v: k for k, v in POINT_FIELD_DATATYPES.items()}


def concat_records(arrays: Sequence[np.ndarray]) -> np.ndarray:
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


def is_dense(cloud: np.ndarray) -> bool:
    """Return True unless a point of the cloud has a NaN x, y or z (PointCloud2 is_dense)."""
    return returned_count(cloud) == len(cloud)


def returned_count(cloud: np.ndarray) -> int:
    """Return the points of a cloud that are returns: not the NaN cells of an organised one."""
    return len(cloud) - int(np.count_nonzero(np.isnan(cloud['x'])))


def point_fields(dtype: np.dtype) -> List[Tuple[str, int, int, int]]:
    """Return the PointField specs (name, offset, datatype code, count 1) of a structured dtype."""
    fields = []
    for name in dtype.names:
        sub, offset = dtype.fields[name][:2]
        key = sub.newbyteorder('<') if sub.itemsize > 1 else sub
        fields.append((name, offset, POINT_FIELD_DATATYPES[key], 1))
    return fields


def return_type_table(return_mode: Optional[str] = None) -> np.ndarray:
    """
    Return the (8,) uint8 Nebula ReturnType of each (return_flags & 7) under return_mode.

    A single-return mode gives its own type (first 2, strongest 3, last 1). Of a multi-return
    mode only the flags it emits count: one gives its type; all of them (its echoes coincide
    in one point) IDENTICAL 6;
    first + strongest of the triple mode FIRST_STRONGEST 9, strongest + last LAST_STRONGEST 10.
    """
    if return_mode not in _MODE_FLAGS:
        raise ConfigError('return_mode', return_mode,
                          'one of ' + ', '.join(m for m in _MODE_FLAGS if m is not None))
    mask, t = _MODE_FLAGS[return_mode], NEBULA_RETURN_TYPE
    by_flags = {FLAG_FIRST: t['first'], FLAG_STRONGEST: t['strongest'], FLAG_LAST: t['last'],
                FLAG_FIRST | FLAG_STRONGEST: t['first_strongest'],
                FLAG_STRONGEST | FLAG_LAST: t['last_strongest'],
                FLAG_FIRST | FLAG_LAST: t['identical'],
                FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST: t['identical']}
    table = np.zeros(8, dtype=np.uint8)
    if mask in (FLAG_FIRST, FLAG_STRONGEST, FLAG_LAST):    # a single-return mode: its own
        table[1:] = by_flags[mask]
        return table
    for flags in range(1, 8):
        held = flags & mask
        table[flags] = t['identical'] if held == mask else by_flags.get(held, t['unknown'])
    return table


def configured_layout(points: np.ndarray, cfg: LidarConfig, stamp_ns: int) -> np.ndarray:
    """
    Return FULL_DTYPE points (P,) in a LidarConfig's point_layout (its ambient, return mode).

    In the order its driver publishes (driver_order.driver_points: firing order for velodyne,
    autoware and livox); the labels of a recording follow the same order.
    """
    return to_layout(driver_points(points, cfg), cfg.point_layout, cfg.ambient_counts,
                     stamp_ns, cfg.return_mode,
                     (vendor_of(getattr(cfg, 'preset', 'custom')), cfg.channels))


def to_layout(points: np.ndarray, layout: str, ambient_counts: float = 0.0,
              stamp_ns: int = 0, return_mode: Optional[str] = None,
              vendor: Tuple[str, int] = ('hesai', 0)) -> np.ndarray:
    """
    Convert FULL_DTYPE points (P,) to the 'full', 'velodyne', 'ouster', 'livox' or 'autoware' one.

    ouster: intensity = signal (counts), t = time in ns (uint32: LidarConfig refuses stamp_at
    end with this layout),
    reflectivity = the calibrated byte, ambient = ambient_counts, range in mm. livox:
    intensity = the calibrated byte, tag = the noise bits of the echo's class
    (core/sensors/driver_order.py livox_tags), line = ring, timestamp = the point's
    absolute time in ns as float64 (stamp_ns + time), as livox_ros_driver2 writes it
    (src/comm/pub_handler.cpp: packet time + i x point interval). autoware: see _to_autoware;
    return_mode (the config's) gives return_type, None counts all the flags (the triple mode's
    table); vendor (Nebula decoder family, channels) picks the decoder's conventions
    (core/sensors/driver_order.py).
    """
    if layout == 'full':
        return np.ascontiguousarray(points, dtype=FULL_DTYPE)
    if layout not in LAYOUT_DTYPES:
        raise ConfigError('point_layout', layout, 'one of ' + ', '.join(LAYOUT_DTYPES))
    out = np.empty(points.shape[0], dtype=LAYOUT_DTYPES[layout])
    if layout == 'livox':
        return _to_livox(points, out, stamp_ns)
    if layout == 'autoware':
        return _to_autoware(points, out, return_mode, vendor)
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
    out['tag'] = livox_tags(points['class_id'])
    out['line'] = points['ring']
    out['timestamp'] = float(stamp_ns) + np.rint(points['time'].astype(np.float64) * 1e9)
    return out


def _to_autoware(points: np.ndarray, out: np.ndarray, return_mode,
                 vendor=('hesai', 0)) -> np.ndarray:
    """
    Fill an AUTOWARE_DTYPE array from FULL_DTYPE points (see to_layout).

    intensity = the calibrated byte (rounded, clipped to 0-255); return_type from return_flags
    (return_type_table); channel = ring; distance = range (m); time_stamp = time in ns (uint32:
    LidarConfig refuses stamp_at end with this layout). azimuth and elevation (rad) of the
    point's direction in the sensor frame, in Nebula's convention (its decoders place a point at
    x = d cos(el) sin(az), y = d cos(el) cos(az), z = d sin(el)): azimuth = atan2(x, y) from +y
    towards +x (clockwise seen from above) in [0, 2 pi), elevation = atan2(z, hypot(x, y)).
    A velodyne_* or robosense_* preset takes its own decoder's angles and return_type values:
    core/sensors/driver_order.py.
    """
    for name in ('x', 'y', 'z'):
        out[name] = points[name]
    out['intensity'] = intensity_bytes(points['intensity'])
    flags = points['return_flags']
    if vendor[0] == 'velodyne':
        out['return_type'] = velodyne_return_types(points, return_mode, vendor[1])
    elif vendor[0] == 'robosense':
        out['return_type'] = robosense_return_types(flags, return_mode,
                                                    points['return_count'] > 1)
    else:
        kind = return_type_table(return_mode)[flags & 7]
        # The dual rule's second strongest echo is none of the mode's own: Nebula's
        # SECONDSTRONGEST.
        kind[((flags & FLAG_SECOND_STRONGEST) != 0)
             & (kind == NEBULA_RETURN_TYPE['unknown'])] = NEBULA_RETURN_TYPE['second_strongest']
        out['return_type'] = kind
    out['channel'] = points['ring']
    out['azimuth'], out['elevation'] = nebula_angles(points['x'], points['y'], points['z'],
                                                     vendor[0])
    out['distance'] = points['range']
    out['time_stamp'] = np.rint(points['time'].astype(np.float64) * 1e9).astype(np.uint32)
    return out
