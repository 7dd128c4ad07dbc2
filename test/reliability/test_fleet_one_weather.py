"""A fleet's graph has one weather, and robot 1's status monitor hears it."""

import os
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from ubot_lidar_sim.pipeline.fleet import robot_namespace, robot_parameters
from ubot_lidar_sim.ros.demo.demo_driver_node import DemoDriverNode
from ubot_lidar_sim.ros.demo.monitor import Monitor
from ubot_lidar_sim_msgs.msg import Environment

ROBOTS = 3
FAST = [0.4, 0.4, 0.4, 0.4, 0.4]    # a whole weather cycle in 2 s


@pytest.fixture
def context():
    """Yield a fresh rclpy context on a per-process domain (discovery stays on localhost)."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=10 + (os.getpid() + 37) % 80)
    yield ctx
    rclpy.shutdown(context=ctx)


def _fleet_drivers(context, executor):
    """Start the drivers of a fleet, each a little after the one before (as a launch does)."""
    drivers = []
    for k in range(1, ROBOTS + 1):
        given = {**robot_parameters(k, ROBOTS)['demo_driver'], 'phase_durations_s': FAST}
        drivers.append(DemoDriverNode(
            context=context, namespace=robot_namespace(k, ROBOTS),
            parameter_overrides=[Parameter(key, value=v) for key, v in given.items()]))
        executor.add_node(drivers[-1])
        t_end = time.monotonic() + 0.3
        while time.monotonic() < t_end:
            executor.spin_once(timeout_sec=0.05)
    return drivers


def _weather(msg):
    smoke = tuple((round(v.center.x, 3), round(v.center.y, 3)) for v in msg.smoke)
    return (round(msg.rain_rate_mm_h, 6), round(msg.visibility_m, 3),
            round(msg.snowfall_rate_mm_h, 6), smoke)


def test_a_fleets_drivers_play_one_weather_cycle_without_flicker(context):
    executor = SingleThreadedExecutor(context=context)
    listener = rclpy.create_node('weather_listener', context=context)
    got = []
    listener.create_subscription(Environment, '/environment', got.append, 100)
    executor.add_node(listener)
    nodes = _fleet_drivers(context, executor)
    got.clear()
    t_end = time.monotonic() + 4.0      # two cycles
    while time.monotonic() < t_end:
        executor.spin_once(timeout_sec=0.05)
    seq = [_weather(m) for m in got]
    # A flicker: a value that comes back at once after another one (A, B, A).
    flickers = [i for i in range(2, len(seq)) if seq[i] == seq[i - 2] != seq[i - 1]]
    assert len(seq) > 10 and not flickers, [seq[i - 2:i + 1] for i in flickers[:3]]
    for node in [*nodes, listener]:
        executor.remove_node(node)
        node.destroy_node()


def test_robot1s_monitor_hears_the_fleets_weather(context):
    executor = SingleThreadedExecutor(context=context)
    monitor = Monitor(context, False, 'map', None, robot_namespace(1, ROBOTS))
    executor.add_node(monitor)
    nodes = _fleet_drivers(context, executor)
    t_end = time.monotonic() + 10.0
    while time.monotonic() < t_end and monitor.weather is None:
        executor.spin_once(timeout_sec=0.05)
    assert monitor.weather is not None
    for node in [*nodes, monitor]:
        executor.remove_node(node)
        node.destroy_node()
