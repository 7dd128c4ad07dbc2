"""Fixtures shared by the ROS node tests."""

import os

from lidar_node_rig import Rig, wall_world_10m
import pytest
import rclpy
from ros_helpers import closing_factory, SensorRig, wall_world


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
    yield from closing_factory(
        lambda node_cls, params, frame=None, **kw: SensorRig(node_cls, wall, params, frame, **kw))


@pytest.fixture(scope='module')
def lidar_world():
    """Return lidar_node_rig.wall_world_10m(), built once per test module."""
    return wall_world_10m()


@pytest.fixture
def lidar_rig(lidar_world):
    """Yield make(params=None, **kw): a lidar_node_rig.Rig on lidar_world."""
    def build(params=None, **kw):
        if kw.get('sim_time_s') is not None:
            params = {**(params or {}), 'use_sim_time': True}
        return Rig(lidar_world, params or {}, **kw)
    yield from closing_factory(build)
