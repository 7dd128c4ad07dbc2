"""
Nav2 in the loop without Gazebo: base_sim, the three sensors and the robot's frames (docs/nav2.md).

ros2 launch ubot_lidar_sim sim.launch.py
ros2 launch ubot_lidar_sim sim.launch.py world_file:=my_world.yaml real_time_factor:=max
ros2 launch ubot_lidar_sim sim.launch.py use_sim_time:=false    # wall clock, no /clock
ros2 launch ubot_lidar_sim sim.launch.py robot:=my_robot.urdf.xacro robot_args:='lidar:=true'

base_sim (config/base_sim.yaml, then params_file, then the arguments) subscribes /cmd_vel and
publishes /odom, /tf (map -> odom -> base_link) and /tf_static (base_link -> lidar_3d, laser);
sensors.launch.py starts lidar_3d (/points), laser_scan (/scan) and terrain_sensor on the same
world. With use_sim_time (the default) base_sim owns /clock and advances it by
real_time_factor ('max': as fast as the sensors publish every sweep); every node follows it.
Nav2's navigation_launch.py runs beside it unchanged (config/nav2_params_example.yaml). Every
node is required: when one exits, the launch shuts down.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.actions import Shutdown
from launch.conditions import LaunchConfigurationEquals
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from ubot_lidar_sim.pipeline.robot_nodes import robot_launch
import yaml

ARGUMENTS = {
    'world_file': ('demo', "world YAML path, or 'demo' / 'flat', for the base and the sensors"),
    'use_sim_time': ('true', 'true: base_sim publishes /clock and every node follows it; '
                     'false: the wall clock'),
    'real_time_factor': ('1.0', "simulated seconds per wall second with use_sim_time; 'max': "
                         'as fast as the sensors publish every sweep'),
    'preset': ('', 'lidar_3d preset, e.g. ouster_os1_64 (config/lidar_3d.yaml: '
               'velodyne_vlp16)'),
    'initial_pose': ('', 'base_sim start pose [x, y, yaw_deg] in map (config/base_sim.yaml)'),
    'drive': ('', 'base_sim kinematics: diff, omni or ackermann (config/base_sim.yaml: diff)'),
    'params_file': ('', 'your parameter YAML, layered over config/<node>.yaml'),
    'rviz': ('false', 'start rviz2 with config/ubot_lidar_sim.rviz'),
    'robot': ('', 'a robot description (.urdf, .urdf.xacro, model.sdf, a model directory or '
              'model://NAME): its sensors replace the three, its drive sets base_sim '
              '(docs/robots.md)'),
    'robot_args': ('', "xacro arguments of robot, 'name:=value name:=value'"),
}
# Passed on to sensors.launch.py as they are.
SENSOR_ARGUMENTS = ('world_file', 'use_sim_time', 'preset', 'params_file', 'rviz')


def real_time_factor(text):
    """Return the real_time_factor parameter of a launch argument: 'max' is 0.0."""
    return 0.0 if text.strip().lower() == 'max' else float(text)


def _base(context):
    """Return base_sim with its parameter layers."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = get_package_share_directory('ubot_lidar_sim')
    layers = [os.path.join(share, 'config', 'base_sim.yaml')]
    if given['params_file']:
        layers.append(os.path.abspath(os.path.expanduser(given['params_file'])))
    sim_time = bool(yaml.safe_load(given['use_sim_time']))
    values = {'world_file': ParameterValue(given['world_file'], value_type=str),
              'use_sim_time': sim_time, 'publish_clock': sim_time,
              'real_time_factor': real_time_factor(given['real_time_factor'])}
    if given['initial_pose']:
        values['initial_pose'] = [float(v) for v in yaml.safe_load(given['initial_pose'])]
    if given['drive']:
        values['drive'] = given['drive']
    if given['robot']:
        values.update(robot_launch(given['robot'], given['robot_args']).base)
    return [Node(package='ubot_lidar_sim', executable='base_sim_node', name='base_sim',
                 output='screen', parameters=layers + [values],
                 on_exit=Shutdown(reason='base_sim exited'))]


def _robot(context):
    """Return the robot description's sensor nodes (robot:=FILE), each under its own name."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    if not given['robot']:
        return []
    shared = {'world_file': ParameterValue(given['world_file'], value_type=str),
              'use_sim_time': bool(yaml.safe_load(given['use_sim_time']))}
    return [Node(package='ubot_lidar_sim', executable=n.executable, name=n.name, output='screen',
                 parameters=[{**n.parameters, **shared}], remappings=n.remappings,
                 on_exit=Shutdown(reason=f'{n.name} exited'))
            for n in robot_launch(given['robot'], given['robot_args']).nodes]


def generate_launch_description():
    """Return the launch description of the simulated robot."""
    sensors = os.path.join(get_package_share_directory('ubot_lidar_sim'), 'launch',
                           'sensors.launch.py')
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text) in ARGUMENTS.items()]
        + [OpaqueFunction(function=_base), OpaqueFunction(function=_robot),
           IncludeLaunchDescription(
               PythonLaunchDescriptionSource(sensors),
               condition=LaunchConfigurationEquals('robot', ''),
               launch_arguments=[(name, LaunchConfiguration(name))
                                 for name in SENSOR_ARGUMENTS])])
