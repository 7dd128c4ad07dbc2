"""
Every parameter that can be set at run time, set on a running node: refused, or swept on.

The walk takes each node's declared parameters (not read-only), sets each to the edge values
its descriptor allows (min, max, every choice, both bools, an empty array, arrays of the edge
values) and asserts: a set is either refused with a reason and the config left as it was, or
accepted and the next sweep publishes. Named cases pin the refusals found by the walk, and
``ros2 param set`` values typed from their text (rclpy.parameter.get_parameter_value).
"""

import math

import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import get_parameter_value, Parameter, parameter_value_to_python
from sensor_msgs.msg import LaserScan, PointCloud2
from std_srvs.srv import Trigger

from ubot_lidar_sim.core.config import (flat_fields, LaserScanConfig, LidarConfig, TerrainConfig,
                                        to_dict)
from ubot_lidar_sim.core.config.fields import is_list
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode
from ubot_lidar_sim.ros.terrain_sensor_node import TerrainSensorNode
from ubot_lidar_sim_msgs.msg import TerrainSensor

LIDAR = {'channels': 8, 'horizontal_samples': 90, 'sub_rays': 1, 'max_range_m': 30.0,
         'rate_hz': 10.0, 'world_file': 'flat'}
NODES = {
    'lidar_3d': (Lidar3DNode, LidarConfig, LIDAR, 'lidar_3d'),
    'laser_scan': (LaserScanNode, LaserScanConfig, {'world_file': 'flat'}, 'laser'),
    'terrain_sensor': (TerrainSensorNode, TerrainConfig, {'world_file': 'flat'}, 'base_link'),
}
# A sweep that is skipped on purpose by the value set (parameter enabled false).
SKIPS_BY_DESIGN = {('laser_scan', 'enabled', 'False'): 'disabled'}


def _edge_values(f):
    """Return the values at the edges of what field f's metadata allows (see the module)."""
    meta = f.metadata
    kind = meta.get('item_type') if is_list(f) else f.type
    if 'choices' in meta:
        items = list(meta['choices'])
    elif kind is bool:
        items = [True, False]
    elif kind is str:
        items = ['', 'wall', 'no such thing']
    else:
        lo, hi = meta.get('min'), meta.get('max')
        items = [v for v in (lo, hi) if v is not None] or [0, 1]
        if meta.get('min_exclusive'):
            items = [lo + 1e-3 if kind is float else lo + 1] + items[1:]
        if meta.get('allow_inf'):
            items.append(math.inf)
        items = [float(v) if kind is float else int(v) for v in items]
    if not is_list(f):
        return items
    n = meta.get('length')
    lengths = [n] if n is not None else [0, 1, 16]
    return [[v] * k for v in items for k in lengths] + [[]]


def _sample(rig):
    """Return (success, message) of a ~/sample call: the next sweep, published or why not."""
    answer = rig.call(Trigger, 'sample')
    return answer.success, answer.message


def _walk(name, rig):
    """Yield (parameter, value, result, outcome) of each edge value set on the running node."""
    node = rig.node
    for f in flat_fields(NODES[name][1]):
        if f.metadata.get('read_only'):
            continue
        before = node.get_parameter(f.name)
        for value in _edge_values(f):
            result = node.set_parameters([Parameter(f.name, value=value) if value != []
                                          else Parameter(f.name, before.type_, [])])[0]
            outcome = None
            if result.successful:
                outcome = _sample(rig)
                restored = node.set_parameters([before])[0]
                assert restored.successful, (f.name, restored.reason)
            yield f.name, value, result, outcome


@pytest.mark.parametrize('name', sorted(NODES))
def test_every_runtime_set_is_refused_with_a_reason_or_the_next_sweep_publishes(
        sensor_rig, name):
    node_cls, _, params, frame = NODES[name]
    rig = sensor_rig(node_cls, params, frame)
    node = rig.node
    assert _sample(rig)[0]
    config = to_dict(node.config)
    broken, refused = [], 0
    for param, value, result, outcome in _walk(name, rig):
        if not result.successful:
            refused += 1
            assert result.reason, (param, value)
            assert to_dict(node.config) == config, (param, value)
            continue
        ok, why = outcome
        expected = SKIPS_BY_DESIGN.get((name, param, str(value)))
        if not ok and not (expected and expected in why):
            broken.append((param, value, why))
    assert not broken, f'{name}: accepted, then no sweep: {broken}'
    assert refused > 0      # the walk reaches values that must be refused (e.g. wrong lengths)
    assert to_dict(node.config) == config
    assert _sample(rig)[0]


@pytest.mark.parametrize('name', sorted(NODES))
def test_every_read_only_parameter_set_at_run_time_is_refused_naming_it(sensor_rig, name):
    node_cls, config_cls, params, frame = NODES[name]
    rig = sensor_rig(node_cls, params, frame)
    node = rig.node
    config = to_dict(node.config)
    fixed = [f for f in flat_fields(config_cls) if f.metadata.get('read_only')]
    assert {'world_file', 'world_frame', 'rate_hz'} <= {f.name for f in fixed}
    for f in fixed:
        value = _edge_values(f)[-1]
        result = node.set_parameters([Parameter(f.name, value=value) if value != []
                                      else Parameter(f.name, node.get_parameter(f.name).type_,
                                                     [])])[0]
        assert not result.successful and f.name in result.reason, f.name
    assert to_dict(node.config) == config
    assert _sample(rig)[0]


# A set that would break the sweep, per kind of check, and the reason's words. Over the
# parameter service, as ros2 param set sends it.
SHARED_REFUSALS = {
    'world object': ('ignored_objects', "['building']", "ignored_objects: got 'building'"),
    'read-only world': ('world_file', 'demo', 'read-only parameter: world_file'),
    'sim time without /clock': ('use_sim_time', 'true', 'while /clock has a publisher'),
}
MODEL_REFUSALS = {
    'cross-field range': ('min_range_m', '50.0', 'max_range_m: got 30.0, allowed > min_range_m'),
    'detection threshold': ('ambient_counts', '1000000.0', 'positive threshold'),
    'descriptor range': ('max_range_m', '20000.0', 'max_range_m'),
    'read-only materials': ('materials_file', 'x.yaml', 'read-only parameter: materials_file'),
}
REFUSALS = {
    'lidar_3d': {
        **SHARED_REFUSALS, **MODEL_REFUSALS,
        'ray budget': ('max_rays_per_scan', '100', 'allowed at most max_rays_per_scan = 100'),
        'layout stamp': ('stamp_at', 'end', "'start' with point_layout 'ouster'"),
        'per-ring length': ('ring_range_at_10pct_m', '[60.0, 60.0]', 'a list of channels (8)'),
        'choices': ('return_mode', 'third', 'return_mode'),
    },
    'laser_scan': {
        **SHARED_REFUSALS, **MODEL_REFUSALS,
        'single return': ('return_mode', 'dual_strongest_last', 'return_mode'),
    },
    'terrain_sensor': {
        **SHARED_REFUSALS,
        'array length': ('tire_positions_m', '[1.0, 2.0]', 'a list of 12'),
        'ray length': ('trace_lengths_m', '[0.0, 5.0, 5.0, 5.0, 5.0]', 'trace_lengths_m'),
        'choices': ('tire_radii_source', 'guess', 'tire_radii_source'),
    },
}
OUTPUTS = {'lidar_3d': ('points', PointCloud2), 'laser_scan': ('scan', LaserScan),
           'terrain_sensor': ('terrain', TerrainSensor)}


@pytest.mark.parametrize('name', sorted(NODES))
def test_sets_that_would_break_the_sweep_are_refused_with_the_reason_and_sweeps_go_on(
        sensor_rig, name):
    node_cls, _, params, frame = NODES[name]
    extra = {'lidar_3d': {'point_layout': 'ouster'}, 'laser_scan': {'max_range_m': 30.0}}
    rig = sensor_rig(node_cls, {**params, **extra.get(name, {})}, frame)
    got = rig.subscribe(*reversed(OUTPUTS[name]))
    assert rig.spin_until(lambda: len(got) >= 2, 60.0)
    config = to_dict(rig.node.config)
    for case, (param, text, reason) in REFUSALS[name].items():
        result = _set_as_cli(rig, param, text)
        assert not result.successful, case
        assert reason in result.reason, (case, result.reason)
    assert to_dict(rig.node.config) == config
    assert rig.node.get_parameter('use_sim_time').value is False
    n = len(got)
    assert rig.spin_until(lambda: len(got) >= n + 3, 10.0), rig.node.stats.counts
    assert rig.node.stats.counts['skipped'].get('error', 0) == 0


def _set_as_cli(rig, name, text):
    """Set a parameter as ``ros2 param set NODE name TEXT`` does (over the service); result."""
    request = SetParameters.Request()
    msg = Parameter(name).to_parameter_msg()
    msg.value = get_parameter_value(text)
    request.parameters = [msg]
    return rig.call(SetParameters, 'set_parameters', request).results[0]


def test_an_array_parameter_is_cleared_from_the_cli_with_an_empty_list(sensor_rig, wall):
    rig = sensor_rig(Lidar3DNode, {**LIDAR, 'ignored_objects': ['wall']}, 'lidar_3d')
    assert get_parameter_value('[]').type == ParameterType.PARAMETER_BOOL_ARRAY  # as the CLI
    result = _set_as_cli(rig, 'ignored_objects', '[]')
    assert result.successful, result.reason
    param = rig.node.get_parameter('ignored_objects')
    assert param.type_ == Parameter.Type.STRING_ARRAY and list(param.value) == []
    assert rig.node.config.ignored_objects == ()
    assert _sample(rig)[0]


def test_an_integer_from_the_cli_sets_a_float_parameter(sensor_rig):
    rig = sensor_rig(Lidar3DNode, LIDAR, 'lidar_3d')
    assert _set_as_cli(rig, 'max_range_m', '20').successful
    assert rig.node.config.max_range_m == 20.0
    assert _set_as_cli(rig, 'ring_range_at_10pct_m', '[50, 50, 50, 50, 50, 50, 50, 50]') \
        .successful
    assert rig.node.config.ring_range_at_10pct_m == (50.0,) * 8
    value = parameter_value_to_python(rig.node.get_parameter('max_range_m')
                                      .get_parameter_value())
    assert value == 20.0 and isinstance(value, float)


def test_a_value_of_another_type_from_the_cli_is_refused_naming_parameter_value_and_type(
        sensor_rig):
    rig = sensor_rig(Lidar3DNode, LIDAR, 'lidar_3d')
    for name, text, reason in (
            ('max_range_m', 'far', "got 'far', allowed [0.01, 10000.0], type double"),
            ('ignored_objects', '[1, 2]', 'got [1, 2], allowed type string_array'),
            ('noise_enabled', '1', 'got 1, allowed type bool')):
        reason = f'{name}: {reason}'
        result = _set_as_cli(rig, name, text)
        assert not result.successful and result.reason == reason, (name, result.reason)
    assert rig.node.config.max_range_m == 30.0
    assert rig.node.get_parameter('max_range_m').value == 30.0
    # The next good set is not refused by what was kept aside.
    assert _set_as_cli(rig, 'max_range_m', '20.0').successful
    assert rig.node.config.max_range_m == 20.0
