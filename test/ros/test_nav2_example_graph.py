"""
Every frame, topic and type config/nav2_params_example.yaml names is on sim.launch.py's graph.

The nodes are those sim.launch.py starts (its base_sim and sensors.launch.py's SENSORS, read
from the files), each with its config/<node>.yaml, in one process on real rclpy and DDS; the
world is 'flat' and the LiDAR geometric (frames, topics and types do not depend on either).
"""

import ast
import os
from pathlib import Path
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import LaserScan, PointCloud2
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.core.config.params_file import read_params_file
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.ros.base_sim_node import BaseSimNode
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = yaml.safe_load((ROOT / 'config' / 'nav2_params_example.yaml').read_text())
NODES = {'base_sim_node': ('base_sim', BaseSimNode), 'lidar_3d_node': ('lidar_3d', Lidar3DNode),
         'laser_scan_node': ('laser_scan', LaserScanNode),
         'terrain_sensor_node': ('terrain_sensor', TerrainSensorNode)}
OVERRIDES = {'world_file': 'flat', 'model': 'geometric'}
SOURCE_TYPES = {'LaserScan': 'sensor_msgs/msg/LaserScan', 'scan': 'sensor_msgs/msg/LaserScan',
                'PointCloud2': 'sensor_msgs/msg/PointCloud2',
                'pointcloud': 'sensor_msgs/msg/PointCloud2'}
FRAME_KEYS = ('global_frame', 'robot_base_frame', 'sensor_frame', 'base_frame_id',
              'odom_frame_id', 'global_frame_id', 'local_frame')


def launched_executables():
    """Return the executables sim.launch.py starts: its own and sensors.launch.py's SENSORS."""
    sim = ast.parse((ROOT / 'launch' / 'sim.launch.py').read_text())
    own = {n.value for n in ast.walk(sim) if isinstance(n, ast.Constant)
           and isinstance(n.value, str) and n.value.endswith('_node')}
    sensors = ast.parse((ROOT / 'launch' / 'sensors.launch.py').read_text())
    table = next(ast.literal_eval(n.value) for n in sensors.body if isinstance(n, ast.Assign)
                 and getattr(n.targets[0], 'id', '') == 'SENSORS')
    return own | {exe for _, exe in table}


def _walk(tree, path=()):
    """Yield (path, key, value) of every mapping entry of a parsed YAML tree."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield path, key, value
            yield from _walk(value, path + (key,))


def _topic(name):
    return name if name.startswith('/') else '/' + name


def _named_sources():
    """Yield (where, topic, type, sensor frame or None) of every observation source."""
    for path, key, value in _walk(EXAMPLE):
        if isinstance(value, dict) and 'topic' in value and path and \
                'observation_sources' in _parent(path):
            kind = value.get('data_type', value.get('type', 'LaserScan'))
            yield '/'.join(path + (key,)), _topic(value['topic']), SOURCE_TYPES[kind], \
                value.get('sensor_frame')


def _parent(path):
    block = EXAMPLE
    for key in path:
        block = block[key]
    return block


def _collect(timeout_s=90.0):
    """Start the launched nodes; return (topic types, frames, first scan and cloud, cmd types)."""
    assert set(launched_executables()) == set(NODES), 'a node of sim.launch.py is not checked'
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=25 + os.getpid() % 60)
    world = World.load('flat')
    nodes, executor = [], SingleThreadedExecutor(context=ctx)
    try:
        probe = rclpy.create_node('probe', context=ctx)
        nodes.append(probe)
        tf, got = [], {}
        probe.create_subscription(TFMessage, '/tf', tf.append, 100)
        probe.create_subscription(TFMessage, '/tf_static', tf.append, QoSProfile(
            depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        for cls, topic in ((LaserScan, '/scan'), (PointCloud2, '/points')):
            probe.create_subscription(cls, topic, lambda m, t=topic: got.setdefault(t, m),
                                      qos_profile_sensor_data)
        for name, cls in NODES.values():
            params = read_params_file(ROOT / 'config' / f'{name}.yaml', name)
            params.pop('use_sim_time', None)
            params.update({k: v for k, v in OVERRIDES.items() if k in params})
            nodes.append(cls(context=ctx, world=world, parameter_overrides=[
                Parameter(k, value=v) for k, v in params.items()]))
        for node in nodes:
            executor.add_node(node)
        end = time.monotonic() + timeout_s
        while len(got) < 2 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        types = dict(probe.get_topic_names_and_types())
        frames = {t.child_frame_id for m in tf for t in m.transforms} | {
            t.header.frame_id for m in tf for t in m.transforms}
        cmd = {i.topic_type for i in probe.get_subscriptions_info_by_topic('/cmd_vel')}
        return types, frames, got, cmd
    finally:
        executor.shutdown()
        for node in nodes:
            node.destroy_node()
        rclpy.shutdown(context=ctx)


def test_every_frame_topic_and_type_of_the_nav2_example_is_published_by_the_sim():
    types, frames, got, cmd = _collect()
    assert {'/scan', '/points'} <= set(got), 'no scan or cloud from the launched sensors'
    named = {v for _, k, v in _walk(EXAMPLE) if k in FRAME_KEYS}
    assert {'map', 'odom', 'base_link', 'base_footprint', 'laser', 'lidar_3d'} <= named
    assert named <= frames, f'frames named but not published: {named - frames}'
    sources = list(_named_sources())
    assert len(sources) == 6        # scan and points in 2 costmaps and the collision monitor
    for where, topic, kind, frame in sources:
        assert kind in types.get(topic, []), (where, topic, kind, types.get(topic))
        if frame is not None:       # the costmap's tf2 filter waits for this very frame
            assert got[topic].header.frame_id == frame, where
    odom = {v for _, k, v in _walk(EXAMPLE) if k == 'odom_topic'}
    assert odom and all('nav_msgs/msg/Odometry' in types.get(_topic(t), []) for t in odom)
    amcl = EXAMPLE['amcl']['ros__parameters']
    assert 'sensor_msgs/msg/LaserScan' in types[_topic(amcl['scan_topic'])]
    cm = EXAMPLE['collision_monitor']['ros__parameters']
    stamped = cm['enable_stamped_cmd_vel']
    assert _topic(cm['cmd_vel_out_topic']) == '/cmd_vel'
    assert cmd == {'geometry_msgs/msg/TwistStamped' if stamped else 'geometry_msgs/msg/Twist'}
