"""What ros2 param and a namespace see: every parameter has a value, array overrides at start."""

import os
import time

import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters, ListParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter

from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode

NODES = {'lidar_3d': Lidar3DNode, 'laser_scan': LaserScanNode,
         'terrain_sensor': TerrainSensorNode}
SMALL = ['-p', 'world_file:=flat']


@pytest.fixture
def started(wall):
    """Yield start(name, ros_args, **kw): the node, started with a command line of its own."""
    made = []

    def start(name, ros_args=(), **kw):
        ctx = rclpy.Context()
        rclpy.init(context=ctx, domain_id=160 + os.getpid() % 60,
                   args=['node', '--ros-args', *SMALL, *ros_args])
        made.append((ctx, NODES[name](context=ctx, world=wall, **kw)))
        return made[-1][1]
    yield start
    for ctx, node in made:
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def _call(executor, node, client, request):
    end = time.monotonic() + 5.0
    while not client.service_is_ready() and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.02)
    future = client.call_async(request)
    while not future.done() and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.02)
    assert future.done(), f'{client.srv_name} did not answer'
    return future.result()


@pytest.mark.parametrize('name', sorted(NODES))
def test_get_parameters_over_all_names_returns_a_value_for_each(started, name):
    node = started(name)
    asker = rclpy.create_node('asker', context=node.context)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    executor.add_node(asker)
    try:
        listed = _call(executor, asker, asker.create_client(
            ListParameters, f'/{name}/list_parameters'), ListParameters.Request())
        names = list(listed.result.names)
        assert 'ignored_objects' in names and 'world_file' in names
        got = _call(executor, asker, asker.create_client(
            GetParameters, f'/{name}/get_parameters'), GetParameters.Request(names=names))
    finally:
        executor.shutdown()
        asker.destroy_node()
    assert len(got.values) == len(names)
    unset = [n for n, v in zip(names, got.values) if v.type == ParameterType.PARAMETER_NOT_SET]
    assert not unset, f'{name}: no value for {unset}'
    ignored = got.values[names.index('ignored_objects')]
    assert ignored.type == ParameterType.PARAMETER_STRING_ARRAY
    assert list(ignored.string_array_value) == []


@pytest.mark.parametrize('name', sorted(NODES))
def test_ignored_objects_is_set_from_the_command_line_at_start(started, name):
    node = started(name, ['-p', 'ignored_objects:=[wall]'])
    assert node.config.ignored_objects == ('wall',)
    assert node.get_parameter('ignored_objects').value == ['wall']


def test_empty_and_per_ring_arrays_are_set_from_a_params_file_at_start(started, tmp_path):
    params = tmp_path / 'custom.yaml'
    params.write_text('/**/lidar_3d:\n  ros__parameters:\n    preset: custom\n    channels: 2\n'
                      '    elevations_deg: [-2, 4]\n    ring_range_at_10pct_m: [40.0, 60.5]\n'
                      '    ignored_objects: []\n')
    node = started('lidar_3d', ['--params-file', str(params)])
    cfg = node.config
    assert cfg.elevations_deg == (-2.0, 4.0) and cfg.ring_range_at_10pct_m == (40.0, 60.5)
    assert cfg.ignored_objects == ()
    assert node.get_parameter('ignored_objects').type_ == Parameter.Type.STRING_ARRAY


@pytest.mark.parametrize('name, frame', [('lidar_3d', 'front/lidar_3d'),
                                         ('laser_scan', 'front/laser')])
def test_a_namespaced_sensor_defaults_to_a_frame_under_its_namespace(started, name, frame):
    node = started(name, namespace='/front')
    assert node.config.frame_id == frame
    explicit = started(name, ['-p', 'frame_id:=mine'], namespace='/rear')
    assert explicit.config.frame_id == 'mine'


def test_two_namespaced_lidars_get_distinct_frames_and_sensor_ids(started):
    front = started('lidar_3d', namespace='/robot1/front')
    rear = started('lidar_3d', namespace='/rear')
    assert (front.config.frame_id, rear.config.frame_id) == ('robot1/front/lidar_3d',
                                                             'rear/lidar_3d')
    assert front.config.sensor_id != rear.config.sensor_id
