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
node is required: when one exits, the launch shuts down, with exit code 1 when a node exited
with a non-zero code (a refused parameter). An argument that cannot be used ends the launch
with exit code 1 and one line naming it and what is allowed (pipeline/launch_args.py).
robots:=N other than 1 is refused: base_sim drives one robot (a fleet of sensors on demo
drivers is demo.launch.py robots:=N).
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
from ubot_lidar_sim.pipeline import launch_args
from ubot_lidar_sim.pipeline.robot_nodes import robot_launch

ARGUMENTS = {
    'world_file': ('demo', "world YAML path, or 'demo' / 'flat', for the base and the sensors"),
    'use_sim_time': ('true', 'true: base_sim publishes /clock and every node follows it; '
                     'false: the wall clock'),
    'real_time_factor': ('1.0', "simulated seconds per wall second with use_sim_time; 'max': "
                         'as fast as the sensors publish every sweep'),
    'preset': ('', 'lidar_3d preset, e.g. ouster_os1_64 (config/lidar_3d.yaml: '
               'velodyne_vlp16)'),
    'initial_pose': ('', "base_sim start pose '[x, y, yaw_deg]' or 'x y yaw_deg' in map "
                     '(config/base_sim.yaml: [0, 0, 0])'),
    'drive': ('', 'base_sim kinematics: diff, omni or ackermann (config/base_sim.yaml: diff)'),
    'cmd_vel_stamped': ('', "base_sim's cmd_vel type at start: true TwistStamped, false Twist "
                        "(empty: Nav2's default on $ROS_DISTRO, true from Kilted on); base_sim "
                        "then follows its publishers' type (cmd_vel_follow_type)"),
    'robots': ('1', 'robots: 1 (sim.launch.py runs one base_sim; other counts are refused)'),
    'params_file': ('', 'your parameter YAML, layered over config/<node>.yaml'),
    'rviz': ('false', 'start rviz2 with config/ubot_lidar_sim.rviz'),
    'robot': ('', 'a robot description (.urdf, .urdf.xacro, model.sdf, a model directory or '
              'model://NAME): its sensors replace the three, its drive sets base_sim '
              '(docs/robots.md)'),
    'robot_args': ('', "xacro arguments of robot, 'name:=value name:=value'"),
}
# Passed on to sensors.launch.py as they are.
SENSOR_ARGUMENTS = ('world_file', 'use_sim_time', 'preset', 'params_file', 'rviz')


def _base(context):
    """Return base_sim with its parameter layers."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = get_package_share_directory('ubot_lidar_sim')
    layers = [os.path.join(share, 'config', 'base_sim.yaml')]
    if given['params_file']:
        layers.append(os.path.abspath(os.path.expanduser(given['params_file'])))
    launch_args.single_robot(given['robots'])
    # The distro's cmd_vel type sits under params_file: a user's YAML still decides.
    layers.insert(1, {'cmd_vel_stamped': launch_args.distro_cmd_vel_stamped(
        os.environ.get('ROS_DISTRO'))})
    sim_time = launch_args.boolean('use_sim_time', given['use_sim_time'])
    values = {'world_file': ParameterValue(given['world_file'], value_type=str),
              'use_sim_time': sim_time, 'publish_clock': sim_time,
              'real_time_factor': launch_args.real_time_factor(given['real_time_factor'])}
    if given['initial_pose']:
        values['initial_pose'] = launch_args.initial_pose(given['initial_pose'])
    if given['drive']:
        values['drive'] = launch_args.drive(given['drive'])
    if given['cmd_vel_stamped']:
        values['cmd_vel_stamped'] = launch_args.boolean('cmd_vel_stamped',
                                                        given['cmd_vel_stamped'])
    if given['robot']:
        values.update(robot_launch(given['robot'], given['robot_args']).base)
    return [Node(package='ubot_lidar_sim', executable='base_sim_node', name='base_sim',
                 output='screen', parameters=layers + [values],
                 on_exit=launch_args.exit_rule('base_sim', [Shutdown(reason='base_sim exited')]))]


def _robot(context):
    """Return the robot description's sensor nodes (robot:=FILE), each under its own name."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    if not given['robot']:
        return []
    shared = {'world_file': ParameterValue(given['world_file'], value_type=str),
              'use_sim_time': launch_args.boolean('use_sim_time', given['use_sim_time'])}
    return [Node(package='ubot_lidar_sim', executable=n.executable, name=n.name, output='screen',
                 parameters=[{**n.parameters, **shared}], remappings=n.remappings,
                 on_exit=launch_args.exit_rule(n.name, [Shutdown(reason=f'{n.name} exited')]))
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
