"""Fixtures shared by the ROS node tests."""

import os

import pytest
import rclpy


@pytest.fixture
def context():
    """Yield a fresh rclpy context on a per-process domain (discovery stays on localhost)."""
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=10 + os.getpid() % 80)
    yield ctx
    rclpy.shutdown(context=ctx)
