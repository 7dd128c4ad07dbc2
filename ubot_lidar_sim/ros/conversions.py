"""
Messages <-> numpy: PointCloud2 (core/sensors/point_layouts.py), TF, Environment, stamps.

The other messages' content is described once in output/messages.py; ``to_rclpy`` builds the
rclpy object of such a description. ``environment_to_weather`` is the input side of
messages.ENVIRONMENT_TO_WEATHER, the one field mapping (messages.environment its output side).

PointCloud2 packing is vectorised: the points are copied field by field into a packed structured
array whose bytes are assigned to ``msg.data`` (bytes, never an ndarray: ~100x faster).
"""

from array import array
from functools import lru_cache
import importlib
import struct

import numpy as np
from sensor_msgs.msg import PointCloud2, PointField

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import weather_from
from ubot_lidar_sim.core.sensors import point_layouts
from ubot_lidar_sim.output import messages
from ubot_lidar_sim.ros.tf_buffer import TransformError


def point_fields(dtype):
    """Return the PointField messages of a structured dtype (point_layouts.point_fields specs)."""
    return [PointField(name=name, offset=offset, datatype=datatype, count=count)
            for name, offset, datatype, count in point_layouts.point_fields(dtype)]


@lru_cache(maxsize=None)
def _rclpy_class(type_name):
    """Return the rclpy message class of 'pkg/msg/Name'."""
    package, _, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.msg'), name)


def _rclpy_make(type_name, fields):
    """Construct a message; numpy arrays for unbounded sequences become array.array."""
    cls = _rclpy_class(type_name)
    kinds = cls.get_fields_and_field_types()
    for name, value in fields.items():
        if isinstance(value, np.ndarray) and kinds[name].startswith('sequence<'):
            fields[name] = array(value.dtype.char, value.tobytes())
    return cls(**fields)


def _ros_field_type(msg_type, package):
    """Return rclpy's get_fields_and_field_types() spelling of a .msg field type."""
    base = {'float32': 'float', 'float64': 'double'}.get(msg_type, msg_type)
    if base.endswith('[]'):
        inner = base[:-2]
        return f'sequence<{inner if "/" in inner else f"{package}/{inner}"}>'
    return base


def livox_custom_msg_class():
    """
    Return livox_ros_driver2's CustomMsg class, imported now (an optional dependency).

    Raises ConfigError naming livox_custom_msg when livox_ros_driver2's Python messages do not
    import or their fields are not output/messages.CUSTOM_MSG_FIELDS / CUSTOM_POINT_FIELDS
    (the raw CDR the node publishes would not match).
    """
    package = messages.LIVOX_PACKAGE
    try:
        cls = _rclpy_class(messages.CUSTOM_MSG)
        point_cls = _rclpy_class(f'{package}/msg/CustomPoint')
    except (ImportError, AttributeError) as exc:
        raise ConfigError('livox_custom_msg', True,
                          f'false while {package} is not installed ({exc}): build and source '
                          f'{package} (Livox-SDK/livox_ros_driver2) to publish its CustomMsg'
                          ) from None
    for klass, fields in ((cls, messages.CUSTOM_MSG_FIELDS),
                          (point_cls, messages.CUSTOM_POINT_FIELDS)):
        want = {name: _ros_field_type(kind, package) for name, kind in fields}
        have = dict(klass.get_fields_and_field_types())
        if have != want:
            raise ConfigError('livox_custom_msg', True,
                              f'false while the installed {package} {klass.__name__} has the '
                              f'fields {have}, not those this node writes: {want}')
    return cls


def to_rclpy(message):
    """Return the rclpy message object of an output/messages.Message."""
    return messages.build(message, _rclpy_make)


def ns_to_stamp(stamp_ns):
    """Return builtin_interfaces/Time of an integer time in ns (>= 0)."""
    return to_rclpy(messages.stamp(stamp_ns))


def stamp_to_s(stamp):
    """Return a builtin_interfaces/Time as float seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def array_to_pointcloud2(array, frame_id, stamp_ns, height=1):
    """
    Return a PointCloud2 (little-endian) holding a structured array (P,) in height rows.

    width P / height; is_dense unless a point is NaN (the empty cells of an organised cloud).
    """
    array = np.ascontiguousarray(array)
    msg = PointCloud2()
    msg.header.frame_id = frame_id
    msg.header.stamp = ns_to_stamp(stamp_ns)
    msg.height = height
    msg.width = len(array) // height
    msg.fields = point_fields(array.dtype)
    msg.is_bigendian = False
    msg.point_step = array.dtype.itemsize
    msg.row_step = msg.point_step * msg.width
    msg.is_dense = point_layouts.is_dense(array)
    msg.data = array.tobytes()
    return msg


def pointcloud2_dtype(msg):
    """Return the structured dtype (with itemsize = point_step) that a PointCloud2 describes."""
    names, formats, offsets = [], [], []
    for f in msg.fields:
        names.append(f.name)
        base = point_layouts.NUMPY_OF_DATATYPE[f.datatype]
        formats.append(base if f.count == 1 else (base, f.count))
        offsets.append(f.offset)
    dtype = np.dtype({'names': names, 'formats': formats, 'offsets': offsets,
                      'itemsize': msg.point_step})
    return dtype.newbyteorder('>') if msg.is_bigendian else dtype


def pointcloud2_to_array(msg):
    """Return the points of a PointCloud2 as a (height * width,) structured array view."""
    data = bytes(msg.data) if not isinstance(msg.data, (bytes, bytearray)) else msg.data
    return np.frombuffer(data, dtype=pointcloud2_dtype(msg), count=msg.width * msg.height)


def environment_to_weather(msg, world_frame):
    """
    Return the core Weather of an Environment message (rclpy or rosbags), or raise ConfigError.

    The limits are the Weather's (core/physics/weather.py), the error names the message field
    ('environment.rain_rate_mm_h'); smoke given in a frame other than the world frame is
    refused too.
    """
    if len(msg.smoke) and msg.header.frame_id not in ('', world_frame):
        raise ConfigError('environment.header.frame_id', msg.header.frame_id,
                          f"'' or the world frame {world_frame!r}")
    names = {attr: f'environment.{name}' for name, attr in messages.ENVIRONMENT_TO_WEATHER.items()}
    names['smoke'] = 'environment.smoke'
    values = {attr: getattr(msg, name) for name, attr in messages.ENVIRONMENT_TO_WEATHER.items()}
    smoke = [(s.center.x, s.center.y, s.center.z, s.radius_m) for s in msg.smoke]
    return weather_from(names, smoke=np.array(smoke, dtype=np.float64).reshape(-1, 4),
                        smoke_density=[s.density for s in msg.smoke], **values)


def tf_items(msg):
    """Return the transforms of a tf2_msgs/TFMessage as (parent, child, stamp_s, t, q) tuples."""
    out = []
    for ts in msg.transforms:
        t, q = ts.transform.translation, ts.transform.rotation
        out.append((ts.header.frame_id, ts.child_frame_id, stamp_to_s(ts.header.stamp),
                    (t.x, t.y, t.z), (q.x, q.y, q.z, q.w)))
    return out


_TIME = {'<': struct.Struct('<iI'), '>': struct.Struct('>iI')}
_UINT32 = {'<': struct.Struct('<I'), '>': struct.Struct('>I')}
_POSE7 = {'<': struct.Struct('<7d'), '>': struct.Struct('>7d')}


def _cdr_string(data, pos, u32):
    """Return (string, position after it) of a CDR string at pos (body offset, aligned to 4)."""
    pos = (pos + 3) & ~3
    (length,) = u32.unpack_from(data, pos)
    end = pos + 4 + length
    if length == 0 or end > len(data):
        raise ValueError(f'CDR string of length {length} at {pos} does not fit')
    return str(data[pos + 4:end - 1], 'utf-8'), end


def tf_items_from_cdr(data):
    """
    Decode a serialised tf2_msgs/TFMessage (plain CDR, as rmw hands it over) into tf_items.

    Equal to tf_items(deserialize_message(data, TFMessage)), without building message
    objects: at 1 kHz of /tf those cost more than the transforms' use. Raises ValueError for
    data that is not plain little- or big-endian CDR of a TFMessage (the caller then
    deserialises it with rclpy).
    """
    data = bytes(data)
    if len(data) < 8 or data[0] != 0 or data[1] not in (0, 1):
        raise ValueError('not a plain CDR encapsulation')
    order = '<' if data[1] == 1 else '>'
    body = data[4:]               # CDR alignment counts from the end of the 4-byte header
    u32, time_s, pose7 = _UINT32[order], _TIME[order], _POSE7[order]
    (n,) = u32.unpack_from(body, 0)
    pos, out = 4, []
    for _ in range(n):
        sec, nanosec = time_s.unpack_from(body, pos)
        parent, pos = _cdr_string(body, pos + 8, u32)
        child, pos = _cdr_string(body, pos, u32)
        pos = (pos + 7) & ~7
        v = pose7.unpack_from(body, pos)
        pos += 56
        out.append((parent, child, sec + nanosec * 1e-9, v[:3], v[3:]))
        pos = (pos + 3) & ~3
    return out


def apply_transforms(buffer, items, static=False):
    """
    Insert tf_items tuples into a TransformBuffer.

    A bad transform is skipped; the others are still inserted.
    Returns the list of error strings, one per refused transform.
    """
    errors = []
    for parent, child, stamp_s, t, q in items:
        try:
            buffer.set_transform(parent, child, stamp_s, t, q, static=static)
        except TransformError as exc:
            errors.append(str(exc))
    return errors


def apply_tf_message(buffer, msg, static=False):
    """Insert every transform of a tf2_msgs/TFMessage into a TransformBuffer (apply_transforms)."""
    return apply_transforms(buffer, tf_items(msg), static)
