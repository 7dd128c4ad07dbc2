"""Sensor physics core: pure numpy and open3d, no ROS imports anywhere below this package."""
