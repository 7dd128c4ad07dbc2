"""The sensors of a fleet in one process share one /tf intake (ros/intake.py, pipeline/run.py)."""

import argparse
import math
import os
import time

import pytest
import rclpy
from rclpy.qos import QoSProfile
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.pipeline import run as runner
from ubot_lidar_sim.ros.frames import transform

ROBOTS = 2


@pytest.fixture(scope='module')
def fleet():
    """Yield (probe node, the runner's nodes of 2 robots) on a per-process domain."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=10 + (os.getpid() + 53) % 80)
    params = runner.node_parameters(sets=('lidar_3d:compute_process=false',
                                          'lidar_3d:model=geometric'))
    nodes = []
    probe = rclpy.create_node('probe', context=ctx)
    try:
        assert runner._start_nodes(argparse.Namespace(robots=ROBOTS), params, ctx,
                                   {'signal': None}, nodes)
        yield probe, nodes
    finally:
        for node in nodes:
            getattr(node, 'request_stop', lambda: None)()
        for node in nodes + [probe]:
            node.destroy_node()
        rclpy.shutdown(context=ctx)


def _sensors(nodes):
    return [n for n in nodes if hasattr(n, 'intake')]


def _wait(condition, timeout_s=10.0):
    end = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < end:
        time.sleep(0.02)
    return condition()


def test_a_fleets_six_sensors_subscribe_to_tf_once_and_share_one_buffer(fleet):
    probe, nodes = fleet
    sensors = _sensors(nodes)
    assert len(sensors) == 3 * ROBOTS
    assert len({id(n.intake) for n in sensors}) == 1
    assert len({id(n.tf_buffer) for n in sensors}) == 1
    # On the graph: one /tf subscription (and one /tf_static) for the whole process.
    assert _wait(lambda: probe.count_subscribers('/tf') >= 1)
    time.sleep(0.5)     # any other subscription of the process would be on the graph by now
    assert probe.count_subscribers('/tf') == 1
    assert probe.count_subscribers('/tf_static') == 1


def test_a_bad_transform_on_the_shared_intake_is_counted_by_every_sensor(fleet):
    probe, nodes = fleet
    sensors = _sensors(nodes)
    before = [n.stats.counts['tf_rejected'] for n in sensors]
    pub = probe.create_publisher(TFMessage, '/tf', QoSProfile(depth=10))
    assert _wait(lambda: pub.get_subscription_count() >= 1)
    bad = transform(probe.get_clock().now().to_msg(), 'map', 'probe_frame',
                    (math.nan, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
    pub.publish(TFMessage(transforms=[bad]))
    assert _wait(lambda: all(n.stats.counts['tf_rejected'] > b for n, b in zip(sensors, before)))
    probe.destroy_publisher(pub)


def test_a_backward_clock_jump_seen_by_several_sensors_clears_the_shared_buffer_once(fleet):
    _, nodes = fleet
    first, second = _sensors(nodes)[:2]
    intake = first.intake
    before_jump = time.monotonic()          # both sensors' last scan before the jump
    with intake.lock:
        intake.tf_buffer.set_transform('map', 'old', 1e9, (0.0, 0.0, 0.0), (0, 0, 0, 1))
    first.intake.clear(since=before_jump)   # the first sensor to see the jump clears
    with intake.lock:
        assert not intake.tf_buffer.knows('old')
        intake.tf_buffer.set_transform('map', 'new', 1.0, (0.0, 0.0, 0.0), (0, 0, 0, 1))
    second.intake.clear(since=before_jump)  # the same jump: what came since stays
    with intake.lock:
        assert intake.tf_buffer.knows('new')
    second.intake.clear(since=time.monotonic())     # a later jump clears again
    with intake.lock:
        assert not intake.tf_buffer.knows('new')
