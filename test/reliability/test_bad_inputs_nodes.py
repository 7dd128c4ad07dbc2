"""
Bad inputs through running nodes over DDS: refused with a warning, last good state kept.

Each rig runs a real node and a probe node on one private ROS domain (messages cross DDS,
serialised). After every bad message the node must count it as rejected, keep its pose /
weather / tire radii / parameters, and keep publishing points that are all finite.
"""

import math
import threading
import time

from geometry_msgs.msg import TransformStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from rclpy.qos import DurabilityPolicy, QoSProfile
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Float64, Float64MultiArray
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.config import to_dict
from ubot_lidar_sim.ros.conversions import ns_to_stamp, pointcloud2_to_array
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode
from ubot_lidar_sim_msgs.msg import Environment, SmokeVolume, TerrainSensor

LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
SENSOR_Z_M = 1.5
LIDAR = {'channels': 8, 'horizontal_samples': 90, 'sub_rays': 1, 'max_range_m': 40.0,
         'noise_enabled': False, 'rate_hz': 10.0, 'world_file': 'flat'}
NAN, INF = math.nan, math.inf


@pytest.fixture(scope='module')
def flat(flat_world):
    return flat_world


def _tf(parent, child, stamp_ns, xyz=(0.0, 0.0, SENSOR_Z_M), quat=(0.0, 0.0, 0.0, 1.0)):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.header.stamp = ns_to_stamp(max(int(stamp_ns), 0))
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    q = t.transform.rotation
    q.x, q.y, q.z, q.w = quat
    return t


class Rig:
    """A node under test plus a probe (TF at 50 Hz, outputs recorded), spun in a thread."""

    def __init__(self, node_cls, world, params, domain_id, child='lidar_3d', outputs=()):
        self.ctx = rclpy.Context()
        rclpy.init(context=self.ctx, domain_id=domain_id)
        self.probe = rclpy.create_node('probe', context=self.ctx)
        self.parent, self.child = 'map', child
        self.tf_pub = self.probe.create_publisher(TFMessage, '/tf', 100)
        self.env_pub = self.probe.create_publisher(Environment, 'environment', LATCHED)
        self.received = {}
        for topic, msg_type in outputs:
            self.received[topic] = []
            self.probe.create_subscription(msg_type, topic, self.received[topic].append, 10)
        self.probe.create_timer(0.02, self.publish_tf)
        self.publish_tf()
        self.node = node_cls(context=self.ctx, world=world,
                             parameter_overrides=[Parameter(k, value=v)
                                                  for k, v in params.items()])
        self.executor = MultiThreadedExecutor(num_threads=3, context=self.ctx)
        self.executor.add_node(self.probe)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def now_ns(self):
        return self.probe.get_clock().now().nanoseconds

    def publish_tf(self):
        if self.parent is not None:
            self.tf_pub.publish(TFMessage(transforms=[_tf(self.parent, self.child,
                                                          self.now_ns())]))

    def wait(self, predicate, timeout_s=5.0):
        end = time.monotonic() + timeout_s
        while not predicate() and time.monotonic() < end:
            time.sleep(0.01)
        return predicate()

    def next_messages(self, topic, n, timeout_s=6.0):
        start = len(self.received[topic])
        assert self.wait(lambda: len(self.received[topic]) >= start + n, timeout_s), \
            f'no {topic} within {timeout_s} s: {self.node.stats.counts}'
        return self.received[topic][start:start + n]

    def close(self):
        self.executor.shutdown(timeout_sec=2.0)
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.shutdown(context=self.ctx)
        self.thread.join(2.0)


@pytest.fixture
def lidar_rig(flat, domain):
    rig = Rig(Lidar3DNode, flat, LIDAR, domain, outputs=[('points', PointCloud2)])
    yield rig
    rig.close()


def _assert_ground_cloud(msg):
    pts = pointcloud2_to_array(msg)
    assert len(pts) > 100
    for name in pts.dtype.names:
        assert np.all(np.isfinite(pts[name].astype(np.float64))), name
    # Flat ground at z = 0 seen from z = 1.5: every point lies 1.5 m below the sensor.
    # bound: 2 cm, flat ground (noise off) against the float32 hit
    np.testing.assert_allclose(pts['z'], -SENSOR_Z_M, atol=0.02)
    return len(pts)


def _bad_transforms(now_ns):
    return {
        'nan_translation': _tf('map', 'lidar_3d', now_ns, xyz=(NAN, 0.0, 1.5)),
        'inf_translation': _tf('map', 'lidar_3d', now_ns, xyz=(0.0, INF, 1.5)),
        'zero_quaternion': _tf('map', 'lidar_3d', now_ns, quat=(0.0, 0.0, 0.0, 0.0)),
        'non_unit_quaternion': _tf('map', 'lidar_3d', now_ns, quat=(0.0, 0.0, 0.0, 2.0)),
        'stamp_1_h_in_the_future': _tf('map', 'lidar_3d', now_ns + 3600 * 10 ** 9,
                                       xyz=(50.0, 0.0, 1.5)),
        'stamp_1_h_in_the_past': _tf('map', 'lidar_3d', now_ns - 3600 * 10 ** 9,
                                     xyz=(50.0, 0.0, 1.5)),
        'cycle_lidar_to_map': _tf('lidar_3d', 'map', now_ns),
        'slash_frame_id': _tf('/map', 'lidar_3d', now_ns),
    }


def test_bad_transforms_over_dds_are_rejected_one_by_one_and_the_pose_is_kept(lidar_rig, capfd):
    rig = lidar_rig
    n_good = _assert_ground_cloud(rig.next_messages('points', 2)[-1])
    bad = _bad_transforms(rig.now_ns())
    for name, ts in bad.items():
        before = rig.node.stats.counts['tf_rejected']
        rig.tf_pub.publish(TFMessage(transforms=[ts]))
        assert rig.wait(lambda: rig.node.stats.counts['tf_rejected'] == before + 1, 3.0), name
    # A message mixing a good and a bad transform: the good one still lands.
    before = rig.node.stats.counts['tf_rejected']
    rig.tf_pub.publish(TFMessage(transforms=[
        _tf('map', 'odom', rig.now_ns(), xyz=(1.0, 0.0, 0.0)),
        _tf('map', 'lidar_3d', rig.now_ns(), xyz=(NAN, NAN, NAN))]))
    assert rig.wait(lambda: rig.node.stats.counts['tf_rejected'] == before + 1, 3.0)
    assert rig.wait(lambda: 'odom' in rig.node.tf_buffer.frames(), 2.0)
    # Scans go on from the good pose: finite points on the ground, as many as before.
    time.sleep(0.15)
    for msg in rig.next_messages('points', 3):
        # bound: a count of ground beams, not a float: a 1 m shift of odom changes only the
        # beams near the plane's edge or max range; 5 % of the cloud bounds them
        assert _assert_ground_cloud(msg) == pytest.approx(n_good, rel=0.05)
    assert rig.node.stats.counts['skipped'].get('error', 0) == 0
    err = capfd.readouterr().err
    assert 'transform(s) ignored' in err or 'in the future ignored' in err


def test_frame_that_disappears_stops_the_scans_until_it_comes_back(lidar_rig):
    rig = lidar_rig
    rig.next_messages('points', 1)
    rig.parent = 'nowhere'          # lidar_3d now hangs off a tree without map
    time.sleep(0.3)
    n = len(rig.received['points'])
    time.sleep(1.0)
    assert len(rig.received['points']) <= n + 0
    assert rig.node.stats.counts['skipped'].get('no_transform', 0) > 3
    assert 'no_transform' in rig.node.stats.counts['last_skip']
    rig.parent = 'map'
    for msg in rig.next_messages('points', 2, timeout_s=5.0):
        _assert_ground_cloud(msg)


def _env(rain=0.0, vis=INF, wet=-1.0, puddle=0.0, smoke=()):
    msg = Environment(rain_rate_mm_h=rain, visibility_m=vis, surface_wetness=wet,
                      puddle_depth_m=puddle)
    msg.header.frame_id = 'map'
    msg.smoke = [SmokeVolume(radius_m=r, density=d) for r, d in smoke]
    return msg


BAD_ENVIRONMENTS = {
    'rain_nan': _env(rain=NAN), 'rain_negative': _env(rain=-3.0), 'rain_inf': _env(rain=INF),
    'rain_1e9': _env(rain=1e9), 'visibility_0': _env(vis=0.0), 'visibility_nan': _env(vis=NAN),
    'wetness_nan': _env(wet=NAN), 'puddle_negative': _env(puddle=-1.0),
    'smoke_negative_radius': _env(smoke=[(-1.0, 0.5)]),
    'smoke_density_nan': _env(smoke=[(1.0, NAN)]),
}


def test_bad_environment_over_dds_is_rejected_and_the_last_weather_kept(lidar_rig, capfd):
    rig = lidar_rig
    rig.env_pub.publish(_env(rain=4.0, vis=900.0))
    assert rig.wait(lambda: rig.node.weather.visibility_m == 900.0, 3.0)
    for name, msg in BAD_ENVIRONMENTS.items():
        before = rig.node.stats.counts['env_rejected']
        rig.env_pub.publish(msg)
        assert rig.wait(lambda: rig.node.stats.counts['env_rejected'] == before + 1, 3.0), name
        assert (rig.node.weather.rain_mm_h, rig.node.weather.visibility_m) == (4.0, 900.0)
    for msg in rig.next_messages('points', 2):
        pts = pointcloud2_to_array(msg)
        for field in pts.dtype.names:
            assert np.all(np.isfinite(pts[field].astype(np.float64)))
    assert 'keeping the last good weather' in capfd.readouterr().err


def _set_remote(rig, params):
    client = AsyncParameterClient(rig.probe, 'lidar_3d')
    assert client.wait_for_services(5.0)
    future = client.set_parameters(params)
    assert rig.wait(future.done, 5.0)
    return future.result().results


REFUSED_SETS = {
    'max_range_out_of_range': (Parameter('max_range_m', value=1e6), 'out of range'),
    'max_range_below_min': (Parameter('max_range_m', value=0.05), 'min_range_m'),
    'max_range_wrong_type': (Parameter('max_range_m', value='far'), 'type'),
    'noise_enabled_as_int': (Parameter('noise_enabled', value=1), 'type'),
    'return_mode_unknown': (Parameter('return_mode', value='all'), 'return_mode'),
    'channels_read_only': (Parameter('channels', value=32), 'read-only'),
    'range_noise_negative': (Parameter('range_noise_std_m', value=-0.1), 'out of range'),
    'detection_at_spec_nan': (Parameter('detection_at_spec', value=NAN), 'detection_at_spec'),
}


def test_bad_parameter_sets_over_the_service_are_refused_and_the_node_unchanged(lidar_rig):
    rig = lidar_rig
    rig.next_messages('points', 1)
    config_before = to_dict(rig.node.config)
    names = [p.name for p, _ in REFUSED_SETS.values()]
    values_before = [p.value for p in rig.node.get_parameters(names)]
    for case, (param, reason) in REFUSED_SETS.items():
        result = _set_remote(rig, [param])[0]
        assert not result.successful, case
        assert reason in result.reason, (case, result.reason)
    assert to_dict(rig.node.config) == config_before
    assert [p.value for p in rig.node.get_parameters(names)] == values_before
    # Still scanning, and a good change still applies.
    assert _set_remote(rig, [Parameter('max_range_m', value=3.0)])[0].successful
    assert rig.wait(lambda: rig.node.config.max_range_m == 3.0, 2.0)


@pytest.fixture
def terrain_rig(flat, domain):
    params = {'world_file': 'flat', 'rate_hz': 20.0, 'tire_radii_source': 'external',
              'vehicle_center_source': 'external'}
    rig = Rig(TerrainSensorNode, flat, params, domain, child='base_link',
              outputs=[('terrain', TerrainSensor)])
    yield rig
    rig.close()


def test_bad_external_tire_radii_are_refused_and_the_last_good_radii_kept(terrain_rig, capfd):
    rig = terrain_rig
    radii_pub = rig.probe.create_publisher(Float64MultiArray, 'terrain_sensor/tire_radii', 10)
    centre_pub = rig.probe.create_publisher(Float64, 'terrain_sensor/vehicle_center_to_front',
                                            10)
    assert rig.wait(lambda: radii_pub.get_subscription_count() > 0, 3.0)
    radii_pub.publish(Float64MultiArray(data=[0.4, 0.4, 0.4, 0.4]))
    assert rig.wait(lambda: list(rig.node.tire_radii_m) == [0.4] * 4, 3.0)
    bad = {'three_values': [0.4] * 3, 'five_values': [0.4] * 5, 'nan': [0.4, NAN, 0.4, 0.4],
           'negative': [-0.4] * 4, 'inf': [INF] * 4, 'empty': []}
    for name, data in bad.items():
        radii_pub.publish(Float64MultiArray(data=data))
    time.sleep(0.5)
    np.testing.assert_array_equal(rig.node.tire_radii_m, [0.4] * 4)
    err = capfd.readouterr().err
    assert 'tire_radii: got' in err and 'keeping the last good value' in err
    for value in (NAN, -1.0, INF):
        centre_pub.publish(Float64(data=value))
    time.sleep(0.5)
    assert rig.node.vehicle_center_to_front_m == 0.0
    # Base at z = 1.5 over flat ground, tire centres at z = 0 in base: 1.5 - 0.4 = 1.1 m.
    for msg in rig.next_messages('terrain', 3):
        # bound: vertical ray on z = 0 of exact vertices: t exact (test_world)
        np.testing.assert_allclose(msg.tire_hit_dist, 1.1, atol=1e-6)
