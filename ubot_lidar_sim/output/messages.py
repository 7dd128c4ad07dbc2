"""
The content of each message, described once for rclpy (ros/) and rosbags (output/rosbag.py).

A ``Message`` is a ROS type name ('sensor_msgs/msg/LaserScan') and its field values as plain
Python and numpy: numbers, str, numpy arrays, nested Messages and lists of them.
``build(message, make)`` turns it into an object of either library, ``make(type_name, fields)``
being that library's constructor (``ros/conversions.to_rclpy``, ``output/rosbag.to_rosbags``).
Described here: Time and Header, the boxes' MarkerArray, LaserScan of a core
LaserScanResult, TerrainSensor of a core TerrainResult, Environment of a core Weather (its
field mapping ENVIRONMENT_TO_WEATHER serves ros/conversions.environment_to_weather too), and
livox_ros_driver2's CustomMsg of a sweep, whose points stay one record array:
``custom_msg_cdr`` serialises it (plain CDR, what a publisher sends as raw bytes) without a
message object per point. No rclpy or rosbags import.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
import math
from typing import Any, Callable, Mapping, NamedTuple, TYPE_CHECKING

import numpy as np

from ubot_lidar_sim.core.poses import matrix_to_quaternion
from ubot_lidar_sim.core.sensors.driver_order import livox_tags

if TYPE_CHECKING:       # annotations only: messages stays a light import
    from ubot_lidar_sim.core.physics.weather import Weather
    from ubot_lidar_sim.core.sensors.laser import LaserScanResult
    from ubot_lidar_sim.core.sensors.terrain import TerrainResult
    from ubot_lidar_sim.output.boxes import Shape

MSG_PACKAGE = 'ubot_lidar_sim_msgs'
#: Recordings start their simulated clock at 1 s: a stamp of 0 means 'latest' to tf2.
CLOCK_START_NS = 1_000_000_000
TIME = 'builtin_interfaces/msg/Time'
HEADER = 'std_msgs/msg/Header'
POINT = 'geometry_msgs/msg/Point'
SCAN = 'sensor_msgs/msg/LaserScan'
TERRAIN = f'{MSG_PACKAGE}/msg/TerrainSensor'
ENVIRONMENT = f'{MSG_PACKAGE}/msg/Environment'
SMOKE_VOLUME = f'{MSG_PACKAGE}/msg/SmokeVolume'
MARKER_ARRAY = 'visualization_msgs/msg/MarkerArray'
MARKER = 'visualization_msgs/msg/Marker'
#: visualization_msgs/Marker's CUBE, TEXT_VIEW_FACING and ADD constants.
MARKER_CUBE, MARKER_TEXT, MARKER_ADD = 1, 9, 0
BOX_RGBA = (1.0, 0.6, 0.0, 0.5)
LIVOX_PACKAGE = 'livox_ros_driver2'
CUSTOM_MSG = f'{LIVOX_PACKAGE}/msg/CustomMsg'
#: livox_ros_driver2's msg/CustomMsg.msg and msg/CustomPoint.msg (Livox-SDK/livox_ros_driver2;
#: the same as livox_ros_driver's), field by field in order. The test interface package
#: (test/support/livox_ros_driver2) is written from these, and the node refuses an installed
#: type whose fields differ.
CUSTOM_MSG_FIELDS = (('header', 'std_msgs/Header'), ('timebase', 'uint64'),
                     ('point_num', 'uint32'), ('lidar_id', 'uint8'), ('rsvd', 'uint8[3]'),
                     ('points', 'CustomPoint[]'))
CUSTOM_POINT_FIELDS = (('offset_time', 'uint32'), ('x', 'float32'), ('y', 'float32'),
                       ('z', 'float32'), ('reflectivity', 'uint8'), ('tag', 'uint8'),
                       ('line', 'uint8'))
#: One CustomPoint as plain CDR lays it out in a sequence: each element starts aligned to 4
#: (its uint32), so 19 bytes of fields and 1 of padding.
CUSTOM_POINT_CDR = np.dtype({'names': [n for n, _ in CUSTOM_POINT_FIELDS],
                             'formats': ['<u4', '<f4', '<f4', '<f4', 'u1', 'u1', 'u1'],
                             'offsets': [0, 4, 8, 12, 16, 17, 18], 'itemsize': 20})
_CDR_LE = b'\x00\x01\x00\x00'     # encapsulation: plain CDR, little-endian

#: Environment number field -> core Weather field (smoke: SmokeVolume[] <-> smoke, density).
ENVIRONMENT_TO_WEATHER = {'rain_rate_mm_h': 'rain_mm_h', 'visibility_m': 'visibility_m',
                          'surface_wetness': 'surface_wetness',
                          'puddle_depth_m': 'puddle_depth_m',
                          'snowfall_rate_mm_h': 'snowfall_rate_mm_h',
                          'snow_depth_m': 'snow_depth_m',
                          'sun_illuminance_klx': 'sun_illuminance_klx'}


class Message(NamedTuple):
    """A message of type ``type_name`` ('pkg/msg/Name') with ``fields`` {name: value}."""

    type_name: str
    fields: Mapping[str, Any]


def build(message: Message, make: Callable[[str, dict], Any]) -> Any:
    """
    Return make(type_name, fields) of a Message, nested Messages (also in lists) built first.

    make receives a fresh dict it may change; numpy arrays are passed as they are.
    """
    def value(v):
        if isinstance(v, Message):
            return build(v, make)
        if isinstance(v, list):
            return [value(x) for x in v]
        return v

    return make(message.type_name, {k: value(v) for k, v in message.fields.items()})


def stamp(stamp_ns: int) -> Message:
    """Return the builtin_interfaces/Time of an integer time in ns (>= 0)."""
    stamp_ns = int(stamp_ns)
    return Message(TIME, {'sec': stamp_ns // 1_000_000_000, 'nanosec': stamp_ns % 1_000_000_000})


def sim_ns(t_s: float) -> int:
    """Return the recording time (int ns) of simulation time t_s: CLOCK_START_NS + t_s."""
    if not math.isfinite(t_s):
        raise ValueError(f'time {t_s} s is not finite')
    return CLOCK_START_NS + int(round(t_s * 1e9))


def header(frame_id: str, stamp_ns: int) -> Message:
    """Return a std_msgs/Header: frame_id, stamp of int ns."""
    return Message(HEADER, {'stamp': stamp(stamp_ns), 'frame_id': frame_id})


def points(rows: Iterable[Sequence[float]]) -> list[Message]:
    """Return the geometry_msgs/Point Messages of rows (N, 3) in m."""
    return [Message(POINT, {'x': x, 'y': y, 'z': z})
            for x, y, z in np.asarray(rows, dtype=np.float64).reshape(-1, 3).tolist()]


def laser_scan(res: LaserScanResult, frame_id: str, stamp_ns: int) -> Message:
    """
    Return the sensor_msgs/LaserScan of a core LaserScanResult.

    Angles in rad, times in s, ranges (N,) and intensities (N,) as float32.
    """
    return Message(SCAN, {
        'header': header(frame_id, stamp_ns), 'angle_min': float(res.angle_min),
        'angle_max': float(res.angle_max), 'angle_increment': float(res.angle_increment),
        'time_increment': float(res.time_increment), 'scan_time': float(res.scan_time),
        'range_min': float(res.range_min), 'range_max': float(res.range_max),
        'ranges': np.asarray(res.ranges, dtype=np.float32),
        'intensities': np.asarray(res.intensities, dtype=np.float32)})


def terrain(res: TerrainResult, frame_id: str, stamp_ns: int) -> Message:
    """
    Return the ubot_lidar_sim_msgs/TerrainSensor of a core TerrainResult.

    hit_flg, enabled (5,) uint8; hit_loc, start_loc 5 Points (m); veh_hit_dist float m;
    tire_hit_dist (4,) float64 m. Disabled rays are NaN already in the result.
    """
    return Message(TERRAIN, {
        'header': header(frame_id, stamp_ns),
        'hit_flg': np.asarray(res.hit_flg, dtype=np.uint8),
        'enabled': np.asarray(res.enabled, dtype=np.uint8),
        'hit_loc': points(res.hit_loc), 'start_loc': points(res.start_loc),
        'veh_hit_dist': float(res.veh_hit_dist),
        'tire_hit_dist': np.asarray(res.tire_hit_dist, dtype=np.float64)})


def environment(weather: Weather, frame_id: str, stamp_ns: int) -> Message:
    """
    Return the ubot_lidar_sim_msgs/Environment of a core Weather.

    Number fields through ENVIRONMENT_TO_WEATHER; one SmokeVolume per row of Weather.smoke
    (x, y, z, radius_m) with its smoke_density.
    """
    fields = {'header': header(frame_id, stamp_ns)}
    fields.update({name: float(getattr(weather, attr))
                   for name, attr in ENVIRONMENT_TO_WEATHER.items()})
    fields['smoke'] = [Message(SMOKE_VOLUME, {'center': points([s[:3]])[0], 'radius_m': s[3],
                                              'density': d})
                       for s, d in zip(np.asarray(weather.smoke, dtype=np.float64).tolist(),
                                       np.asarray(weather.smoke_density,
                                                  dtype=np.float64).tolist())]
    return Message(ENVIRONMENT, fields)


def livox_custom_msg(points: np.ndarray, frame_id: str, stamp_ns: int, lidar_id: int = 0
                     ) -> Message:
    """
    Return the livox_ros_driver2/CustomMsg of a sweep's FULL_DTYPE points (P,).

    timebase = the header stamp (int ns), offset_time = the point's time in ns after it
    (uint32: LidarConfig asks stamp_at start), reflectivity = the calibrated intensity byte,
    tag = the echo class's noise bits (driver_order.livox_tags), line = ring. ``points`` is a
    CUSTOM_POINT_CDR record array.
    """
    out = np.zeros(len(points), dtype=CUSTOM_POINT_CDR)
    out['offset_time'] = np.rint(points['time'].astype(np.float64) * 1e9).astype(np.uint32)
    for name in ('x', 'y', 'z'):
        out[name] = points[name]
    out['reflectivity'] = np.clip(np.rint(points['intensity']), 0, 255).astype(np.uint8)
    out['line'] = points['ring']
    out['tag'] = livox_tags(points['class_id'])
    return Message(CUSTOM_MSG, {
        'header': header(frame_id, stamp_ns), 'timebase': int(stamp_ns),
        'point_num': len(out), 'lidar_id': int(lidar_id),
        'rsvd': np.zeros(3, dtype=np.uint8), 'points': out})


def custom_msg_cdr(message: Message) -> bytes:
    """
    Return a livox_custom_msg Message serialised as plain little-endian CDR.

    The bytes rmw hands over for the message (test/ros/test_livox_custom_msg.py compares them
    with rclpy's serialize_message); publishers send them as they are.
    """
    f, h = message.fields, message.fields['header'].fields
    frame = h['frame_id'].encode('utf-8') + b'\x00'
    body = bytearray(np.array([h['stamp'].fields['sec'], h['stamp'].fields['nanosec'],
                               len(frame)], dtype='<u4').tobytes())
    body += frame
    body += bytes(-len(body) % 8)                       # uint64 timebase aligned to 8
    body += np.array([f['timebase']], dtype='<u8').tobytes()
    body += np.array([f['point_num']], dtype='<u4').tobytes()
    body += bytes([f['lidar_id']]) + np.asarray(f['rsvd'], dtype=np.uint8).tobytes()
    pts = np.ascontiguousarray(f['points'], dtype=CUSTOM_POINT_CDR)
    body += np.array([len(pts)], dtype='<u4').tobytes()
    raw = pts.tobytes()
    body += raw[:-1] if raw else raw                    # no padding after the last point
    return _CDR_LE + bytes(body)


def box_markers(items: Sequence[Shape], poses: np.ndarray, frame_id: str, stamp_ns: int,
                lifetime_s: float) -> Message:
    """
    Return the MarkerArray of boxes: output/boxes.py Shapes items at sensor-from-box poses.

    One CUBE per item (ns ``boxes``, id its track id, scale its size) and a TEXT_VIEW_FACING
    with its name (ns ``labels``), each living lifetime_s; the node's ~/boxes and a
    recording's ``/<sensor>/boxes``.
    """
    life_ns = int(round(max(float(lifetime_s), 0.0) * 1e9))
    life = Message('builtin_interfaces/msg/Duration', {'sec': life_ns // 1_000_000_000,
                                                       'nanosec': life_ns % 1_000_000_000})
    out = []
    for item, pose in zip(items, poses):
        x, y, z = (float(v) for v in pose[:3, 3])
        q = [float(v) for v in np.asarray(matrix_to_quaternion(pose[:3, :3]), np.float64)]
        for ns, kind in (('boxes', MARKER_CUBE), ('labels', MARKER_TEXT)):
            cube = kind == MARKER_CUBE
            size = [float(v) for v in item.size] if cube else [0.0, 0.0, 0.5]
            out.append(Message(MARKER, {
                'header': header(frame_id, stamp_ns), 'ns': ns, 'id': int(item.track_id),
                'type': kind, 'action': MARKER_ADD,
                'pose': Message('geometry_msgs/msg/Pose', {
                    'position': Message(POINT, {'x': x, 'y': y, 'z': z}),
                    'orientation': Message('geometry_msgs/msg/Quaternion', dict(
                        zip('xyzw', q)))}),
                'scale': Message('geometry_msgs/msg/Vector3', dict(zip('xyz', size))),
                'color': Message('std_msgs/msg/ColorRGBA', dict(
                    zip('rgba', BOX_RGBA[:3] + (BOX_RGBA[3] if cube else 1.0,)))),
                'lifetime': life, 'text': '' if cube else item.name}))
    return Message(MARKER_ARRAY, {'markers': out})
