"""Test-wide setup: DDS discovery stays on this machine; the source tree is importable."""

import os
import pathlib
import sys

# Every ROS process a test starts (in-process rclpy or a subprocess) inherits this: no multicast
# leaves through a network interface. A value the user set wins.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

ROOT = pathlib.Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def pytest_configure(config):
    """Register the markers used by the suite."""
    for marker in ('flake8', 'linter', 'pep257', 'ros: needs rclpy and DDS',
                   'soak: long reliability run (make soak)'):
        config.addinivalue_line('markers', marker)
