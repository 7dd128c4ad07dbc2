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
robots:=N (1-5) starts N base_sims and their sensors, robot k in namespace robotK with its
frames under robotK/, one /clock (robot 1's base_sim, waiting for every robot's sensors), each
robot's sensors seeing the others (pipeline/sim_fleet.py); with robot:=FILE the robots are
copies of that description, each robot's sensors seeing the others' bodies.
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
from ubot_lidar_sim.pipeline.fleet import robot_namespace
from ubot_lidar_sim.pipeline.robot_nodes import robot_launch
from ubot_lidar_sim.pipeline.sim_fleet import (base_parameters, INITIALPOSE_REMAP,
                                               robot_base_parameters, robot_sensor_nodes)

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
    'robots': ('1', 'robots, 1-5: with 2 or more robot k in namespace robotK, frames under '
               "robotK/, one /clock, each robot's sensors seeing the others (with robot:=, "
               'copies of it)'),
    'robot_spacing_m': ('4.0', 'robots:=N: robot k starts (k - 1) robot_spacing_m '
                        "to the left of robot 1's initial_pose"),
    'initial_poses': ('', "robots:=N: every start pose, 'x y yaw_deg; x y yaw_deg; ...' "
                      '(wins over initial_pose and robot_spacing_m)'),
    'params_file': ('', 'your parameter YAML, layered over config/<node>.yaml'),
    'rviz': ('false', 'start rviz2 with config/ubot_lidar_sim.rviz'),
    'robot': ('', 'a robot description (.urdf, .urdf.xacro, model.sdf, a model directory or '
              'model://NAME): its sensors replace the three, its drive sets base_sim '
              '(docs/robots.md)'),
    'robot_args': ('', "xacro arguments of robot, 'name:=value name:=value'"),
}
# robot_spacing_m's default is pipeline/sim_fleet.py SPACING_M.
# Passed on to sensors.launch.py as they are.
SENSOR_ARGUMENTS = ('world_file', 'use_sim_time', 'preset', 'params_file', 'rviz', 'robots')


def _base(context):
    """Return the base_sims (one per robot) with their parameter layers."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = get_package_share_directory('ubot_lidar_sim')
    layers = [os.path.join(share, 'config', 'base_sim.yaml')]
    if given['params_file']:
        layers.append(os.path.abspath(os.path.expanduser(given['params_file'])))
    n = launch_args.fleet_robots(given['robots'])
    poses = [None] * n      # one robot, no pose given: config/base_sim.yaml's or params_file's
    if n > 1 or given['initial_pose'] or given['initial_poses']:
        poses = launch_args.start_poses(n, given['initial_pose'], given['initial_poses'],
                                        given['robot_spacing_m'])
    # The distro's cmd_vel type sits under params_file: a user's YAML still decides.
    layers.insert(1, {'cmd_vel_stamped': launch_args.distro_cmd_vel_stamped(
        os.environ.get('ROS_DISTRO'))})
    sim_time = launch_args.boolean('use_sim_time', given['use_sim_time'])
    values = {'world_file': ParameterValue(given['world_file'], value_type=str),
              'real_time_factor': launch_args.real_time_factor(given['real_time_factor'])}
    if given['drive']:
        values['drive'] = launch_args.drive(given['drive'])
    if given['cmd_vel_stamped']:
        values['cmd_vel_stamped'] = launch_args.boolean('cmd_vel_stamped',
                                                        given['cmd_vel_stamped'])
    robot = robot_launch(given['robot'], given['robot_args']) if given['robot'] else None
    if robot is not None:
        values.update(robot.base)
    return [Node(package='ubot_lidar_sim', executable='base_sim_node', name='base_sim',
                 namespace=robot_namespace(k, n) or None, output='screen',
                 parameters=layers + [{**values, **(
                     robot_base_parameters(k, n, robot, poses[k - 1], sim_time) if robot
                     else base_parameters(k, n, poses[k - 1], sim_time))}],
                 remappings=[INITIALPOSE_REMAP] if n > 1 else [],
                 on_exit=launch_args.exit_rule('base_sim', [Shutdown(reason='base_sim exited')]))
            for k in range(1, n + 1)]


def _robot(context):
    """Return the robot description's sensor nodes (robot:=FILE), each robot's in its namespace."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    if not given['robot']:
        return []
    shared = {'world_file': ParameterValue(given['world_file'], value_type=str),
              'use_sim_time': launch_args.boolean('use_sim_time', given['use_sim_time'])}
    n = launch_args.fleet_robots(given['robots'])
    robot = robot_launch(given['robot'], given['robot_args'])
    return [Node(package='ubot_lidar_sim', executable=s.executable, name=s.name,
                 namespace=robot_namespace(k, n) or None, output='screen',
                 parameters=[{**s.parameters, **shared}], remappings=s.remappings,
                 on_exit=launch_args.exit_rule(s.name, [Shutdown(reason=f'{s.name} exited')]))
            for k in range(1, n + 1) for s in robot_sensor_nodes(k, n, robot)]


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
                                 for name in SENSOR_ARGUMENTS] + [('fleet', 'sim')])])
