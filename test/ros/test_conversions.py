"""
Tests of the message conversions: PointCloud2 layouts, TF, Environment, poses.

Also the one description of LaserScan, TerrainSensor and Environment built for rclpy and
rosbags alike (output/messages.py).
"""

import math
import struct

from geometry_msgs.msg import Point, TransformStamped
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import PointField
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.cli import effective_config
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import pose_matrix_deg
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.point_layouts import (LAYOUT_DTYPES, POINT_FIELD_DATATYPES,
                                                       to_layout)
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.output import messages, rosbag
from ubot_lidar_sim.ros.conversions import (apply_tf_message, array_to_pointcloud2,
                                            environment_to_weather, ns_to_stamp,
                                            pointcloud2_to_array, tf_items, tf_items_from_cdr,
                                            to_rclpy)
from ubot_lidar_sim.ros.tf_buffer import TransformBuffer
from ubot_lidar_sim_msgs.msg import Environment, SmokeVolume

F32, U8, U16, U32 = PointField.FLOAT32, PointField.UINT8, PointField.UINT16, PointField.UINT32


def full_points(n=3):
    pts = np.zeros(n, dtype=LAYOUT_DTYPES['full'])
    pts['x'] = np.arange(n) + 1.0
    pts['y'] = -2.0
    pts['z'] = 0.5
    pts['intensity'] = [10, 200, 255][:n]
    pts['ring'] = [0, 7, 15][:n]
    pts['time'] = [0.0, 0.05, 0.0999][:n]
    pts['reflectivity'] = 0.3
    pts['signal'] = [100, 2000, 65535][:n]
    pts['range'] = [1.2344, 20.0, 99.9994][:n]
    pts['return_index'] = 1
    pts['return_count'] = 2
    return pts


def layout_of(msg):
    return [(f.name, f.offset, f.datatype, f.count) for f in msg.fields]


def test_full_layout_fields_offsets_and_datatypes():
    msg = array_to_pointcloud2(to_layout(full_points(), 'full'), 'lidar_3d', 0)
    assert layout_of(msg) == [
        ('x', 0, F32, 1), ('y', 4, F32, 1), ('z', 8, F32, 1), ('intensity', 12, F32, 1),
        ('ring', 16, U16, 1), ('time', 18, F32, 1), ('reflectivity', 22, F32, 1),
        ('signal', 26, U16, 1), ('range', 28, F32, 1), ('return_index', 32, U8, 1),
        ('return_count', 33, U8, 1), ('return_flags', 34, U8, 1), ('material', 35, U8, 1),
        ('class_id', 36, U16, 1), ('instance_id', 38, U16, 1)]
    assert msg.point_step == 40 and msg.row_step == 3 * 40 and len(msg.data) == 3 * 40


def test_velodyne_layout_is_xyzirt_with_point_step_22():
    msg = array_to_pointcloud2(to_layout(full_points(), 'velodyne'), 'lidar_3d', 0)
    assert layout_of(msg) == [('x', 0, F32, 1), ('y', 4, F32, 1), ('z', 8, F32, 1),
                              ('intensity', 12, F32, 1), ('ring', 16, U16, 1),
                              ('time', 18, F32, 1)]
    assert msg.point_step == 22


def test_ouster_layout_fields_and_unit_conversions():
    pts = to_layout(full_points(), 'ouster', ambient_counts=20.0)
    msg = array_to_pointcloud2(pts, 'os_lidar', 0)
    assert layout_of(msg) == [
        ('x', 0, F32, 1), ('y', 4, F32, 1), ('z', 8, F32, 1), ('intensity', 12, F32, 1),
        ('t', 16, U32, 1), ('reflectivity', 20, U16, 1), ('ring', 22, U16, 1),
        ('ambient', 24, U16, 1), ('range', 26, U32, 1)]
    assert msg.point_step == 30
    # bound: float32 seconds < 0.1 s in ns: half a spacing 3.7 ns < 10 ns
    np.testing.assert_allclose(pts['t'], [0, 50_000_000, 99_900_000], atol=10)  # float32 s
    np.testing.assert_array_equal(pts['range'], [1234, 20000, 99999])
    np.testing.assert_array_equal(pts['intensity'], [100, 2000, 65535])
    np.testing.assert_array_equal(pts['reflectivity'], [10, 200, 255])
    np.testing.assert_array_equal(pts['ambient'], [20, 20, 20])


def test_layout_datatype_codes_are_the_pointfield_constants():
    names = {'i1': 'INT8', 'u1': 'UINT8', '<i2': 'INT16', '<u2': 'UINT16', '<i4': 'INT32',
             '<u4': 'UINT32', '<f4': 'FLOAT32', '<f8': 'FLOAT64'}
    assert {getattr(PointField, names[dt.str.lstrip('|')]): code
            for dt, code in POINT_FIELD_DATATYPES.items()} == {c: c for c in range(1, 9)}


def test_pointcloud2_header_and_round_trip():
    pts = to_layout(full_points(), 'full')
    msg = array_to_pointcloud2(pts, 'lidar_3d', 12 * 10**9 + 345)
    assert msg.header.frame_id == 'lidar_3d'
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (12, 345)
    assert msg.height == 1 and msg.width == 3 and msg.is_dense and not msg.is_bigendian
    back = pointcloud2_to_array(msg)
    for name in pts.dtype.names:
        np.testing.assert_array_equal(back[name], pts[name])


def test_empty_cloud_is_valid():
    msg = array_to_pointcloud2(to_layout(full_points(0), 'velodyne'), 'lidar_3d', 0)
    assert msg.width == 0 and len(msg.data) == 0 and msg.point_step == 22


def tf(parent, child, sec, xyz, q):
    ts = TransformStamped()
    ts.header.frame_id, ts.child_frame_id = parent, child
    ts.header.stamp.sec = sec
    ts.transform.translation.x, ts.transform.translation.y, ts.transform.translation.z = xyz
    r = ts.transform.rotation
    r.x, r.y, r.z, r.w = q
    return ts


def test_tf_message_inserts_good_transforms_and_reports_bad_ones():
    buf = TransformBuffer()
    msg = TFMessage(transforms=[tf('map', 'base_link', 1, (1.0, 2.0, 0.0), (0, 0, 0, 1)),
                                tf('base_link', 'lidar', 1, (0.0, 0.0, 1.0), (0, 0, 0, 2.0)),
                                tf('base_link', 'imu', 1, (math.nan, 0, 0), (0, 0, 0, 1))])
    errors = apply_tf_message(buf, msg, static=True)
    assert len(errors) == 2 and 'norm' in errors[0] and 'translation' in errors[1]
    # bound: float64 values copied through messages; default rtol 1e-7 absorbs nothing else
    np.testing.assert_allclose(buf.lookup('map', 'base_link', 0.0)[:3, 3], [1.0, 2.0, 0.0])


def environment(**kw):
    msg = Environment(rain_rate_mm_h=0.0, visibility_m=math.inf, surface_wetness=-1.0,
                      puddle_depth_m=0.0)
    for k, v in kw.items():
        setattr(msg, k, v)
    return msg


def test_environment_becomes_weather():
    msg = environment(rain_rate_mm_h=10.0, visibility_m=200.0, surface_wetness=0.5,
                      puddle_depth_m=0.01,
                      smoke=[SmokeVolume(center=Point(x=1.0, y=2.0, z=3.0), radius_m=1.5,
                                         density=0.6)])
    msg.header.frame_id = 'map'
    w = environment_to_weather(msg, 'map')
    assert (w.rain_mm_h, w.visibility_m, w.surface_wetness, w.puddle_depth_m) == (
        10.0, 200.0, 0.5, 0.01)
    # bound: float64 values copied through messages; default rtol 1e-7 absorbs nothing else
    np.testing.assert_allclose(w.smoke, [[1.0, 2.0, 3.0, 1.5]])
    np.testing.assert_allclose(w.smoke_density, [0.6])


@pytest.mark.parametrize('changes, match', [
    ({'rain_rate_mm_h': math.nan}, 'rain_rate_mm_h'),
    ({'rain_rate_mm_h': -1.0}, 'rain_rate_mm_h'),
    ({'rain_rate_mm_h': 1e9}, 'rain_rate_mm_h'),
    ({'visibility_m': 0.0}, 'visibility_m'),
    ({'visibility_m': math.nan}, 'visibility_m'),
    ({'surface_wetness': 2.0}, 'surface_wetness'),
    ({'puddle_depth_m': -0.1}, 'puddle_depth_m'),
    ({'smoke': [SmokeVolume(radius_m=-1.0, density=0.5)]}, 'radius_m'),
    ({'smoke': [SmokeVolume(radius_m=1.0, density=1.5)]}, 'density'),
    ({'smoke': [SmokeVolume(center=Point(x=math.inf), radius_m=1.0, density=0.5)]}, 'center'),
])
def test_bad_environment_is_refused_naming_the_field(changes, match):
    with pytest.raises(ConfigError, match=match):
        environment_to_weather(environment(**changes), 'map')


def test_smoke_in_another_frame_is_refused():
    msg = environment(smoke=[SmokeVolume(radius_m=1.0, density=0.5)])
    msg.header.frame_id = 'odom'
    with pytest.raises(ConfigError, match='frame_id'):
        environment_to_weather(msg, 'map')


WEATHER = Weather(rain_mm_h=4.0, visibility_m=800.0, surface_wetness=0.25, puddle_depth_m=0.01,
                  snowfall_rate_mm_h=0.5, snow_depth_m=0.02,
                  smoke=[[30.0, 0.0, 1.0, 0.5], [-2.0, 1.0, 0.5, 2.0]], smoke_density=[0.5, 1.0])


def _core_results():
    """Return a core LaserScanResult (4 deg rays, rain) and TerrainResult (FR tire unknown)."""
    laser_cfg = effective_config('laser_scan', None, {'resolution_deg': 4.0,
                                                      'model': 'physical'})
    world, materials = load_for_config(laser_cfg)
    pose = pose_matrix_deg((0.3, 0.0, 0.7), (0, 20, 90))    # pitched down: half hit the ground
    scan = LaserScanner(laser_cfg, world, materials).scan(
        lambda t: np.broadcast_to(pose, (len(t), 4, 4)), 1.25, WEATHER)
    terrain_cfg = effective_config('terrain_sensor', None, {})
    centres = np.reshape(terrain_cfg.tire_positions_m, (4, 3)).copy()
    centres[1] = np.nan
    terrain = TerrainSensor(terrain_cfg, world).sample(pose_matrix_deg((0, 0, 0.5), (0, 0, 0)),
                                                       tire_centres_base=centres)
    return scan, terrain


def _values(msg):
    """Return an rclpy message's field values as nested lists and dicts (repr: NaN == NaN)."""
    if hasattr(msg, 'get_fields_and_field_types'):
        return {name: _values(getattr(msg, name)) for name in msg.get_fields_and_field_types()}
    if isinstance(msg, (list, tuple)):
        return [_values(v) for v in msg]
    return np.asarray(msg).tolist() if hasattr(msg, '__len__') and not isinstance(msg, str) \
        else msg


def test_rclpy_and_rosbags_messages_of_one_description_are_equal():
    """Both paths carry equal field values: rclpy reads equal messages off both CDRs."""
    scan, terrain = _core_results()
    stamp_ns = 1_250_000_042
    described = {messages.SCAN: messages.laser_scan(scan, 'laser', stamp_ns),
                 messages.TERRAIN: messages.terrain(terrain, 'map', stamp_ns),
                 messages.ENVIRONMENT: messages.environment(WEATHER, 'map', stamp_ns)}
    store = rosbag.typestore()
    for type_name, description in described.items():
        ours = to_rclpy(description)
        theirs = bytes(store.serialize_cdr(rosbag.to_rosbags(description), type_name))
        assert repr(_values(deserialize_message(theirs, type(ours)))) == repr(
            _values(deserialize_message(serialize_message(ours), type(ours)))), type_name
        assert set(description.fields) == set(ours.get_fields_and_field_types()), type_name
    msg = to_rclpy(described[messages.SCAN])
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1, 250_000_042)
    assert msg.ranges.tolist() == scan.ranges.tolist() and len(msg.ranges) == 90
    assert 0 < np.count_nonzero(np.isfinite(scan.ranges)) < 90 and len(msg.intensities) == 90
    msg = to_rclpy(described[messages.TERRAIN])
    assert list(msg.enabled) == [1, 1, 0, 1, 1] and math.isnan(msg.tire_hit_dist[1])
    assert ns_to_stamp(stamp_ns) == msg.header.stamp


def test_environment_and_weather_map_both_ways():
    back = environment_to_weather(to_rclpy(messages.environment(WEATHER, 'map', 0)), 'map')
    for name in ('rain_mm_h', 'visibility_m', 'surface_wetness', 'puddle_depth_m',
                 'snowfall_rate_mm_h', 'snow_depth_m', 'smoke', 'smoke_density'):
        np.testing.assert_array_equal(getattr(back, name), getattr(WEATHER, name), name)
    bag_msg = rosbag.environment_msg(WEATHER, 'map', 0)
    assert environment_to_weather(bag_msg, 'map').snow_depth_m == WEATHER.snow_depth_m


def _tf_message(transforms):
    msg = TFMessage()
    for parent, child, sec, nanosec, t, q in transforms:
        ts = TransformStamped()
        ts.header.frame_id, ts.child_frame_id = parent, child
        ts.header.stamp.sec, ts.header.stamp.nanosec = sec, nanosec
        ts.transform.translation.x, ts.transform.translation.y, \
            ts.transform.translation.z = t
        (ts.transform.rotation.x, ts.transform.rotation.y, ts.transform.rotation.z,
         ts.transform.rotation.w) = q
        msg.transforms.append(ts)
    return msg


@pytest.mark.parametrize('transforms', [
    [],
    [('map', 'odom', 12, 345_000_000, (1.0, -2.5, 0.25), (0.0, 0.0, 0.0, 1.0))],
    # Frame names of every length modulo 8 (CDR padding), non-ASCII, NaN and huge values.
    [(p, c, s, ns, (float('nan'), 1e300, -0.0), (0.1, -0.2, 0.3, 0.927))
     for p, c, s, ns in [('a', 'bb', 0, 1), ('odom', 'base_link', 7, 999_999_999),
                         ('wörld', 'x' * 13, 2_000_000_000, 5), ('m' * 8, 'n' * 9, -3, 0)]],
], ids=['empty', 'one', 'padding_nan_unicode'])
def test_tf_cdr_decoder_equals_rclpy_deserialisation(transforms):
    msg = _tf_message(transforms)
    got = tf_items_from_cdr(serialize_message(msg))
    want = tf_items(msg)
    assert len(got) == len(want) == len(transforms)
    for g, w in zip(got, want):
        assert g[:3] == w[:3]
        np.testing.assert_array_equal(np.array(g[3] + g[4]), np.array(w[3] + w[4]))


def test_tf_cdr_decoder_refuses_truncated_or_foreign_data():
    data = serialize_message(_tf_message(
        [('map', 'odom', 1, 2, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0))]))
    for bad in (data[:-9], data[:6], b'\x00\x07' + data[2:], b''):
        with pytest.raises((ValueError, struct.error)):
            tf_items_from_cdr(bad)
