"""lidar_3d node over real rclpy + DDS: layouts, TF poses, motion skew, weather, service, CDR."""

import math
import os
import subprocess
import sys
import time

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
import numpy as np
import pytest
import rclpy
from rclpy.clock import Clock as RosClock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.time import Time as RosTime
from ros_helpers import static_transform
from rosbags.typesys import get_typestore, Stores
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import PointCloud2, PointField
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.conversions import pointcloud2_dtype, pointcloud2_to_array, stamp_to_s
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim_msgs.msg import Environment
from visualization_msgs.msg import MarkerArray

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
WALL_FACE_X = 9.9        # inner face of the wall box centred at x = 10, 0.2 m thick
SENSOR_Z = 1.0           # base_link -> lidar_3d
CONCRETE = 5
CLUTTER = 20            # PRECIPITATION_CLASS of the core
SMALL = {'channels': 8, 'horizontal_samples': 120, 'sub_rays': 1, 'max_range_m': 30.0,
         'noise_enabled': False, 'rate_hz': 10.0, 'world_file': 'flat'}
F32, U8, U16, U32 = PointField.FLOAT32, PointField.UINT8, PointField.UINT16, PointField.UINT32


@pytest.fixture(scope='module')
def world():
    return World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [80, 80], 'material': 'grass'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 40, 12], 'pose': {'xyz': [10, 0, 4]},
         'material': 'concrete'}]})


class Rig:
    """
    One executor with the lidar node under test and a probe node.

    The probe publishes TF (map -> base_link moving along +x at speed_m_s, a static
    base_link -> lidar_3d) and the environment, and subscribes the cloud (decoded and raw).
    """

    def __init__(self, world, params, speed_m_s=0.0, environment=None, sim_time_s=None):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=120 + os.getpid() % 100)
        self.speed = speed_m_s
        self.probe = rclpy.create_node('probe', context=self.ctx)
        # With sim_time_s the probe publishes /clock = sim_time_s + wall seconds elapsed.
        self.sim_start = (sim_time_s, time.monotonic()) if sim_time_s is not None else None
        self.clock_pub = self.probe.create_publisher(Clock, '/clock', 10)
        self.t0_s = self.now().nanoseconds * 1e-9
        self.probe.create_publisher(TFMessage, '/tf_static', LATCHED).publish(TFMessage(
            transforms=[static_transform('base_link', 'lidar_3d', (0.0, 0.0, SENSOR_Z),
                                         self.now().to_msg())]))
        self.tf_pub = self.probe.create_publisher(TFMessage, '/tf', 100)
        self.env_pub = self.probe.create_publisher(Environment, 'environment', LATCHED)
        if environment is not None:
            self.env_pub.publish(environment)
        self.probe.create_timer(0.01, self._publish_tf,
                                clock=RosClock(clock_type=ClockType.STEADY_TIME))
        self._publish_tf()
        self.clouds, self.raw = [], []
        self.probe.create_subscription(PointCloud2, 'points', self.clouds.append, 10)
        self.probe.create_subscription(PointCloud2, 'points', self.raw.append, 10, raw=True)
        self.markers = []
        self.probe.create_subscription(MarkerArray, 'lidar_3d/fov_markers', self.markers.append,
                                       LATCHED)
        self.node = Lidar3DNode(
            context=self.ctx, world=world,
            parameter_overrides=[Parameter(k, value=v) for k, v in {**SMALL, **params}.items()])
        self.executor = SingleThreadedExecutor(context=self.ctx)
        self.executor.add_node(self.probe)
        self.executor.add_node(self.node)

    def base_x(self, t_s):
        return self.speed * (t_s - self.t0_s)

    def now(self):
        if self.sim_start is None:
            return self.probe.get_clock().now()
        sim_s, wall0 = self.sim_start
        return RosTime(nanoseconds=int((sim_s + time.monotonic() - wall0) * 1e9))

    def _publish_tf(self):
        now = self.now()
        if self.sim_start is not None:
            self.clock_pub.publish(Clock(clock=now.to_msg()))
        x = self.base_x(now.nanoseconds * 1e-9)
        self.tf_pub.publish(TFMessage(transforms=[
            static_transform('map', 'base_link', (x, 0.0, 0.0), now.to_msg())]))

    def spin_until(self, done, timeout_s=8.0):
        end = time.monotonic() + timeout_s
        while not done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)
        return done()

    def clouds_after(self, n, timeout_s=8.0):
        start = len(self.clouds)
        assert self.spin_until(lambda: len(self.clouds) >= start + n, timeout_s), \
            f'no cloud within {timeout_s} s: {self.node._stats}'
        return self.clouds[start:start + n]

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.shutdown(context=self.ctx)


@pytest.fixture
def rig_factory(world):
    rigs = []

    def make(params=None, **kw):
        if kw.get('sim_time_s') is not None:
            params = {**(params or {}), 'use_sim_time': True}
        rigs.append(Rig(world, params or {}, **kw))
        return rigs[-1]
    yield make
    for r in rigs:
        r.close()


def fields_of(msg):
    return [(f.name, f.offset, f.datatype) for f in msg.fields], msg.point_step


EXPECTED_LAYOUTS = {
    'full': ([('x', 0, F32), ('y', 4, F32), ('z', 8, F32), ('intensity', 12, F32),
              ('ring', 16, U16), ('time', 18, F32), ('reflectivity', 22, F32),
              ('signal', 26, U16), ('range', 28, F32), ('return_index', 32, U8),
              ('return_count', 33, U8), ('return_flags', 34, U8), ('material', 35, U8),
              ('class_id', 36, U8), ('instance_id', 37, U16)], 39),
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
def test_cloud_has_the_exact_fields_offsets_and_datatypes_of_each_layout(rig_factory, layout):
    rig = rig_factory({'point_layout': layout})
    msg = rig.clouds_after(1)[0]
    assert fields_of(msg) == EXPECTED_LAYOUTS[layout]
    assert msg.header.frame_id == 'lidar_3d' and not msg.is_bigendian
    # ouster: ouster-ros's organised cloud (ouster-ros/src/point_cloud_compose.h), NaN sky cells
    flat = msg.height == 1 and msg.is_dense and msg.width > 100
    assert (msg.height, msg.width, msg.is_dense) == (8, 120, False) if layout == 'ouster' else flat
    assert msg.row_step == msg.width * msg.point_step == len(msg.data) // msg.height


def test_autoware_cloud_reads_back_field_by_field_with_the_documented_types(rig_factory):
    rig = rig_factory({'point_layout': 'autoware', 'return_mode': 'dual_strongest_last'})
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


def test_wall_points_lie_on_the_wall_once_transformed_by_tf_and_rings_match(rig_factory):
    rig = rig_factory()
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


def test_moving_tf_skews_the_cloud_as_the_motion_predicts(rig_factory):
    rig = rig_factory(speed_m_s=5.0)
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


def test_motion_distortion_false_traces_every_beam_from_the_stamp_pose(rig_factory):
    rig = rig_factory({'motion_distortion': False}, speed_m_s=5.0)
    msg = rig.clouds_after(2)[-1]
    pts = pointcloud2_to_array(msg)
    wall = pts[pts['material'] == CONCRETE]
    np.testing.assert_array_equal(wall['time'], 0.0)
    stamp = stamp_to_s(msg.header.stamp)
    # bound: 2 cm at 10 m (noise off): the points' f32 hit bound is 4e-5 m, the rest TF timing
    np.testing.assert_allclose(wall['x'], WALL_FACE_X - rig.base_x(stamp), atol=0.02)
    assert np.ptp(wall['x']) < 0.05


def test_the_geometric_model_publishes_the_wall_exactly_with_zero_intensity(rig_factory):
    rig = rig_factory({'model': 'geometric'}, environment=_environment(30.0))
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


def test_fog_on_the_environment_topic_reduces_the_point_count(rig_factory):
    rig = rig_factory({'max_range_m': 30.0}, environment=_environment(math.inf))

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


def test_bad_environment_is_ignored_and_the_last_good_weather_kept(rig_factory):
    rig = rig_factory(environment=_environment(200.0))
    rig.clouds_after(1)
    rig.env_pub.publish(Environment(rain_rate_mm_h=math.nan, visibility_m=math.inf))
    rig.spin_until(lambda: rig.node._stats['env_rejected'] > 0, 3.0)
    assert rig.node._stats['env_rejected'] == 1
    assert rig.node.weather.visibility_m == 200.0


def _call_sample(rig):
    client = rig.probe.create_client(Trigger, 'lidar_3d/sample')
    assert rig.spin_until(client.service_is_ready, 5.0)
    rig.spin_until(lambda: False, 0.3)   # let TF arrive; no timer: nothing is published
    future = client.call_async(Trigger.Request())
    assert rig.spin_until(future.done, 5.0)
    return future.result()


def test_service_trigger_publishes_one_frame_per_call(rig_factory):
    rig = rig_factory({'trigger': 'service'})
    result = _call_sample(rig)
    assert rig.spin_until(lambda: len(rig.clouds) == 1, 3.0)
    assert result.success and 'published' in result.message
    rig.spin_until(lambda: False, 0.3)
    assert len(rig.clouds) == 1


def test_service_trigger_without_a_transform_fails_with_the_reason(rig_factory):
    rig = rig_factory({'trigger': 'service', 'frame_id': 'nowhere'})
    result = _call_sample(rig)
    assert not result.success
    assert 'no_transform' in result.message and 'nowhere' in result.message
    assert rig.clouds == []


def test_out_of_range_parameter_set_is_refused_and_live_changes_apply(rig_factory):
    rig = rig_factory()
    node = rig.node
    result = node.set_parameters([Parameter('max_range_m', value=1e6)])[0]
    assert not result.successful and 'out of range' in result.reason
    result = node.set_parameters([Parameter('max_range_m', value=0.05)])[0]
    assert not result.successful and 'min_range_m' in result.reason
    result = node.set_parameters([Parameter('max_rays_per_scan', value=100)])[0]
    assert not result.successful and 'max_rays_per_scan' in result.reason
    result = node.set_parameters([Parameter('channels', value=32)])[0]
    assert not result.successful and 'read-only' in result.reason
    assert node.config.max_range_m == 30.0 and node.config.channels == 8
    rig.clouds_after(1)
    t_set = node.get_clock().now().nanoseconds * 1e-9
    assert node.set_parameters([Parameter('max_range_m', value=5.0)])[0].successful
    # The first sweep that starts after the set: the clouds of sweeps begun before it may
    # still arrive (computed, or queued for this executor, on a busy machine).
    later = [m for m in rig.clouds_after(6, timeout_s=15.0) if stamp_to_s(m.header.stamp) > t_set]
    assert later, 'no sweep started after the set'
    pts = pointcloud2_to_array(later[0])
    assert len(pts) > 0 and pts['range'].max() <= 5.0


def test_a_set_of_ignored_objects_not_in_the_world_is_refused_and_the_node_keeps_sweeping(
        rig_factory, world):
    rig = rig_factory()
    node = rig.node
    rig.clouds_after(1)
    result = node.set_parameters([Parameter('ignored_objects', value=['building'])])[0]
    assert not result.successful and "ignored_objects: got 'building'" in result.reason
    assert 'wall' in result.reason and node.config.ignored_objects == ()
    rig.clouds_after(2)         # still sweeping on the value it had
    assert node.set_parameters([Parameter('ignored_objects', value=['wall'])])[0].successful
    pts = pointcloud2_to_array(rig.clouds_after(2)[-1])
    assert len(pts) > 0 and not np.any(pts['material'] == CONCRETE)     # the wall is gone


def test_ignored_objects_not_in_the_world_stop_the_node_at_start_up(world):
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=120 + os.getpid() % 100)
    try:
        with pytest.raises(ConfigError, match="ignored_objects: got 'building'"):
            Lidar3DNode(context=ctx, world=world, parameter_overrides=[
                Parameter(k, value=v) for k, v in {**SMALL, 'ignored_objects': ['building']}
                .items()])
    finally:
        rclpy.shutdown(context=ctx)


def test_fov_markers_are_latched_with_the_preview_colour(rig_factory):
    rig = rig_factory()
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


def test_raw_cdr_decoded_by_rosbags_gives_the_same_points(rig_factory):
    rig = rig_factory()
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


def test_a_scan_that_cannot_keep_up_is_counted_and_reported_not_queued(rig_factory):
    rig = rig_factory({'rate_hz': 500.0})
    diags = []
    rig.probe.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
    rig.clouds_after(3)
    assert rig.spin_until(lambda: any(
        kv.key == 'skipped.overrun' for d in diags for s in d.status for kv in s.values), 4.0)
    values = {kv.key: kv.value for kv in diags[-1].status[0].values}
    assert int(values['skipped.overrun']) > 0
    assert float(values['compute_ms_mean']) > 0.0 and int(values['points_last']) > 0
    for key in ('rate_hz', 'scans_published', 'scans_skipped', 'beams_per_scan'):
        assert key in values


def test_bad_transforms_are_ignored_and_the_node_keeps_publishing(rig_factory):
    rig = rig_factory()
    rig.clouds_after(1)
    bad = static_transform('map', 'base_link', (math.nan, 0.0, 0.0),
                           rig.probe.get_clock().now().to_msg())
    cyc = static_transform('lidar_3d', 'map', (0.0, 0.0, 0.0),
                           rig.probe.get_clock().now().to_msg())
    rig.tf_pub.publish(TFMessage(transforms=[bad, cyc]))
    assert rig.spin_until(lambda: rig.node._stats['tf_rejected'] >= 2, 3.0)
    pts = pointcloud2_to_array(rig.clouds_after(2)[-1])
    assert np.all(np.isfinite(pts['x'])) and len(pts) > 0


def test_use_sim_time_stamps_follow_the_clock_topic(rig_factory):
    rig = rig_factory(sim_time_s=1000.0)
    msg = rig.clouds_after(2)[-1]
    stamp = stamp_to_s(msg.header.stamp)
    assert 1000.0 < stamp < 1010.0
    pts = pointcloud2_to_array(msg)
    # bound: 2 cm at 10 m (noise off): the points' f32 hit bound is 4e-5 m, the rest TF timing
    np.testing.assert_allclose(pts[pts['material'] == CONCRETE]['x'], WALL_FACE_X, atol=0.02)


def test_default_sweeps_are_stamped_whole_periods_apart_under_load(rig_factory):
    # The default config and trigger (a VLP-16-sized sweep, 'timer'), two busy processes on a
    # two-core machine: every stamp lies on the period grid of the first, and a gap longer
    # than one period is a skipped sweep that /diagnostics counts.
    default = LidarConfig()
    hogs = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(2)]
    try:
        rig = rig_factory({name: getattr(default, name) for name in SMALL}, speed_m_s=2.0)
        rig.clouds_after(2, timeout_s=20.0)     # the first sweep loads the compiled kernels
        skipped0 = sum(rig.node._stats['skipped'].values())
        clouds = rig.clouds_after(10, timeout_s=30.0)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    stamps = np.array([c.header.stamp.sec * 10**9 + c.header.stamp.nanosec for c in clouds])
    gaps = np.diff(stamps)
    assert np.all(gaps > 0) and np.all(gaps % 100_000_000 == 0), gaps
    extra = int(gaps.sum() // 100_000_000) - len(gaps)
    assert extra == 0 or sum(rig.node._stats['skipped'].values()) > skipped0, \
        (gaps, rig.node._stats)


@pytest.mark.parametrize('workers', [1, 2])
def test_stream_trigger_publishes_back_to_back_sweeps_of_the_core_blocks(rig_factory, world,
                                                                         workers):
    # workers 2: block j is computed by compute process j % 2 (in the node while they start).
    rig = rig_factory({'trigger': 'stream', 'column_blocks': 4, 'compute_workers': workers},
                      speed_m_s=2.0)
    rig.clouds_after(2)         # the first sweep loads the compiled kernels (~0.5 s): a jump
    if workers > 1:
        assert rig.spin_until(lambda: rig.node._in_process < rig.node.scan_index - 5, 20.0)
    overruns = rig.node._stats['skipped'].get('overrun', 0)
    clouds = rig.clouds_after(5)
    stamps = [c.header.stamp.sec * 10**9 + c.header.stamp.nanosec for c in clouds]
    # Each sweep starts where the one before ended: stamps exactly one period apart, unless the
    # node fell two sweeps behind (a stalled CI machine), which counts as overrun.
    assert np.diff(stamps).tolist() == [100_000_000] * 4 or \
        rig.node._stats['skipped'].get('overrun', 0) > overruns, rig.node._stats
    # The cloud is the core's sweep in 4 column blocks, from the poses TF interpolates (the
    # draws of SMALL's noise-free model do not change its points).
    sim = LidarSimulator(rig.node.config, world, rig.node.materials)

    def pose_at(times_s):
        poses = np.tile(np.eye(4), (len(times_s), 1, 1))
        poses[:, 0, 3] = rig.base_x(np.asarray(times_s))
        poses[:, 2, 3] = SENSOR_Z
        return poses

    core = sim.scan(pose_at, stamps[-1] * 1e-9).points
    got = pointcloud2_to_array(clouds[-1])
    assert len(got) == len(core) > 100
    for name in ('x', 'y', 'z'):
        # bound: float32 points from the same scan: two roundings of x at 10 m (1e-6) << 1e-4
        np.testing.assert_allclose(got[name], core[name], atol=1e-4)
    np.testing.assert_array_equal(got['ring'], core['ring'])


def test_stream_trigger_serves_sample_with_its_next_sweep(rig_factory):
    rig = rig_factory({'trigger': 'stream', 'column_blocks': 2})
    rig.clouds_after(2)
    result = _call_sample(rig)
    assert result.success and 'published' in result.message
