"""The environment topic as ROS users publish it, and use_sim_time while no /clock arrives."""

import math
import os

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
import pytest
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_srvs.srv import Trigger

from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim_msgs.msg import Environment

SMALL = {'channels': 4, 'horizontal_samples': 60, 'sub_rays': 1, 'world_file': 'flat'}
DOMAIN = 100
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture
def rig(sensor_rig):
    def make(params=None, **kw):
        return sensor_rig(Lidar3DNode, {**SMALL, **(params or {})}, domain_id=DOMAIN, **kw)
    return make


def _rain(mm_h):
    return Environment(rain_rate_mm_h=float(mm_h), visibility_m=math.inf, surface_wetness=-1.0)


def _latest_status(diags, name):
    found = [s for d in diags for s in d.status if s.name == name]
    return found[-1] if found else None


def test_a_default_qos_publisher_in_the_root_namespace_sets_a_namespaced_sensors_weather(rig):
    r = rig(namespace='/front')
    diags = r.subscribe(DiagnosticArray, '/diagnostics')
    # Reliable + volatile, depth 10: what `ros2 topic pub /environment ...` offers.
    pub = r.probe.create_publisher(Environment, '/environment', 10)
    assert r.spin_until(lambda: pub.get_subscription_count() > 0)
    pub.publish(_rain(20.0))

    def rain_shown():
        status = _latest_status(diags, 'front/lidar_3d: sensor')
        return status is not None and {kv.key: kv.value for kv in status.values}.get(
            'rain_mm_h') == '20'
    # /diagnostics comes at 1 Hz; a loaded machine delays its timer, not what it reports.
    assert r.spin_until(rain_shown, 20.0)


def test_a_late_sensor_takes_each_latched_weather_once(rig):
    # Two transient-local publishers that published before the sensor started.
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=DOMAIN + os.getpid() % 60)
    weather = rclpy.create_node('weather', context=ctx)
    try:
        weather.create_publisher(Environment, '/environment', LATCHED).publish(_rain(7.0))
        weather.create_publisher(Environment, '/environment', LATCHED).publish(_rain(math.nan))
        r = rig()
        assert r.spin_until(lambda: r.node.weather.rain_mm_h == 7.0)
        r.spin_until(lambda: False, 1.0)
        # Both subscriptions (transient-local and volatile) match both publishers: the bad
        # message arrives twice and counts once; the good one stays.
        assert r.node.stats.counts['env_rejected'] == 1
        assert r.node.weather.rain_mm_h == 7.0
    finally:
        weather.destroy_node()
        rclpy.shutdown(context=ctx)


def test_use_sim_time_without_clock_says_so_on_diagnostics_and_to_sample(rig):
    r = rig({'use_sim_time': True})
    diags = r.subscribe(DiagnosticArray, '/diagnostics')
    assert r.spin_until(lambda: _latest_status(diags, 'lidar_3d: sensor') is not None, 4.0)
    status = _latest_status(diags, 'lidar_3d: sensor')
    assert status.level == DiagnosticStatus.WARN
    assert 'waiting for /clock' in status.message
    sample = r.call(Trigger, 'sample')
    assert not sample.success and 'waiting for /clock' in sample.message
