"""sim.launch.py, read statically (launch_ros need not be installed): contract arguments, nodes."""

import ast
from pathlib import Path

import pytest

from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.pipeline import launch_args
from ubot_lidar_sim.pipeline.fleet import MAX_ROBOTS
from ubot_lidar_sim.pipeline.sim_fleet import SPACING_M

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / 'launch' / 'sim.launch.py'


def _tree():
    return ast.parse(SIM.read_text())


def _constant(tree, name):
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], 'id', '') == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f'no module-level {name}')


def test_sim_launch_declares_the_contract_arguments():
    args = _constant(_tree(), 'ARGUMENTS')
    assert {'world_file', 'use_sim_time', 'real_time_factor', 'preset'} <= set(args)
    assert args['use_sim_time'][0] == 'true'
    assert float(args['robot_spacing_m'][0]) == SPACING_M


def test_sim_launch_starts_base_sim_and_includes_the_three_sensors():
    text = SIM.read_text()
    assert "executable='base_sim_node'" in text and "name='base_sim'" in text
    assert "'sensors.launch.py'" in text
    passed = _constant(_tree(), 'SENSOR_ARGUMENTS')
    assert {'world_file', 'use_sim_time', 'preset'} <= set(passed)


def test_real_time_factor_max_is_zero_and_a_number_is_itself():
    rtf = launch_args.real_time_factor
    assert rtf('max') == 0.0 and rtf('MAX') == 0.0 and rtf('5') == 5.0
    # The parameter takes 0 as 'max' (core/motion/config.py).
    assert BaseSimConfig(real_time_factor=rtf('max')).real_time_factor == 0.0


def test_argument_errors_name_the_argument_the_value_and_what_is_allowed():
    cases = {'drive': ('tank', launch_args.drive, 'diff, omni, ackermann'),
             'initial_pose': ('1 2', launch_args.initial_pose, 'x y yaw_deg'),
             'real_time_factor': ('fast', launch_args.real_time_factor, "'max'"),
             'use_sim_time': ('yes', lambda t: launch_args.boolean('use_sim_time', t),
                              'true or false'),
             'robots': ('6', launch_args.fleet_robots, 'an int 1-5')}
    for name, (value, parse, allowed) in cases.items():
        with pytest.raises(launch_args.LaunchArgumentError) as err:
            parse(value)
        line = str(err.value)
        assert line.startswith(f'{name}:={value!r} refused') and allowed in line, line
        assert '\n' not in line


def test_robots_takes_1_to_the_fleet_limit():
    assert [launch_args.fleet_robots(str(n)) for n in range(1, MAX_ROBOTS + 1)] == \
        list(range(1, MAX_ROBOTS + 1))
    for text in ('0', str(MAX_ROBOTS + 1), 'two'):
        with pytest.raises(launch_args.LaunchArgumentError, match=f'robots:=.* 1-{MAX_ROBOTS}'):
            launch_args.fleet_robots(text)


def test_fleet_start_poses_are_spaced_to_the_left_of_robot_1_unless_all_are_given():
    assert launch_args.start_poses(3, '', '', '4.0') == [[0, 0, 0], [0, 4, 0], [0, 8, 0]]
    # Robot 1 facing +y (yaw 90 deg): its left is -x. bound: cos(pi / 2) * 3 m is 1.8e-16 m in
    # doubles, not 0.
    poses = launch_args.start_poses(2, '1 2 90', '', '3')
    assert poses[0] == [1, 2, 90] and poses[1] == pytest.approx([-2, 2, 90], abs=1e-12)
    assert launch_args.start_poses(2, '9 9 9', '0 0 0; 5 5 90', '4') == [[0, 0, 0], [5, 5, 90]]
    with pytest.raises(launch_args.LaunchArgumentError, match='initial_poses.*2 poses'):
        launch_args.start_poses(2, '', '0 0 0', '4')
    with pytest.raises(launch_args.LaunchArgumentError, match='robot_spacing_m'):
        launch_args.start_poses(2, '', '', '0')


def test_initial_pose_takes_a_yaml_list_or_three_numbers_separated_by_spaces():
    assert launch_args.initial_pose('[1, 2, 30]') == [1.0, 2.0, 30.0]
    assert launch_args.initial_pose('1 2 30') == [1.0, 2.0, 30.0]
    for bad in ('[1, 2, nan]', '1 2 3 4', 'x 2 3', ''):
        with pytest.raises(launch_args.LaunchArgumentError, match='initial_pose'):
            launch_args.initial_pose(bad)


class _Exited:
    """A launch ProcessExited's one field the rule reads."""

    def __init__(self, returncode):
        self.returncode = returncode


def test_a_node_that_exits_non_zero_fails_the_launch_a_clean_exit_shuts_it_down():
    actions = ['shutdown']
    rule = launch_args.exit_rule('base_sim', actions)
    assert rule(_Exited(0), None) is actions
    # launch/launch_service.py turns an exception of an event handler into exit code 1.
    with pytest.raises(RuntimeError, match='base_sim exited with code 2'):
        rule(_Exited(2), None)


def test_the_cmd_vel_type_default_follows_nav2_on_the_distro():
    assert launch_args.distro_cmd_vel_stamped('jazzy') is False
    assert launch_args.distro_cmd_vel_stamped('kilted') is True
    assert launch_args.distro_cmd_vel_stamped('rolling') is True


def test_every_node_of_sim_launch_fails_the_launch_on_a_non_zero_exit():
    for name in ('sim.launch.py', 'sensors.launch.py'):
        text = (ROOT / 'launch' / name).read_text()
        assert 'on_exit=exit_rule(' in text or 'on_exit=launch_args.exit_rule(' in text, name
