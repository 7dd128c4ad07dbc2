"""Test-wide setup: DDS discovery on this machine, the source tree importable, shared worlds."""

import os
import pathlib
import signal
import sys

import pytest
from release_part import depends_on_release, MARKER

# Every ROS process a test starts (in-process rclpy or a subprocess) inherits this: no multicast
# leaves through a network interface. A value the user set wins.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

# A suite started in the background of a non-interactive shell inherits SIGINT ignored (bash
# does so to asynchronous commands) and passes it to every process a test starts, so the Ctrl-C
# tests would see no Ctrl-C: take Python's default handler back (an exec resets it to default).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_configure(config):
    """Register the markers used by the suite."""
    for marker in ('flake8', 'linter', 'pep257', 'ros: needs rclpy and DDS',
                   'soak: long reliability run (make soak)',
                   f'{MARKER}: depends on the ROS release (test/release_part.py; set by rule)'):
        config.addinivalue_line('markers', marker)


def pytest_collection_modifyitems(config, items):
    """Mark the tests of every release-dependent module (the part .ci/run re-runs on Jazzy)."""
    for item in items:
        if depends_on_release(str(item.path)):
            item.add_marker(MARKER)


# Shared read-only fixtures. A test that changes its world or table builds its own.

@pytest.fixture(scope='session')
def materials():
    """Return MaterialTable.load(), the shipped material table, loaded once per session."""
    from ubot_lidar_sim.core.world.materials import MaterialTable
    return MaterialTable.load()


@pytest.fixture(scope='session')
def demo_world(materials):
    """Return World.load('demo', materials), loaded once per session."""
    from ubot_lidar_sim.core.world.world import World
    return World.load('demo', materials)


@pytest.fixture(scope='session')
def flat_world(materials):
    """Return World.load('flat', materials), loaded once per session."""
    from ubot_lidar_sim.core.world.world import World
    return World.load('flat', materials)
