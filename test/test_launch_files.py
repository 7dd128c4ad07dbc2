"""Static checks of launch/*.launch.py and the node YAMLs (launch_ros need not be installed)."""

import ast
from pathlib import Path
import re

import pytest

from ubot_lidar_sim.core.config import flat_fields, LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig
import yaml

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((ROOT / 'launch').glob('*.launch.py'))
NODE_CONFIGS = {'lidar_3d': LidarConfig, 'laser_scan': LaserScanConfig,
                'terrain_sensor': TerrainConfig, 'demo_driver': DemoDriverConfig,
                'base_sim': BaseSimConfig}
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


def tree_of(name):
    return ast.parse((ROOT / 'launch' / name).read_text())


def constant(tree, name):
    """Return the literal value a launch file assigns to a module-level name."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f'no module-level {name}')


SENSOR_ARGUMENTS = constant(tree_of('sensors.launch.py'), 'ARGUMENTS')
RATE_ARGUMENTS = {'sub_rays', 'compute_process', 'compute_workers', 'point_layout', 'trigger',
                  'frame_id'}


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_argument_is_declared_from_the_table_and_every_one_used_is_declared(path):
    tree = ast.parse(path.read_text())
    table = constant(tree, 'ARGUMENTS')
    assert calls(tree, 'DeclareLaunchArgument')
    loops = [c for c in ast.walk(tree) if isinstance(c, ast.comprehension)
             and 'ARGUMENTS' in ast.unparse(c.iter)]
    assert loops, f'{path.name}: DeclareLaunchArgument is not made from ARGUMENTS'
    assert all(entry[1] for entry in table.values()), 'an argument without a description'
    used = {c.args[0].value for c in calls(tree, 'LaunchConfiguration')
            if c.args and isinstance(c.args[0], ast.Constant)}
    assert used <= set(table), f'{path.name}: undeclared {used - set(table)}'


def test_sensors_launch_takes_the_user_facing_and_rate_critical_arguments():
    assert REQUIRED_ARGUMENTS | RATE_ARGUMENTS | {'params_file'} <= set(SENSOR_ARGUMENTS)
    # ros2 launch refuses `namespace:=`: the root namespace is the default '/'.
    assert SENSOR_ARGUMENTS['namespace'][0] == '/'
    # An empty default sets nothing, so config/*.yaml and params_file keep their say.
    assert all(SENSOR_ARGUMENTS[a][0] == '' for a in RATE_ARGUMENTS | {'preset', 'world_file'})


def test_demo_declares_what_its_driver_reads_with_the_sensors_defaults_but_rviz_on():
    tree = tree_of('demo.launch.py')
    demo, driver = constant(tree, 'ARGUMENTS'), constant(tree, 'DRIVER_ARGUMENTS')
    own = set(demo) - set(SENSOR_ARGUMENTS)
    # The driver's own arguments are parameters of the driver (weather_cycle: contract name).
    assert own == {'weather_cycle'} and own <= set(driver)
    fields = {f.name: f for f in flat_fields(DemoDriverConfig)}
    for name, (default, _) in demo.items():
        expected = ('true' if name == 'rviz' else str(fields[name].default).lower()
                    if name in own else SENSOR_ARGUMENTS[name][0])
        assert default == expected, name


def test_every_argument_that_sets_a_parameter_names_one_the_node_declares():
    strings_ = constant(tree_of('sensors.launch.py'), 'STRING_ARGUMENTS')
    for arg, (_, _, nodes, param) in SENSOR_ARGUMENTS.items():
        for node in nodes:
            fields = {f.name: f for f in flat_fields(NODE_CONFIGS[node])}
            assert param in fields or param in ROS_BUILTIN_PARAMETERS, (arg, node, param)
            # String parameters are passed as strings (a frame '123' is not a number).
            is_str = param in fields and fields[param].type is str
            assert is_str == (arg in strings_), arg


def _effective_defaults(node):
    """Return {parameter: value} a node started by sensors.launch.py without arguments takes."""
    cls = NODE_CONFIGS[node]
    values = {f.name: f.default for f in flat_fields(cls)}
    params = yaml_parameters(node)
    if 'preset' in params:
        values.update(load_preset(params['preset'], cls.preset_node))
    values.update(params)
    return values


def test_each_argument_default_named_in_its_description_is_the_one_the_node_takes():
    # '... (X)' or '... (config/lidar_3d.yaml: X)' names the value a node takes when the
    # argument is left out: config/<node>.yaml over its preset over the field's default.
    checked = set()
    for arg, (_, text, nodes, param) in SENSOR_ARGUMENTS.items():
        named = re.search(r'\((?:[^()]*: )?([\w.]+)\)$', text)
        if not named or not nodes:
            continue
        for node in nodes:
            value = _effective_defaults(node).get(param, False)     # use_sim_time: false
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            assert named.group(1) == shown, (arg, node, named.group(1), shown)
        checked.add(arg)
    assert {'point_layout', 'lidar_model', 'trigger', 'sub_rays', 'world_file'} <= checked
    # An argument whose parameter has choices lists every one of them.
    for arg, (_, text, nodes, param) in SENSOR_ARGUMENTS.items():
        for node in nodes:
            fields = {f.name: f for f in flat_fields(NODE_CONFIGS[node])}
            for choice in fields[param].metadata.get('choices', ()) if param in fields else ():
                assert re.search(rf'\b{choice}\b', text), (arg, choice)


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_executable_is_a_console_script_with_a_main(path):
    scripts = console_scripts()
    tree = ast.parse(path.read_text())
    executables = {s for s in strings(tree) if s.endswith('_node')}
    assert executables, f'{path.name} starts no ubot_lidar_sim node'
    for exe in executables:
        assert exe in scripts, f'{path.name}: {exe} is not a console script of setup.py'
        module, func = scripts[exe].split(':')
        source = ROOT / (module.replace('.', '/') + '.py')
        assert source.is_file(), f'{exe}: {source} missing'
        defs = {d.name for d in ast.parse(source.read_text()).body
                if isinstance(d, ast.FunctionDef)}
        assert func in defs, f'{exe}: {module} defines no {func}()'


def test_sensors_launch_starts_the_three_sensors_each_with_its_config_file():
    sensors = constant(tree_of('sensors.launch.py'), 'SENSORS')
    assert dict(sensors) == {'lidar_3d': 'lidar_3d_node', 'laser_scan': 'laser_scan_node',
                             'terrain_sensor': 'terrain_sensor_node'}
    for name, _ in sensors:
        assert (ROOT / 'config' / f'{name}.yaml').is_file()


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_referenced_file_exists(path):
    for text in strings(ast.parse(path.read_text())):
        if text.startswith('.') or ' ' in text:
            continue                    # a suffix in an f-string, or a description
        if text.endswith(('.yaml', '.rviz')):
            assert (ROOT / 'config' / text).is_file(), f'{path.name}: config/{text} missing'
        elif text.endswith('.launch.py'):
            assert (ROOT / 'launch' / text).is_file(), f'{path.name}: launch/{text} missing'


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_every_package_node_shuts_the_launch_down_when_it_exits(path):
    nodes = [n for n in calls(ast.parse(path.read_text()), 'Node')
             if ast.literal_eval(keyword(n, 'package')) == 'ubot_lidar_sim']
    assert nodes
    for node in nodes:
        on_exit = keyword(node, 'on_exit')
        assert on_exit is not None and calls(ast.Module(body=[ast.Expr(on_exit)],
                                                        type_ignores=[]), 'Shutdown')


def test_rviz_starts_only_on_request_and_only_when_installed():
    tree = tree_of('sensors.launch.py')
    rviz = [n for n in calls(tree, 'Node') if ast.literal_eval(keyword(n, 'package')) == 'rviz2']
    assert len(rviz) == 1
    owner = next(f for f in tree.body if isinstance(f, ast.FunctionDef)
                 and rviz[0] in list(ast.walk(f)))
    # The function runs only under rviz:=true ...
    opaque = [c for c in calls(tree, 'OpaqueFunction')
              if getattr(keyword(c, 'function'), 'id', None) == owner.name]
    assert len(opaque) == 1
    condition = keyword(opaque[0], 'condition')
    assert ast.unparse(condition) == "IfCondition(LaunchConfiguration('rviz'))"
    # ... and returns one LogInfo line instead of rviz2 when the package is not installed.
    guarded = [t for t in ast.walk(owner) if isinstance(t, ast.Try)
               and any(getattr(h.type, 'id', '') == 'PackageNotFoundError' for h in t.handlers)]
    assert guarded and calls(guarded[0], 'get_package_prefix')
    assert calls(guarded[0].handlers[0], 'LogInfo')


def yaml_parameters(name):
    doc = yaml.safe_load((ROOT / 'config' / f'{name}.yaml').read_text())
    assert len(doc) == 1, f'config/{name}.yaml: one node entry expected'
    key, entry = next(iter(doc.items()))
    assert key in (name, f'/**/{name}', '/**'), f'config/{name}.yaml: key {key!r}'
    return entry['ros__parameters']


@pytest.mark.parametrize('name', ['lidar_3d', 'laser_scan', 'terrain_sensor', 'demo_driver',
                                  'base_sim'])
def test_every_yaml_parameter_is_declared_by_the_node(name):
    params = yaml_parameters(name)
    declared = {f.name for f in flat_fields(NODE_CONFIGS[name])}
    # The values must also build a valid config (types and ranges of the config).
    NODE_CONFIGS[name](**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()
                          if k not in ROS_BUILTIN_PARAMETERS})
    unknown = set(params) - declared - ROS_BUILTIN_PARAMETERS
    assert not unknown, f'config/{name}.yaml: undeclared parameters {sorted(unknown)}'
