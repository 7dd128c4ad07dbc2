"""TerrainSensor and Environment messages cross real DDS with every field intact."""

import math
import os
import time

os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

from geometry_msgs.msg import Point  # noqa: E402
import pytest  # noqa: E402
import rclpy  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from ubot_lidar_sim_msgs.msg import Environment, SmokeVolume, TerrainSensor  # noqa: E402

pytestmark = pytest.mark.ros


def _terrain():
    msg = TerrainSensor()
    msg.header.frame_id = 'map'
    msg.header.stamp.sec = 12
    msg.header.stamp.nanosec = 345
    msg.hit_flg = [1, 0, 1, 1, 0]
    msg.enabled = [1, 1, 1, 1, 0]
    msg.hit_loc = [Point(x=float(i), y=-float(i), z=0.5 * i) for i in range(4)]
    msg.hit_loc.append(Point(x=math.nan, y=math.nan, z=math.nan))
    msg.start_loc = [Point(x=1.0, y=2.0, z=3.0 + i) for i in range(5)]
    msg.veh_hit_dist = math.inf
    msg.tire_hit_dist = [0.2, 0.25, 0.3, math.nan]
    return msg


def _environment():
    msg = Environment()
    msg.header.frame_id = 'map'
    msg.rain_rate_mm_h = 12.5
    msg.visibility_m = math.inf
    msg.surface_wetness = -1.0
    msg.puddle_depth_m = 0.004
    msg.snowfall_rate_mm_h = 2.5
    msg.snow_depth_m = 0.15
    msg.smoke = [SmokeVolume(center=Point(x=5.0, y=-2.0, z=1.0), radius_m=1.5, density=0.6),
                 SmokeVolume(center=Point(x=0.0, y=0.0, z=0.0), radius_m=0.1, density=1.0)]
    return msg


def _same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def _fields_equal(sent, got):
    for name in sent.get_fields_and_field_types():
        a, b = getattr(sent, name), getattr(got, name)
        if hasattr(a, 'get_fields_and_field_types'):
            _fields_equal(a, b)
        elif hasattr(a, '__len__') and not isinstance(a, str):
            assert len(a) == len(b), name
            for x, y in zip(a, b):
                if hasattr(x, 'get_fields_and_field_types'):
                    _fields_equal(x, y)
                else:
                    assert _same(float(x), float(y)), (name, x, y)
        else:
            assert _same(a, b), (name, a, b)


def test_terrain_and_environment_messages_round_trip_over_dds():
    rclpy.init()
    try:
        node = rclpy.create_node('roundtrip_test')
        qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
        got = {}
        node.create_subscription(TerrainSensor, 'rt_terrain', lambda m: got.update(t=m), qos)
        node.create_subscription(Environment, 'rt_environment',
                                 lambda m: got.update(e=m), qos)
        pub_t = node.create_publisher(TerrainSensor, 'rt_terrain', qos)
        pub_e = node.create_publisher(Environment, 'rt_environment', qos)
        sent_t, sent_e = _terrain(), _environment()
        pub_t.publish(sent_t)
        pub_e.publish(sent_e)
        deadline = time.monotonic() + 10.0
        while len(got) < 2 and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        assert set(got) == {'t', 'e'}, 'messages did not arrive over DDS within 10 s'
        _fields_equal(sent_t, got['t'])
        _fields_equal(sent_e, got['e'])
        assert got['t'].REAR_RIGHT == 4 and got['t'].VEHICLE == 0
        node.destroy_node()
    finally:
        rclpy.shutdown()


def test_message_definitions_match_the_contract():
    assert TerrainSensor.get_fields_and_field_types() == {
        'header': 'std_msgs/Header', 'hit_flg': 'uint8[5]', 'enabled': 'uint8[5]',
        'hit_loc': 'geometry_msgs/Point[5]', 'start_loc': 'geometry_msgs/Point[5]',
        'veh_hit_dist': 'double', 'tire_hit_dist': 'double[4]'}
    assert (TerrainSensor.VEHICLE, TerrainSensor.FRONT_LEFT, TerrainSensor.FRONT_RIGHT,
            TerrainSensor.REAR_LEFT, TerrainSensor.REAR_RIGHT) == (0, 1, 2, 3, 4)
    assert Environment.get_fields_and_field_types() == {
        'header': 'std_msgs/Header', 'rain_rate_mm_h': 'double', 'visibility_m': 'double',
        'surface_wetness': 'double', 'puddle_depth_m': 'double',
        'smoke': 'sequence<ubot_lidar_sim_msgs/SmokeVolume>',
        'snowfall_rate_mm_h': 'double', 'snow_depth_m': 'double',
        'sun_illuminance_klx': 'double'}
    assert SmokeVolume.get_fields_and_field_types() == {
        'center': 'geometry_msgs/Point', 'radius_m': 'double', 'density': 'double'}
