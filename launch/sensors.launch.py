"""
Start the three sensor nodes (lidar_3d, laser_scan, terrain_sensor) and, optionally, rviz2.

ros2 launch ubot_lidar_sim sensors.launch.py preset:=velodyne_vlp16 world_file:=demo
Poses come from /tf (world_frame -> the sensor frames): run the demo driver or your robot.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def _config(name):
    return PathJoinSubstitution([FindPackageShare('ubot_lidar_sim'), 'config', name])


def generate_launch_description():
    """Return the launch description of the sensors."""
    world_file = LaunchConfiguration('world_file')
    use_sim_time = LaunchConfiguration('use_sim_time')
    shared = {'world_file': world_file, 'use_sim_time': use_sim_time}
    return LaunchDescription([
        DeclareLaunchArgument('preset', default_value='velodyne_vlp16',
                              description='lidar_3d preset (python -m ubot_lidar_sim presets)'),
        DeclareLaunchArgument('world_file', default_value='demo',
                              description="World YAML path, or 'demo' / 'flat'"),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='Follow /clock instead of the wall clock'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace of the sensor nodes'),
        DeclareLaunchArgument('rviz', default_value='false', description='Start rviz2'),
        Node(package='ubot_lidar_sim', executable='lidar_3d_node', name='lidar_3d',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[_config('lidar_3d.yaml'),
                         {**shared, 'preset': LaunchConfiguration('preset')}]),
        Node(package='ubot_lidar_sim', executable='laser_scan_node', name='laser_scan',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[_config('laser_scan.yaml'), shared]),
        Node(package='ubot_lidar_sim', executable='terrain_sensor_node', name='terrain_sensor',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[_config('terrain_sensor.yaml'), shared]),
        Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
             arguments=['-d', _config('ubot_lidar_sim.rviz')],
             parameters=[{'use_sim_time': use_sim_time}],
             condition=IfCondition(LaunchConfiguration('rviz'))),
    ])
