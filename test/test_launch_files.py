"""Static checks of launch/*.launch.py and the node YAMLs (launch_ros need not be installed)."""

import ast
import dataclasses
from pathlib import Path

import pytest

from ubot_lidar_sim.core.config import LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig
import yaml

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((ROOT / 'launch').glob('*.launch.py'))
NODE_CONFIGS = {'lidar_3d': LidarConfig, 'laser_scan': LaserScanConfig,
                'terrain_sensor': TerrainConfig, 'demo_driver': DemoDriverConfig}
ROS_BUILTIN_PARAMETERS = {'use_sim_time'}
REQUIRED_ARGUMENTS = {'preset', 'world_file', 'use_sim_time', 'namespace', 'rviz'}


def console_scripts():
    """Return {script name: 'module:function'} from setup.py, read with ast."""
    tree = ast.parse((ROOT / 'setup.py').read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == 'console_scripts':
                    entries = [ast.literal_eval(e) for e in value.elts]
                    return dict(tuple(p.strip() for p in e.split('=')) for e in entries)
    raise AssertionError('setup.py has no console_scripts')


def calls(tree, name):
    """Return every call of a function named ``name`` in the tree."""
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        getattr(n.func, 'id', None) == name or getattr(n.func, 'attr', None) == name)]


def keyword(call, name):
    return next((k.value for k in call.keywords if k.arg == name), None)


def strings(tree):
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str)}


def test_launch_files_exist():
    names = {p.name for p in LAUNCH_FILES}
    assert {'sensors.launch.py', 'demo.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_executable_is_a_console_script_with_a_main(path):
    scripts = console_scripts()
    tree = ast.parse(path.read_text())
    nodes = [n for n in calls(tree, 'Node')
             if ast.literal_eval(keyword(n, 'package')) == 'ubot_lidar_sim']
    assert nodes, f'{path.name} starts no ubot_lidar_sim node'
    for node in nodes:
        exe = ast.literal_eval(keyword(node, 'executable'))
        assert exe in scripts, f'{path.name}: {exe} is not a console script of setup.py'
        module, func = scripts[exe].split(':')
        source = ROOT / (module.replace('.', '/') + '.py')
        assert source.is_file(), f'{exe}: {source} missing'
        defs = {d.name for d in ast.parse(source.read_text()).body
                if isinstance(d, ast.FunctionDef)}
        assert func in defs, f'{exe}: {module} defines no {func}()'
        ns = keyword(node, 'namespace')
        assert ns is not None and calls(ast.Module(body=[ast.Expr(ns)], type_ignores=[]),
                                        'LaunchConfiguration')


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_referenced_file_exists(path):
    for text in strings(ast.parse(path.read_text())):
        if text.endswith(('.yaml', '.rviz')):
            assert (ROOT / 'config' / text).is_file(), f'{path.name}: config/{text} missing'
        elif text.endswith('.launch.py'):
            assert (ROOT / 'launch' / text).is_file(), f'{path.name}: launch/{text} missing'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_arguments_are_declared_and_used(path):
    tree = ast.parse(path.read_text())
    declared = {ast.literal_eval(c.args[0]) for c in calls(tree, 'DeclareLaunchArgument')}
    assert REQUIRED_ARGUMENTS <= declared
    used = {c.args[0].value for c in calls(tree, 'LaunchConfiguration')
            if isinstance(c.args[0], ast.Constant)}
    assert used <= declared, f'{path.name}: undeclared {used - declared}'


def yaml_parameters(name):
    doc = yaml.safe_load((ROOT / 'config' / f'{name}.yaml').read_text())
    assert len(doc) == 1, f'config/{name}.yaml: one node entry expected'
    key, entry = next(iter(doc.items()))
    assert key in (name, f'/**/{name}', '/**'), f'config/{name}.yaml: key {key!r}'
    return entry['ros__parameters']


@pytest.mark.parametrize('name', ['lidar_3d', 'laser_scan', 'terrain_sensor', 'demo_driver'])
def test_every_yaml_parameter_is_declared_by_the_node(name):
    params = yaml_parameters(name)
    declared = {f.name for f in dataclasses.fields(NODE_CONFIGS[name])}
    # The values must also build a valid config (types and ranges of the config).
    NODE_CONFIGS[name](**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()
                          if k not in ROS_BUILTIN_PARAMETERS})
    unknown = set(params) - declared - ROS_BUILTIN_PARAMETERS
    assert not unknown, f'config/{name}.yaml: undeclared parameters {sorted(unknown)}'


def test_launch_parameter_dicts_name_declared_parameters():
    tree = ast.parse((ROOT / 'launch' / 'sensors.launch.py').read_text())
    for node in calls(tree, 'Node'):
        if ast.literal_eval(keyword(node, 'package')) != 'ubot_lidar_sim':
            continue
        name = ast.literal_eval(keyword(node, 'name'))
        declared = {f.name for f in dataclasses.fields(NODE_CONFIGS[name])}
        keys = set()
        for d in ast.walk(keyword(node, 'parameters')):
            if isinstance(d, ast.Dict):
                keys |= {k.value for k in d.keys if isinstance(k, ast.Constant)}
        shared = {'world_file', 'use_sim_time'}     # the `shared` dict spread into each
        assert (keys | shared) - declared <= ROS_BUILTIN_PARAMETERS, name
