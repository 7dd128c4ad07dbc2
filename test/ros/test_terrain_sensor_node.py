"""terrain_sensor node over real rclpy + DDS: the sensor's distances, misses, inputs, TF."""

import math
import time

from geometry_msgs.msg import TransformStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile
from ros_helpers import stamp_ns as _ns, subscribed, trigger_scan
from std_msgs.msg import Float64, Float64MultiArray
from tf2_msgs.msg import TFMessage
import transforms3d

from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode
from ubot_lidar_sim.ros.tf_buffer import TransformError
from ubot_lidar_sim_msgs.msg import TerrainSensor
from visualization_msgs.msg import MarkerArray

TIRES = [1.4, 0.8, 0.0, 1.4, -0.8, 0.0, -1.4, 0.8, 0.0, -1.4, -0.8, 0.0]


@pytest.fixture(scope='module')
def flat(flat_world):
    return flat_world


def _transform(parent, child, xyz, rpy_deg):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    w, x, y, z = transforms3d.euler.euler2quat(*np.radians(rpy_deg), 'sxyz')
    t.transform.rotation.x, t.transform.rotation.y = x, y
    t.transform.rotation.z, t.transform.rotation.w = z, w
    return t


def _posed(node, target, source):
    """Return True once the node's TF buffer holds target-from-source at time 0."""
    try:
        node.tf_buffer.lookup(target, source, 0.0)
    except TransformError:
        return False
    return True


class Rig:
    """A terrain_sensor node, a probe node publishing TF and inputs, and one executor."""

    def __init__(self, context, world, params, base_xyz, base_rpy_deg=(0, 0, 0), extra_tf=(),
                 rays=False):
        params = {'world_file': 'flat', 'rate_hz': 2.0, 'tire_positions_m': TIRES, **params}
        self.node = TerrainSensorNode(
            context=context, world=world,
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        self.probe = rclpy.create_node('probe', context=context)
        static = self.probe.create_publisher(
            TFMessage, '/tf_static',
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        static.publish(TFMessage(transforms=[
            _transform('map', 'base_link', base_xyz, base_rpy_deg), *extra_tf]))
        self.msgs, self.rays = [], []
        self.probe.create_subscription(TerrainSensor, 'terrain', self.msgs.append,
                                       qos_profile_sensor_data)
        if rays:
            self.probe.create_subscription(MarkerArray, 'terrain_sensor/rays', self.rays.append,
                                           10)
        self.radii = self.probe.create_publisher(Float64MultiArray, 'terrain_sensor/tire_radii',
                                                 10)
        self.center = self.probe.create_publisher(
            Float64, 'terrain_sensor/vehicle_center_to_front', 10)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        self.spin_until(lambda: self.node.has_subscribers()
                        and (not rays or subscribed(self.node, '/terrain_sensor/rays'))
                        and _posed(self.node, 'map', 'base_link'))

    def spin_until(self, done, timeout_s=5.0):
        end = time.monotonic() + timeout_s
        while not done():
            assert time.monotonic() < end, 'timed out'
            self.executor.spin_once(timeout_sec=0.02)

    def sample(self):
        """Trigger one sample now and return the message that carries it."""
        t0 = self.node.get_clock().now().nanoseconds
        ok, why = trigger_scan(self.node, self.spin_until)
        assert ok, why
        self.spin_until(lambda: self.msgs and _ns(self.msgs[-1]) >= t0)
        return self.msgs[-1]

    def close(self):
        self.executor.shutdown()
        self.probe.destroy_node()
        self.node.destroy_node()


def _xyz(points):
    return np.array([[p.x, p.y, p.z] for p in points])


def test_flat_ground_gives_height_minus_radius_and_hits_on_z0(context, flat):
    rig = Rig(context, flat, {'tire_radii_m': [0.3] * 4}, (2.0, -1.0, 0.5))
    msg = rig.sample()
    rig.close()
    assert msg.header.frame_id == 'map'
    np.testing.assert_array_equal(msg.hit_flg, [0, 1, 1, 1, 1])
    np.testing.assert_array_equal(msg.enabled, [1, 1, 1, 1, 1])
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist, [0.2] * 4, atol=1e-3)
    hits = _xyz(msg.hit_loc)
    np.testing.assert_allclose(hits[1:, 2], 0.0, atol=1e-3)
    # bound: x, y of vertical rays: float64 pose sums, eps64 x 10 m << 1e-6
    np.testing.assert_allclose(hits[1:, :2], np.array(TIRES).reshape(4, 3)[:, :2] + [2.0, -1.0],
                               atol=1e-6)
    # The body ray runs level 0.5 m above the plane: a miss reports the end of its 5 m trace.
    assert msg.veh_hit_dist == math.inf
    # bound: float64 pose / TF arithmetic of exact inputs, eps64 x 10 m << 1e-9
    np.testing.assert_allclose(hits[0], [7.0, -1.0, 0.5], atol=1e-9)
    np.testing.assert_allclose(_xyz(msg.start_loc)[0], [2.0, -1.0, 0.5], atol=1e-9)


def test_ray_markers_show_hits_green_and_the_miss_red_to_its_end(context, flat):
    rig = Rig(context, flat, {}, (0.0, 0.0, 0.5), rays=True)
    msg = rig.sample()
    rig.spin_until(lambda: rig.rays and _ns(rig.rays[-1].markers[0]) >= _ns(msg))
    markers = {m.ns: m for m in rig.rays[-1].markers}
    rig.close()
    assert markers['hits'].header.frame_id == 'map'
    assert len(markers['hits'].points) == 8 and len(markers['misses'].points) == 2
    assert markers['hits'].color.g > 0.5 > markers['hits'].color.r
    assert markers['misses'].color.r > 0.5 > markers['misses'].color.g
    start, end = _xyz(markers['misses'].points)
    # bound: float64 pose / TF arithmetic of exact inputs, eps64 x 10 m << 1e-9
    np.testing.assert_allclose(end - start, [5.0, 0.0, 0.0], atol=1e-9)
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(_xyz(markers['hits'].points[1::2])[:, 2], 0.0, atol=1e-3)


def test_wall_ahead_gives_distance_minus_center_to_front(context):
    d = 3.0
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [50, 50], 'material': 'asphalt'},
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 10, 3],
         'pose': {'xyz': [d + 0.1, 0, 1.5]}, 'material': 'concrete'}]})
    rig = Rig(context, world, {'vehicle_center_to_front_m': 1.2}, (0.0, 0.0, 0.5))
    msg = rig.sample()
    rig.close()
    assert msg.hit_flg[0] == 1
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.veh_hit_dist, d - 1.2, atol=1e-3)
    np.testing.assert_allclose(_xyz(msg.hit_loc)[0], [d, 0.0, 0.5], atol=1e-3)


def test_trace_shorter_than_the_ground_is_a_miss_at_the_trace_end(context, flat):
    rig = Rig(context, flat, {'trace_lengths_m': [5.0, 0.1, 5.0, 5.0, 5.0]}, (0.0, 0.0, 0.5))
    msg = rig.sample()
    rig.close()
    assert msg.hit_flg[1] == 0 and msg.enabled[1] == 1
    assert msg.tire_hit_dist[0] == math.inf
    # bound: float64 pose / TF arithmetic of exact inputs, eps64 x 10 m << 1e-9
    np.testing.assert_allclose(_xyz(msg.hit_loc)[1], [1.4, 0.8, 0.4], atol=1e-9)
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist[1:], [0.5] * 3, atol=1e-3)


def test_disabled_ray_reports_nan(context, flat):
    rig = Rig(context, flat, {'trace_enabled': [False, True, False, True, True]}, (0, 0, 0.5))
    msg = rig.sample()
    rig.close()
    np.testing.assert_array_equal(msg.enabled, [0, 1, 0, 1, 1])
    np.testing.assert_array_equal(msg.hit_flg, [0, 1, 0, 1, 1])
    assert math.isnan(msg.veh_hit_dist) and math.isnan(msg.tire_hit_dist[1])
    assert np.all(np.isnan(_xyz(msg.hit_loc)[[0, 2]]))
    assert np.all(np.isnan(_xyz(msg.start_loc)[[0, 2]]))


def test_external_radii_change_the_next_sample_and_bad_inputs_keep_the_last(context, flat):
    rig = Rig(context, flat, {'tire_radii_source': 'external', 'vehicle_center_source':
                              'external', 'tire_radii_m': [0.3] * 4}, (0.0, 0.0, 0.5))
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(rig.sample().tire_hit_dist, [0.2] * 4, atol=1e-3)
    rig.radii.publish(Float64MultiArray(data=[0.1, 0.2, 0.3, 0.4]))
    rig.spin_until(lambda: rig.node.tire_radii_m[0] == 0.1)
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(rig.sample().tire_hit_dist, [0.4, 0.3, 0.2, 0.1], atol=1e-3)
    rig.radii.publish(Float64MultiArray(data=[0.25, 0.25]))
    rig.radii.publish(Float64MultiArray(data=[0.25, math.nan, 0.25, 0.25]))
    rig.center.publish(Float64(data=math.nan))
    rig.center.publish(Float64(data=0.7))
    rig.spin_until(lambda: rig.node.vehicle_center_to_front_m == 0.7)
    rig.center.publish(Float64(data=math.inf))
    rig.executor.spin_once(timeout_sec=0.2)
    msg = rig.sample()
    rig.close()
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist, [0.4, 0.3, 0.2, 0.1], atol=1e-3)
    assert rig.node.vehicle_center_to_front_m == 0.7


def test_pitched_vehicle_tilts_the_rays(context, flat):
    h, pitch = 1.0, math.radians(10.0)
    rig = Rig(context, flat, {'trace_lengths_m': [10.0] * 5}, (0.0, 0.0, h), (0, 10, 0))
    msg = rig.sample()
    rig.close()
    # Positive pitch turns +x down: the body ray meets the ground h / sin(pitch) from the centre.
    # bound: 1e-4 rel = 0.6 mm at 5.8 m >> the pitched ray float32 error (1e-6 m)
    np.testing.assert_allclose(msg.veh_hit_dist, h / math.sin(pitch), rtol=1e-4)
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(_xyz(msg.hit_loc)[0], [h / math.tan(pitch), 0.0, 0.0], atol=1e-3)
    tires = np.array(TIRES).reshape(4, 3)
    centre_z = h - tires[:, 0] * math.sin(pitch)       # front tires lower, rear higher
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist, centre_z / math.cos(pitch), atol=1e-3)
    hit_x = tires[:, 0] * math.cos(pitch) - centre_z * math.tan(pitch)
    np.testing.assert_allclose(_xyz(msg.hit_loc)[1:, 0], hit_x, atol=1e-3)
    # bound: float64 pose / TF arithmetic of exact inputs, eps64 x 10 m << 1e-9
    np.testing.assert_allclose(_xyz(msg.start_loc)[1:, 2], centre_z, atol=1e-9)


def test_tire_frames_from_tf_and_a_missing_one_is_disabled(context, flat):
    extra = [_transform('base_link', 'wheel_fl', (1.0, 0.5, 0.1), (0, 0, 0))]
    rig = Rig(context, flat, {'tire_frames': ['wheel_fl', 'wheel_fr', '', '']},
              (0.0, 0.0, 0.5), extra_tf=extra)
    rig.spin_until(lambda: _posed(rig.node, 'base_link', 'wheel_fl'))
    msg = rig.sample()
    rig.close()
    # bound: float64 pose / TF arithmetic of exact inputs, eps64 x 10 m << 1e-9
    np.testing.assert_allclose(_xyz(msg.start_loc)[1], [1.0, 0.5, 0.6], atol=1e-9)
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist[0], 0.6, atol=1e-3)
    assert msg.enabled[2] == 0 and math.isnan(msg.tire_hit_dist[1])
    assert rig.node.diagnostics_values()[-1] == ('missing_tire_frames', 'wheel_fr')
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist[2:], [0.5, 0.5], atol=1e-3)


def test_missing_tire_frame_falls_back_to_positions_when_asked(context, flat):
    rig = Rig(context, flat, {'tire_frames': ['', '', '', 'wheel_rr'],
                              'tire_frames_fallback': True}, (0.0, 0.0, 0.5))
    msg = rig.sample()
    rig.close()
    assert msg.enabled[4] == 1 and msg.hit_flg[4] == 1
    # bound: 1 mm, >= 100x the flat-face hit error (test_terrain: < 1e-5 m); TF float64
    np.testing.assert_allclose(msg.tire_hit_dist[3], 0.5, atol=1e-3)
