"""
The running ROS 2 release and the defaults that follow it (ros/ros_release.py).

``make test`` runs on Kilted and ``make test ROS_DISTRO=jazzy`` on Jazzy: the same tests, all of
them on both. RELEASE_SPECIFIC lists those whose expectation or code path depends on the
release, and why; every other test expects the same on both.
"""

import ast
from pathlib import Path

import pytest
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data,
                       ReliabilityPolicy)

from ubot_lidar_sim.ros.rclpy_compat import rclpy_version
from ubot_lidar_sim.ros.ros_release import (nav2_stamped_cmd_vel_default, release_of,
                                            ros_release)

TEST_DIR = Path(__file__).resolve().parents[1]

#: test file (below test/) -> {test function: why its expectation or code path differs by release}
RELEASE_SPECIFIC = {
    'ros/test_ros_release.py': {
        'test_the_running_release_is_the_one_of_the_installed_rclpy':
            'the release is read from the installed rclpy (9.x Kilted, 7.x Jazzy)',
        'test_the_running_nav2_default_follows_the_running_release':
            "Nav2's default cmd_vel type: Twist on Jazzy, TwistStamped on Kilted",
    },
    'reliability/test_bad_inputs_nodes.py': {
        'test_bad_environment_over_dds_is_rejected_and_the_last_weather_kept':
            "one environment message arrives through two subscriptions; rclpy 9's message "
            "info names the publisher (publisher_gid), rclpy 7's does not: ros/intake.py "
            'keys it by source timestamp and sequence number there',
    },
    'ros/test_node_messages.py': {
        'test_node_says_it_started_waits_for_tf_once_then_its_first_sweep':
            'the node executable starts through rclpy_compat.initialized, whose code path '
            'differs by release',
    },
    'ros/test_rclpy_compat.py': {
        'test_initialized_yields_an_ok_default_context_and_shuts_it_down_after':
            "rclpy.init's own context manager on Kilted, init + try_shutdown on Jazzy",
        'test_every_rclpy_internal_the_package_uses_still_exists':
            'checks each internal on the running rclpy; ABSENT entries of that release '
            'are checked to be absent',
    },
}


def test_every_release_specific_test_exists():
    for rel, names in RELEASE_SPECIFIC.items():
        tree = ast.parse((TEST_DIR / rel).read_text())
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert set(names) <= defined, (rel, set(names) - defined)


def test_sensor_data_qos_is_rmws_on_the_running_release():
    # rmw/include/rmw/qos_profiles.h rmw_qos_profile_sensor_data (rmw 7.3 Jazzy, 7.8 Kilted):
    # best effort, keep last 5, volatile: the same on both releases.
    assert qos_profile_sensor_data.reliability == ReliabilityPolicy.BEST_EFFORT
    assert qos_profile_sensor_data.history == HistoryPolicy.KEEP_LAST
    assert qos_profile_sensor_data.depth == 5
    assert qos_profile_sensor_data.durability == DurabilityPolicy.VOLATILE


@pytest.mark.parametrize('version, release', [
    ('3.3.15', 'humble'), ('7.1.5', 'jazzy'), ('9.1.2', 'kilted'), ('10.0.1', 'rolling')])
def test_rclpy_major_version_names_its_release(version, release):
    assert release_of(version) == release


def test_a_newer_rclpy_takes_the_sourced_ros_distro_name():
    assert release_of('11.0.0', 'lyrical') == 'lyrical'
    assert release_of('unknown', None) == 'unknown'


def test_the_running_release_is_the_one_of_the_installed_rclpy():
    assert ros_release() == release_of(rclpy_version())
    assert ros_release() in ('jazzy', 'kilted')      # the two releases make test runs on


@pytest.mark.parametrize('release, stamped', [
    ('humble', False), ('jazzy', False), ('kilted', True), ('rolling', True)])
def test_nav2_sends_twiststamped_by_default_from_kilted_on(release, stamped):
    assert nav2_stamped_cmd_vel_default(release) is stamped


def test_the_running_nav2_default_follows_the_running_release():
    assert nav2_stamped_cmd_vel_default() is (ros_release() == 'kilted')


def test_what_makes_humble_unsupported_is_still_used():
    # README "Supported ROS releases": Humble's rclpy 3.3 lacks rclpy.event_handler (it has
    # rclpy.qos_event, branch humble of github.com/ros2/rclpy) and
    # Node._declare_parameter_common; once the package no longer uses them, revisit Humble.
    from ubot_lidar_sim.ros.rclpy_compat import ABSENT

    package = Path(__file__).resolve().parents[2] / 'ubot_lidar_sim'
    modules = set()
    for path in package.rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.add(node.module)
    assert 'rclpy.event_handler' in modules
    assert ABSENT[('rclpy.node.Node', '_declare_parameter_common')] == ('humble',)
