"""lidar_3d node over real rclpy + DDS: layouts, TF poses, motion skew, weather, markers, CDR."""

import math

from builtin_interfaces.msg import Time
from lidar_node_rig import CLUTTER, CONCRETE, F32, SENSOR_Z, U16, U32, U8, WALL_FACE_X
import numpy as np
import pytest
from rosbags.typesys import get_typestore, Stores

from ubot_lidar_sim.ros.conversions import pointcloud2_dtype, pointcloud2_to_array, stamp_to_s
from ubot_lidar_sim_msgs.msg import Environment


def fields_of(msg):
    return [(f.name, f.offset, f.datatype) for f in msg.fields], msg.point_step


EXPECTED_LAYOUTS = {
    'full': ([('x', 0, F32), ('y', 4, F32), ('z', 8, F32), ('intensity', 12, F32),
              ('ring', 16, U16), ('time', 18, F32), ('reflectivity', 22, F32),
              ('signal', 26, U16), ('range', 28, F32), ('return_index', 32, U8),
              ('return_count', 33, U8), ('return_flags', 34, U8), ('material', 35, U8),
              ('class_id', 36, U16), ('instance_id', 38, U16)], 40),
    'velodyne': ([('x', 0, F32), ('y', 4, F32), ('z', 8, F32), ('intensity', 12, F32),
                  ('ring', 16, U16), ('time', 18, F32)], 22),
    'ouster': ([('x', 0, F32), ('y', 4, F32), ('z', 8, F32), ('intensity', 12, F32),
                ('t', 16, U32), ('reflectivity', 20, U16), ('ring', 22, U16),
                ('ambient', 24, U16), ('range', 26, U32)], 30),
    # Nebula's PointXYZIRCAEDT (docs/nodes.md, "Point layouts").
    'autoware': ([('x', 0, F32), ('y', 4, F32), ('z', 8, F32), ('intensity', 12, U8),
                  ('return_type', 13, U8), ('channel', 14, U16), ('azimuth', 16, F32),
                  ('elevation', 20, F32), ('distance', 24, F32), ('time_stamp', 28, U32)], 32),
}


@pytest.mark.parametrize('layout', ['full', 'velodyne', 'ouster', 'autoware'])
def test_cloud_has_the_exact_fields_offsets_and_datatypes_of_each_layout(lidar_rig, layout):
    rig = lidar_rig({'point_layout': layout})
    msg = rig.clouds_after(1)[0]
    assert fields_of(msg) == EXPECTED_LAYOUTS[layout]
    assert msg.header.frame_id == 'lidar_3d' and not msg.is_bigendian
    # ouster: ouster-ros's organised cloud (ouster-ros/src/point_cloud_compose.h), NaN sky cells
    flat = msg.height == 1 and msg.is_dense and msg.width > 100
    assert (msg.height, msg.width, msg.is_dense) == (8, 120, False) if layout == 'ouster' else flat
    assert msg.row_step == msg.width * msg.point_step == len(msg.data) // msg.height


def test_autoware_cloud_reads_back_field_by_field_with_the_documented_types(lidar_rig):
    rig = lidar_rig({'point_layout': 'autoware', 'return_mode': 'dual_strongest_last'})
    msg = rig.clouds_after(1)[0]
    # Read as a consumer does: a dtype from the documented types and offsets, not the fields.
    doc = np.dtype({'names': ['x', 'y', 'z', 'intensity', 'return_type', 'channel', 'azimuth',
                              'elevation', 'distance', 'time_stamp'],
                    'formats': ['<f4', '<f4', '<f4', 'u1', 'u1', '<u2', '<f4', '<f4', '<f4',
                                '<u4'],
                    'offsets': [0, 4, 8, 12, 13, 14, 16, 20, 24, 28], 'itemsize': 32})
    pts = np.frombuffer(bytes(msg.data), dtype=doc)
    assert len(pts) == msg.width > 100
    np.testing.assert_array_equal(np.unique(pts['channel']), np.arange(8))
    # dual_strongest_last: Nebula's LAST 1, STRONGEST 3, IDENTICAL 6 only.
    assert set(np.unique(pts['return_type'])) <= {1, 3, 6} and 6 in pts['return_type']
    # time_stamp: uint32 ns after the header stamp, within one 0.1 s period.
    assert pts['time_stamp'].min() >= 0 and 90_000_000 <= pts['time_stamp'].max() < 100_000_000
    d = pts['distance'].astype(np.float64)
    # bound: float32 xyz and range of points within 30 m: 1e-5 relative covers both roundings
    np.testing.assert_allclose(np.sqrt(pts['x'].astype(np.float64) ** 2 + pts['y'] ** 2
                                       + pts['z'] ** 2), d, rtol=1e-5)
    az, el = pts['azimuth'].astype(np.float64), pts['elevation'].astype(np.float64)
    assert az.min() >= 0.0 and az.max() <= 2 * math.pi
    # Nebula's convention: x = d cos(el) sin(az), y = d cos(el) cos(az), z = d sin(el).
    # bound: float32 angles (2.4e-7 rad) times 30 m plus float32 xyz at 30 m: 2e-5 m
    np.testing.assert_allclose(d * np.cos(el) * np.sin(az), pts['x'], atol=2e-5)
    # bound: as above, 2e-5 m
    np.testing.assert_allclose(d * np.cos(el) * np.cos(az), pts['y'], atol=2e-5)
    # bound: as above, 2e-5 m
    np.testing.assert_allclose(d * np.sin(el), pts['z'], atol=2e-5)
    wall = pts[np.abs(pts['x'] - WALL_FACE_X) < 0.02]
    assert len(wall) > 20 and wall['intensity'].max() > 0     # the calibrated byte


def test_wall_points_lie_on_the_wall_once_transformed_by_tf_and_rings_match(lidar_rig):
    rig = lidar_rig()
    msg = rig.clouds_after(1)[0]
    pts = pointcloud2_to_array(msg)
    assert np.all(np.isfinite(pts['x']) & np.isfinite(pts['y']) & np.isfinite(pts['z']))
    wall = pts[pts['material'] == CONCRETE]
    assert len(wall) > 50
    # Static TF: world = sensor + (0, 0, SENSOR_Z); the wall face is x = 9.9.
    # bound: 2 cm at 10 m (noise off): the points' f32 hit bound is 4e-5 m, the rest TF timing
    np.testing.assert_allclose(wall['x'], WALL_FACE_X, atol=0.02)
    ground = pts[pts['material'] == 2]
    # bound: 5 cm, flat ground z = 0 (noise off) against the float32 hit and TF at 1 mm
    np.testing.assert_allclose(ground['z'] + SENSOR_Z, 0.0, atol=0.05)
    np.testing.assert_array_equal(np.unique(pts['ring']), np.arange(8))
    # Time offsets: >= 0 (stamp at the first firing) and spanning about one 0.1 s period.
    assert pts['time'].min() >= 0.0
    assert 0.09 <= pts['time'].max() < 0.1


def test_moving_tf_skews_the_cloud_as_the_motion_predicts(lidar_rig):
    rig = lidar_rig(speed_m_s=5.0)
    msg = rig.clouds_after(2)[-1]
    pts = pointcloud2_to_array(msg)
    wall = pts[pts['material'] == CONCRETE]
    stamp = stamp_to_s(msg.header.stamp)
    # Each point is in the sensor frame at its own firing time stamp + time.
    expected = WALL_FACE_X - rig.base_x(stamp + wall['time'].astype(np.float64))
    # bound: 2 cm at 10 m (noise off): the points' f32 hit bound is 4e-5 m, the rest TF timing
    np.testing.assert_allclose(wall['x'], expected, atol=0.02)
    # The wall spans ~1/3 of the sweep: 5 m/s x ~0.035 s of travel, a skew, not noise.
    assert np.ptp(wall['x']) == pytest.approx(5.0 * np.ptp(wall['time']), abs=0.02)
    assert np.ptp(wall['x']) > 0.1


def test_motion_distortion_false_traces_every_beam_from_the_stamp_pose(lidar_rig):
    rig = lidar_rig({'motion_distortion': False}, speed_m_s=5.0)
    msg = rig.clouds_after(2)[-1]
    pts = pointcloud2_to_array(msg)
    wall = pts[pts['material'] == CONCRETE]
    np.testing.assert_array_equal(wall['time'], 0.0)
    stamp = stamp_to_s(msg.header.stamp)
    # bound: 2 cm at 10 m (noise off): the points' f32 hit bound is 4e-5 m, the rest TF timing
    np.testing.assert_allclose(wall['x'], WALL_FACE_X - rig.base_x(stamp), atol=0.02)
    assert np.ptp(wall['x']) < 0.05


def test_the_geometric_model_publishes_the_wall_exactly_with_zero_intensity(lidar_rig):
    rig = lidar_rig({'model': 'geometric'}, environment=_environment(30.0))
    pts = pointcloud2_to_array(rig.clouds_after(1)[0])
    wall = pts[pts['material'] == CONCRETE]
    assert len(wall) > 50            # fog on the environment topic: no effect on this model
    # bound: a face of one float32 x (9.9 rounded: 3.8e-7): Ng and v0 - o exact, t errs by d in
    # float32, two products and a division, 4 F32_EPS / 2 x 10 m = 2.4e-6 m; total < 2e-5
    np.testing.assert_allclose(wall['x'], WALL_FACE_X, atol=2e-5)
    np.testing.assert_array_equal(pts['intensity'], 0.0)
    np.testing.assert_array_equal(pts['return_flags'], 7)     # first, strongest and last


def _environment(visibility_m):
    return Environment(rain_rate_mm_h=0.0, visibility_m=visibility_m, surface_wetness=-1.0,
                       puddle_depth_m=0.0)


def test_fog_on_the_environment_topic_reduces_the_point_count(lidar_rig):
    rig = lidar_rig({'max_range_m': 30.0}, environment=_environment(math.inf))

    def surface_points(clouds):
        # Fog adds near-range clutter points (class 20); count the returns from surfaces.
        return np.mean([np.count_nonzero(pointcloud2_to_array(c)['class_id'] != CLUTTER)
                        for c in clouds])
    clear = surface_points(rig.clouds_after(2))
    rig.env_pub.publish(_environment(15.0))
    rig.spin_until(lambda: rig.node.weather.visibility_m == 15.0, 3.0)
    rig.clouds_after(1)     # a sweep may have started before the message landed
    fog = surface_points(rig.clouds_after(2))
    assert fog < 0.8 * clear


def test_bad_environment_is_ignored_and_the_last_good_weather_kept(lidar_rig):
    rig = lidar_rig(environment=_environment(200.0))
    rig.clouds_after(1)
    rig.env_pub.publish(Environment(rain_rate_mm_h=math.nan, visibility_m=math.inf))
    rig.spin_until(lambda: rig.node.stats.counts['env_rejected'] > 0, 3.0)
    assert rig.node.stats.counts['env_rejected'] == 1
    assert rig.node.weather.visibility_m == 200.0


def test_fov_markers_are_latched_with_the_preview_colour(lidar_rig):
    rig = lidar_rig()
    assert rig.spin_until(lambda: rig.markers, 5.0)
    markers = rig.markers[-1].markers
    ns = {m.ns for m in markers}
    assert {'fov_volume', 'angular_grid', 'distance_grid', 'range_labels'} <= ns
    vol = next(m for m in markers if m.ns == 'fov_volume')
    # bound: float32 message colours of these decimals: approx rel 1e-6 > F32_EPS / 2
    assert (vol.color.r, vol.color.g, vol.color.b) == pytest.approx((0.05, 0.65, 1.0))
    assert vol.color.a == pytest.approx(0.12)
    labels = sorted(m.text for m in markers if m.ns == 'range_labels')
    assert len(labels) == 6 and '30 m' in labels     # every 5 m to max_range_m 30


def test_raw_cdr_decoded_by_rosbags_gives_the_same_points(lidar_rig):
    rig = lidar_rig()
    assert rig.spin_until(lambda: len(rig.raw) >= 1 and len(rig.clouds) >= 1, 8.0)
    store = get_typestore(Stores.ROS2_HUMBLE)
    decoded = store.deserialize_cdr(bytes(rig.raw[0]), 'sensor_msgs/msg/PointCloud2')
    msg = next(c for c in rig.clouds if c.header.stamp == _stamp(decoded))
    assert decoded.header.frame_id == 'lidar_3d' and decoded.width == msg.width
    assert [(f.name, f.offset, f.datatype) for f in decoded.fields] == \
        [(f.name, f.offset, f.datatype) for f in msg.fields]
    ours = pointcloud2_to_array(msg)
    theirs = np.frombuffer(decoded.data.tobytes(), dtype=pointcloud2_dtype(msg))
    np.testing.assert_array_equal(theirs, ours)


def _stamp(decoded):
    return Time(sec=decoded.header.stamp.sec, nanosec=decoded.header.stamp.nanosec)
