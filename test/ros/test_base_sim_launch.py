"""sim.launch.py, read statically (launch_ros need not be installed): contract arguments, nodes."""

import ast
from pathlib import Path

from ubot_lidar_sim.core.motion.config import BaseSimConfig

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / 'launch' / 'sim.launch.py'


def _tree():
    return ast.parse(SIM.read_text())


def _constant(tree, name):
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f'no module-level {name}')


def _function(tree, name):
    """Return a module-level function of the launch file, compiled alone (no imports)."""
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    scope = {}
    exec(compile(ast.Module(body=[node], type_ignores=[]), str(SIM), 'exec'), scope)
    return scope[name]


def test_sim_launch_declares_the_contract_arguments():
    args = _constant(_tree(), 'ARGUMENTS')
    assert {'world_file', 'use_sim_time', 'real_time_factor', 'preset'} <= set(args)
    assert args['use_sim_time'][0] == 'true'


def test_sim_launch_starts_base_sim_and_includes_the_three_sensors():
    text = SIM.read_text()
    assert "executable='base_sim_node'" in text and "name='base_sim'" in text
    assert "'sensors.launch.py'" in text
    passed = _constant(_tree(), 'SENSOR_ARGUMENTS')
    assert {'world_file', 'use_sim_time', 'preset'} <= set(passed)


def test_real_time_factor_max_is_zero_and_a_number_is_itself():
    rtf = _function(_tree(), 'real_time_factor')
    assert rtf('max') == 0.0 and rtf('MAX') == 0.0 and rtf('5') == 5.0
    # The parameter takes 0 as 'max' (core/motion/config.py).
    assert BaseSimConfig(real_time_factor=rtf('max')).real_time_factor == 0.0
