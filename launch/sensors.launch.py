"""
Start the three sensor nodes (lidar_3d, laser_scan, terrain_sensor) and, with rviz:=true, rviz2.

ros2 launch ubot_lidar_sim sensors.launch.py preset:=ouster_os1_64 world_file:=demo
ros2 launch ubot_lidar_sim sensors.launch.py namespace:=front params_file:=my_sensors.yaml
ros2 launch ubot_lidar_sim sensors.launch.py robots:=3 world_file:=demo

Each node's parameters, later layers winning: the package's config/<node>.yaml, then
params_file (your YAML, keys as in those files), then every launch argument given on the
command line (one left at its empty default sets nothing). Poses come from /tf (world_frame
-> the sensor frames): run the demo driver or your robot. The sensors are required: when one
exits, the launch shuts down (exit code 1 when it exited with a non-zero code). rviz2 is
optional: if it is not installed, one line says so.
robots:=N (1-5) starts the three sensors N times, robot k in namespace robotK (under namespace)
with its frames under robotK/ and the other robots' bodies drawn (fleet_frames,
pipeline/fleet.py).
"""

import os

from ament_index_python.packages import get_package_prefix, get_package_share_directory
from ament_index_python.packages import PackageNotFoundError
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from ubot_lidar_sim.pipeline.fleet import robot_namespace, robot_parameters, robots_argument
from ubot_lidar_sim.pipeline.launch_args import exit_rule, LaunchArgumentError
from ubot_lidar_sim.pipeline.sim_fleet import sensor_parameters
import yaml

SENSORS = (('lidar_3d', 'lidar_3d_node'), ('laser_scan', 'laser_scan_node'),
           ('terrain_sensor', 'terrain_sensor_node'))
# name: (default, description, nodes it sets, parameter name). Empty default: sets nothing
# (the value comes from config/<node>.yaml or params_file).
ARGUMENTS = {
    'namespace': ('/', "namespace of the nodes; '/' = none (ros2 launch refuses an empty "
                  'value)', (), ''),
    'params_file': ('', 'your parameter YAML, layered over config/<node>.yaml', (), ''),
    'robots': ('1', 'robots of a fleet, 1-5: robot k in namespace robotK, seeing the others',
               (), ''),
    'fleet': ('demo', "the fleet's bodies: demo (demo_driver robots, pipeline/fleet.py) or sim "
              '(base_sim robots, pipeline/sim_fleet.py)', (), ''),
    'preset': ('', 'lidar_3d preset, e.g. ouster_os1_64 (config/lidar_3d.yaml: '
               'velodyne_vlp16; list: python -m ubot_lidar_sim presets)', ('lidar_3d',),
               'preset'),
    'world_file': ('', "world file (YAML or Gazebo SDF), a built-in world ('demo', 'flat') "
                   "or a shipped example's name ('example', 'smoke_yard') (config/*.yaml: demo)",
                   ('lidar_3d', 'laser_scan', 'terrain_sensor'), 'world_file'),
    'use_sim_time': ('', 'true: follow /clock instead of the wall clock (false)',
                     ('lidar_3d', 'laser_scan', 'terrain_sensor'), 'use_sim_time'),
    'rviz': ('false', 'start rviz2 with config/ubot_lidar_sim.rviz', (), ''),
    'sub_rays': ('', 'lidar_3d sub-rays per beam, 1 or 7 (config/lidar_3d.yaml: 1)',
                 ('lidar_3d',), 'sub_rays'),
    'compute_process': ('', 'lidar_3d sweeps in a child process (config/lidar_3d.yaml: false)',
                        ('lidar_3d',), 'compute_process'),
    'compute_workers': ('', 'lidar_3d column blocks computed in this many child processes (1)',
                        ('lidar_3d',), 'compute_workers'),
    'lidar_model': ('', 'lidar_3d model: physical (docs/physics.md) or geometric (the first '
                    'surface of each beam, no radiometry) (physical)', ('lidar_3d',), 'model'),
    'point_layout': ('', 'lidar_3d PointCloud2 layout: full, velodyne, ouster, livox or '
                     "autoware (the preset's; for config/lidar_3d.yaml's velodyne_vlp16: "
                     'velodyne)', ('lidar_3d',), 'point_layout'),
    'livox_custom_msg': ('', 'lidar_3d with point_layout livox: also livox_ros_driver2/CustomMsg '
                         'on livox/lidar; needs livox_ros_driver2 installed (false)',
                         ('lidar_3d',), 'livox_custom_msg'),
    'trigger': ('', 'lidar_3d trigger: timer (contiguous sweeps, each block computed as it '
                'fires), service, or stream (the same as timer) (timer)', ('lidar_3d',),
                'trigger'),
    'column_blocks': ('', 'lidar_3d blocks of columns per sweep, each with random streams of '
                      'its own (0 = auto: by the sub-rays of a sweep)', ('lidar_3d',),
                      'column_blocks'),
    'frame_id': ('', 'lidar_3d frame (lidar_3d; <namespace>/lidar_3d in a namespace)',
                 ('lidar_3d',), 'frame_id'),
    'laser_frame_id': ('', 'laser_scan frame (laser; <namespace>/laser in a namespace)',
                       ('laser_scan',), 'frame_id'),
}
STRING_ARGUMENTS = {'preset', 'world_file', 'lidar_model', 'point_layout', 'trigger',
                    'frame_id', 'laser_frame_id'}
FLEETS = {'demo': robot_parameters, 'sim': sensor_parameters}
RVIZ_TOPICS = ('points', 'scan', 'lidar_3d/fov_markers', 'laser_scan/rays', 'terrain_sensor/rays')


def _value(name, text):
    """Return a launch argument as the parameter's type: strings stay strings, others YAML."""
    return ParameterValue(text, value_type=str) if name in STRING_ARGUMENTS \
        else yaml.safe_load(text)


def _sensors(context):
    """Return the three sensor nodes with their parameter layers (evaluated arguments)."""
    given = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    share = get_package_share_directory('ubot_lidar_sim')
    user = given['params_file']
    if user:
        user = os.path.abspath(os.path.expanduser(user))
        if not os.path.isfile(user):
            raise FileNotFoundError(f'params_file:={given["params_file"]}: no such file')
    nodes = []
    n = robots_argument(given['robots'])     # 0, -1, abc: one line naming robots
    if given['fleet'] not in FLEETS:
        raise LaunchArgumentError('fleet', given['fleet'], ', '.join(FLEETS))
    for k in range(1, n + 1):       # the robots of a fleet: a few, each three nodes
        namespace = robot_namespace(k, n)
        if namespace:
            namespace = given['namespace'].rstrip('/') + '/' + namespace
        for name, executable in SENSORS:
            overrides = {param: _value(arg, given[arg])
                         for arg, (_, _, nodes_set, param) in ARGUMENTS.items()
                         if name in nodes_set and given[arg] != ''}
            if n > 1:
                overrides.update(FLEETS[given['fleet']](k, n)[name])
            layers = [os.path.join(share, 'config', f'{name}.yaml')] + ([user] if user else [])
            nodes.append(Node(package='ubot_lidar_sim', executable=executable, name=name,
                              namespace=namespace or given['namespace'], output='screen',
                              parameters=layers + ([overrides] if overrides else []),
                              on_exit=exit_rule(name, [Shutdown(reason=f'{name} exited')])))
    return nodes


def _rviz(context):
    """Return rviz2 on the sensors' topics, or one line when rviz2 is not installed."""
    try:
        get_package_prefix('rviz2')
    except PackageNotFoundError:
        return [LogInfo(msg='rviz:=true but rviz2 is not installed (apt install '
                            'ros-$ROS_DISTRO-rviz2); the sensors run without it')]
    ns = LaunchConfiguration('namespace').perform(context).strip('/')
    remap = [(f'/{t}', f'/{ns}/{t}') for t in RVIZ_TOPICS] if ns else []
    share = get_package_share_directory('ubot_lidar_sim')
    return [Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
                 arguments=['-d', os.path.join(share, 'config', 'ubot_lidar_sim.rviz')],
                 remappings=remap, parameters=[{'use_sim_time': _value(
                     'use_sim_time', LaunchConfiguration('use_sim_time').perform(context)
                     or 'false')}])]


def generate_launch_description():
    """Return the launch description of the sensors."""
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text, _, _) in ARGUMENTS.items()]
        + [OpaqueFunction(function=_sensors),
           OpaqueFunction(function=_rviz, condition=IfCondition(LaunchConfiguration('rviz')))])
