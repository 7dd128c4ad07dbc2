"""Fixtures shared by the ROS node tests."""

import os

import pytest
import rclpy
from ros_helpers import SensorRig, wall_world


@pytest.fixture
def context():
    """Yield a fresh rclpy context on a per-process domain (discovery stays on localhost)."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=10 + os.getpid() % 80)
    yield ctx
    rclpy.shutdown(context=ctx)


@pytest.fixture(scope='module')
def wall():
    """Return ros_helpers.wall_world(), built once per test module."""
    return wall_world()


@pytest.fixture
def sensor_rig(wall):
    """Yield make(node_cls, params, frame=None, **kw): a SensorRig on the wall world."""
    rigs = []

    def make(node_cls, params, frame=None, **kw):
        rigs.append(SensorRig(node_cls, wall, params, frame, **kw))
        return rigs[-1]
    yield make
    for rig in rigs:
        rig.close()
