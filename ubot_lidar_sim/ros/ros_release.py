"""
The ROS 2 release this process runs on, and the defaults that differ by release.

One place for behaviour that follows the running distro (README "Supported ROS releases"):
the release comes from the installed rclpy's major version (each release branch of
github.com/ros2/rclpy keeps one: humble 3.x, jazzy 7.x, kilted 9.x, rclpy/package.xml), which is
what actually runs; ``ROS_DISTRO`` names a release newer than this table knows (rolling).
"""

import os

from ubot_lidar_sim.ros.rclpy_compat import rclpy_version

#: rclpy major version -> ROS 2 release (rclpy/package.xml of branches humble, jazzy, kilted).
RCLPY_MAJOR_RELEASE = {3: 'humble', 7: 'jazzy', 9: 'kilted'}

#: Whether Nav2 of a release publishes geometry_msgs/TwistStamped on cmd_vel by default (its
#: ``enable_stamped_cmd_vel`` parameter): nav2_util/include/nav2_util/twist_publisher.hpp declares
#: the parameter false up to Jazzy and true from Kilted on (navigation2 branches jazzy and kilted;
#: docs.ros.org/en/kilted/p/nav2_util: TwistPublisher ``is_stamped_ = {true}``). Humble's Nav2
#: publishes Twist only.
NAV2_STAMPED_CMD_VEL = {'humble': False, 'jazzy': False, 'kilted': True}


def release_of(version, ros_distro=None):
    """
    Return the ROS 2 release of an rclpy version string, e.g. '7.1.5' -> 'jazzy'.

    A major version newer than the table gives ``ros_distro`` (the ``ROS_DISTRO`` of a sourced
    ROS), else 'rolling'; an unreadable version gives ``ros_distro`` or 'unknown'.
    """
    try:
        major = int(str(version).split('.')[0])
    except ValueError:
        return ros_distro or 'unknown'
    if major in RCLPY_MAJOR_RELEASE:
        return RCLPY_MAJOR_RELEASE[major]
    if major > max(RCLPY_MAJOR_RELEASE):
        return ros_distro or 'rolling'
    return ros_distro or 'unknown'


def ros_release():
    """Return the running ROS 2 release: 'humble', 'jazzy', 'kilted', 'rolling' or a newer name."""
    return release_of(rclpy_version(), os.environ.get('ROS_DISTRO') or None)


def nav2_stamped_cmd_vel_default(release=None):
    """
    Return True where the release's Nav2 sends TwistStamped on cmd_vel by default, else False.

    ``release``: a release name (default: the running one). Releases after Kilted keep its
    default (TwistStamped).
    """
    return NAV2_STAMPED_CMD_VEL.get(release or ros_release(), True)
