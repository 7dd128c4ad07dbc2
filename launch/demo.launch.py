"""
The demo: the three sensors on the demo world, the demo driver (a loop and the weather), rviz2.

ros2 launch ubot_lidar_sim demo.launch.py
ros2 launch ubot_lidar_sim demo.launch.py rviz:=false preset:=ouster_os1_64 namespace:=front
ros2 launch ubot_lidar_sim demo.launch.py weather_cycle:=false   # your own /environment
ros2 launch ubot_lidar_sim demo.launch.py robots:=3    # three robots on their own loops

Takes every argument of sensors.launch.py; rviz defaults to true here. The demo driver takes
config/demo_driver.yaml, then params_file, then use_sim_time and weather_cycle, and is required
like the sensors: when it exits, the launch shuts down.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.actions import Shutdown
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from ubot_lidar_sim.pipeline.fleet import robot_namespace, robot_parameters, robots_argument
import yaml

# The arguments the driver reads, declared here too (same defaults as sensors.launch.py), and
# the driver's own (DRIVER_ARGUMENTS: given to it as parameters when not empty).
ARGUMENTS = {
    'namespace': ('/', "namespace of the nodes; '/' = none (ros2 launch refuses an empty value)"),
    'params_file': ('', 'your parameter YAML, layered over config/<node>.yaml'),
    'robots': ('1', 'robots of a fleet, 1-5: robot k in namespace robotK, seeing the others'),
    'use_sim_time': ('', 'true: follow /clock instead of the wall clock (false)'),
    'rviz': ('true', 'start rviz2 with config/ubot_lidar_sim.rviz'),
    'weather_cycle': ('true', 'demo_driver publishes its weather cycle on /environment; '
                      'false: no environment message, so `ros2 topic pub /environment ...` '
                      'sets the weather'),
}
DRIVER_ARGUMENTS = ('use_sim_time', 'weather_cycle')


def _driver(context):
    """Return the demo driver node with its parameter layers."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = get_package_share_directory('ubot_lidar_sim')
    layers = [os.path.join(share, 'config', 'demo_driver.yaml')]
    if given['params_file']:
        layers.append(os.path.abspath(os.path.expanduser(given['params_file'])))
    values = {name: yaml.safe_load(given[name]) for name in DRIVER_ARGUMENTS if given[name]}
    if values:
        layers.append(values)
    n = robots_argument(given['robots'])     # 0, -1, abc: one line naming robots
    drivers = []
    for k in range(1, n + 1):       # one driver per robot, each on its own loop
        namespace = robot_namespace(k, n)
        if namespace:
            namespace = given['namespace'].rstrip('/') + '/' + namespace
        own = [robot_parameters(k, n)['demo_driver']] if n > 1 else []
        drivers.append(Node(package='ubot_lidar_sim', executable='demo_driver_node',
                            name='demo_driver', namespace=namespace or given['namespace'],
                            output='screen', parameters=layers + own,
                            on_exit=Shutdown(reason='demo_driver exited')))
    return drivers


def generate_launch_description():
    """Return the launch description of the demo."""
    sensors = os.path.join(get_package_share_directory('ubot_lidar_sim'), 'launch',
                           'sensors.launch.py')
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text) in ARGUMENTS.items()]
        + [IncludeLaunchDescription(PythonLaunchDescriptionSource(sensors)),
           OpaqueFunction(function=_driver)])
