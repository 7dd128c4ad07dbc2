"""ament_python setup of ubot_lidar_sim."""

from glob import glob
import os

from setuptools import find_packages, setup

PACKAGE = 'ubot_lidar_sim'


def tree(directory):
    """Return data_files entries installing every file below directory into share/PACKAGE."""
    entries = {}
    for path in glob(os.path.join(directory, '**', '*'), recursive=True):
        if os.path.isfile(path):
            target = os.path.join('share', PACKAGE, os.path.dirname(path))
            entries.setdefault(target, []).append(path)
    return sorted(entries.items())


setup(
    name=PACKAGE,
    version='0.5.0',
    packages=find_packages(exclude=['test', 'test.*']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE]),
        ('share/' + PACKAGE, ['package.xml']),
    ] + tree('launch') + tree('config'),
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='ubot_lidar_sim developers',
    maintainer_email='dev@ubot-lidar-sim.invalid',
    description='Radiometric LiDAR, 2D scanner and terrain sensor simulation for ROS 2.',
    license='Apache-2.0',
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            # ros/entry.py: a signal while the node's module imports ends it quietly.
            'lidar_3d_node = ubot_lidar_sim.ros.entry:lidar_3d',
            'laser_scan_node = ubot_lidar_sim.ros.entry:laser_scan',
            'terrain_sensor_node = ubot_lidar_sim.ros.entry:terrain_sensor',
            'demo_driver_node = ubot_lidar_sim.ros.entry:demo_driver',
            'base_sim_node = ubot_lidar_sim.ros.entry:base_sim',
        ],
    },
)
