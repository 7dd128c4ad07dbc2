"""
The demo: the three sensors on the demo world plus the demo driver (loop and weather).

ros2 launch ubot_lidar_sim demo.launch.py rviz:=true
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    """Return the launch description of the demo."""
    share = FindPackageShare('ubot_lidar_sim')
    args = ('preset', 'world_file', 'use_sim_time', 'namespace', 'rviz')
    return LaunchDescription([
        DeclareLaunchArgument('preset', default_value='velodyne_vlp16',
                              description='lidar_3d preset (python -m ubot_lidar_sim presets)'),
        DeclareLaunchArgument('world_file', default_value='demo',
                              description="World YAML path, or 'demo' / 'flat'"),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='Follow /clock instead of the wall clock'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace of the nodes'),
        DeclareLaunchArgument('rviz', default_value='true', description='Start rviz2'),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution([share, 'launch', 'sensors.launch.py'])),
            launch_arguments={a: LaunchConfiguration(a) for a in args}.items()),
        Node(package='ubot_lidar_sim', executable='demo_driver_node', name='demo_driver',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[PathJoinSubstitution([share, 'config', 'demo_driver.yaml']),
                         {'use_sim_time': LaunchConfiguration('use_sim_time')}]),
    ])
