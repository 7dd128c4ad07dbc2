"""The demo driver's /tf tree and weather phases arrive over DDS; its scenario maths by hand."""

import math
import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.ros.demo.demo_driver_node import DemoDriverNode
from ubot_lidar_sim.ros.demo.scenario import loop_pose, rain_visibility_m, scenario_at
from ubot_lidar_sim_msgs.msg import Environment


def test_loop_pose_starts_south_of_centre_heading_east_and_closes_after_one_lap():
    x, y, yaw = loop_pose(0.0, 12.0, 2.0)
    # bound: float64 trig of exact inputs, eps64 x 12 m << the atol
    np.testing.assert_allclose([x, y, yaw], [0.0, -12.0, 0.0], atol=1e-12)
    lap_s = 2.0 * math.pi * 12.0 / 2.0
    np.testing.assert_allclose(loop_pose(lap_s / 4.0, 12.0, 2.0)[:2], [12.0, 0.0], atol=1e-9)
    # bound: float64 trig of exact inputs, eps64 x 12 m << the atol
    np.testing.assert_allclose(loop_pose(lap_s, 12.0, 2.0)[:2], [0.0, -12.0], atol=1e-9)


def test_scenario_cycles_clear_rain_fog_smoke_snow_with_the_ramps():
    d = (5.0, 5.0, 5.0, 5.0, 5.0)
    assert scenario_at(1.0, d, 25.0, 50.0)[:3] == ('clear', 0.0, math.inf)
    phase, rain, vis, _, _ = scenario_at(5.0 + 0.75 * 5.0, d, 25.0, 50.0)
    assert phase == 'rain'
    # bound: float64 values copied or the same formula; default rtol 1e-7
    np.testing.assert_allclose(rain, 25.0)
    # 25 mm/h: 1.076 * 25^0.67 = 9.30 dB/km -> 2.141 /km, plus haze 3.912 / 20 km = 0.196 /km
    # -> V = 3.912 / 2.337 = 1.674 km; rain alone: 1.827 km.
    # bound: hand values from 4-digit intermediates (comment): their rounding
    np.testing.assert_allclose(vis, 1674.0, rtol=2e-3)
    np.testing.assert_allclose(rain_visibility_m(25.0), 1827.0, rtol=2e-3)
    # bound: float64 values copied or the same formula; default rtol 1e-7
    np.testing.assert_allclose(rain_visibility_m(25.0, 20000.0), vis)
    assert rain_visibility_m(0.0) == math.inf
    phase, rain, vis, _, _ = scenario_at(10.0 + 2.5, d, 25.0, 50.0)
    assert (phase, rain) == ('fog', 0.0)
    # bound: float64 values copied or the same formula; default rtol 1e-7
    np.testing.assert_allclose(vis, 50.0)
    assert scenario_at(16.0, d, 25.0, 50.0)[0] == 'smoke'
    # Snow ramps to 5 mm/h: dry ITU law at 550 nm 5.525 x 5^1.38 = 50.9 dB/km -> 11.73 /km, plus
    # the haze 0.196 /km -> V = 3.912 / 11.92 = 328 m.
    phase, rain, vis, _, snow = scenario_at(20.0 + 0.75 * 5.0, d, 25.0, 50.0,
                                            snow_max_mm_h=5.0)
    assert (phase, rain, snow) == ('snow', 0.0, 5.0)
    # bound: hand values from 4-digit intermediates (comment): their rounding
    np.testing.assert_allclose(vis, 328.0, rtol=3e-3)
    assert scenario_at(26.0, d, 25.0, 50.0)[0] == 'clear'


def test_tf_tree_and_weather_phases_arrive_over_dds(context):
    driver = DemoDriverNode(context=context, parameter_overrides=[
        Parameter('phase_durations_s', value=[0.4, 0.4, 0.4, 0.4, 0.4]),
        Parameter('speed_m_s', value=3.0)])
    listener = rclpy.create_node('listener', context=context)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    got = {'tf': [], 'static': [], 'env': [], 'phase': []}
    listener.create_subscription(TFMessage, '/tf', got['tf'].append, 100)
    static_qos = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    listener.create_subscription(TFMessage, '/tf_static', got['static'].append, static_qos)
    listener.create_subscription(Environment, 'environment', got['env'].append, latched)
    listener.create_subscription(String, 'demo_driver/phase',
                                 lambda m: got['phase'].append(m.data), latched)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(driver)
    executor.add_node(listener)
    t_end = time.monotonic() + 6.0
    while time.monotonic() < t_end and len(set(got['phase'])) < 4:
        executor.spin_once(timeout_sec=0.05)
    t_tf = time.monotonic()
    n0 = len(got['tf'])
    while time.monotonic() < t_tf + 1.0:
        executor.spin_once(timeout_sec=0.05)
    tf_rate_hz = (len(got['tf']) - n0) / (time.monotonic() - t_tf)
    executor.shutdown()
    listener.destroy_node()
    driver.destroy_node()

    assert got['phase'][:4] == ['clear', 'rain', 'fog', 'smoke']
    assert len(got['static']) == 1
    static = {t.child_frame_id: t for t in got['static'][0].transforms}
    assert set(static) == {'lidar_3d', 'laser'}
    assert all(t.header.frame_id == 'base_link' for t in static.values())
    # bound: float64 values copied or the same formula; default rtol 1e-7
    np.testing.assert_allclose(static['lidar_3d'].transform.translation.z, 1.2)
    edges = {(t.header.frame_id, t.child_frame_id) for m in got['tf'] for t in m.transforms}
    assert edges == {('map', 'odom'), ('odom', 'base_link')}
    base = [t.transform.translation for m in got['tf'] for t in m.transforms
            if t.child_frame_id == 'base_link']
    radius = np.hypot([p.x for p in base], [p.y for p in base])
    # bound: float64 trig of exact inputs, eps64 x 12 m << the atol
    np.testing.assert_allclose(radius, 12.0, atol=1e-9)
    # bound: float64 values copied or the same formula; default rtol 1e-7
    np.testing.assert_allclose([p.z for p in base], 0.4)
    assert 35.0 < tf_rate_hz < 65.0  # ~50 Hz; loose for a loaded CI machine
    rain = max(e.rain_rate_mm_h for e in got['env'])
    assert 0.0 < rain <= 25.0
    assert min(e.visibility_m for e in got['env']) < 1000.0
    smoky = [e for e in got['env'] if len(e.smoke)]
    assert smoky and all(s.radius_m == 2.0 and s.density == 0.6 for s in smoky[0].smoke)
    assert all(e.header.frame_id == 'map' for e in got['env'])
    snowy = [e for e in got['env'] if e.snowfall_rate_mm_h > 0.0]
    assert snowy and all(0.0 < e.snowfall_rate_mm_h <= 5.0 and e.snow_depth_m == 0.05
                         for e in snowy)


def test_parameters_build_the_config_once_ints_coerced_and_only_speed_changes_live(context):
    from ubot_lidar_sim.core.errors import ConfigError
    from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig

    driver = DemoDriverNode(context=context, parameter_overrides=[
        Parameter('phase_durations_s', value=[1, 2, 3, 4, 5]), Parameter('speed_m_s', value=3)])
    try:
        assert driver.config.phase_durations_s == (1.0, 2.0, 3.0, 4.0, 5.0)
        assert driver.config.speed_m_s == 3.0
        assert driver.set_parameters([Parameter('speed_m_s', value=5.0)])[0].successful
        assert driver.config.speed_m_s == 5.0
        refused = driver.set_parameters([Parameter('speed_m_s', value=50.0)])[0]
        assert not refused.successful and 'speed_m_s out of range' in refused.reason
        assert not driver.set_parameters([Parameter('loop_radius_m', value=3.0)])[0].successful
        assert driver.config == DemoDriverConfig(phase_durations_s=(1, 2, 3, 4, 5),
                                                 speed_m_s=5.0)
    finally:
        driver.destroy_node()
    with pytest.raises(ConfigError, match='phase_durations_s: got .*positive sum'):
        DemoDriverNode(context=context, parameter_overrides=[
            Parameter('phase_durations_s', value=[0.0, 0.0, 0.0, 0.0, 0.0])])


def test_weather_cycle_false_publishes_no_environment_and_true_resumes_it_at_run_time(context):
    driver = DemoDriverNode(context=context, parameter_overrides=[
        Parameter('weather_cycle', value=False), Parameter('environment_rate_hz', value=20.0)])
    listener = rclpy.create_node('listener', context=context)
    got = {'tf': [], 'env': []}
    listener.create_subscription(TFMessage, '/tf', got['tf'].append, 100)
    listener.create_subscription(Environment, 'environment', got['env'].append,
                                 QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(driver)
    executor.add_node(listener)

    def spin(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.02)
    try:
        spin(1.5)
        # The loop goes on (/tf) while no weather is published: 20 Hz would give ~30.
        assert len(got['tf']) > 20 and got['env'] == []
        assert driver.set_parameters([Parameter('weather_cycle', value=True)])[0].successful
        spin(1.0)
        assert len(got['env']) >= 5
    finally:
        executor.shutdown()
        listener.destroy_node()
        driver.destroy_node()
