"""The running ROS 2 release and the defaults that follow it (ros/ros_release.py)."""

import pytest

from ubot_lidar_sim.ros.rclpy_compat import rclpy_version
from ubot_lidar_sim.ros.ros_release import (nav2_stamped_cmd_vel_default, release_of,
                                            ros_release)


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
