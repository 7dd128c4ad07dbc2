"""Bad inputs, each refused on one line naming the key, the value and what is allowed."""

import ast
from pathlib import Path

import pytest
from test_dataset_faults import _one_line
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import ConfigError, WorldError
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World
from ubot_lidar_sim.core.yaml_io import parse
from ubot_lidar_sim.dataset import ray_pool
from ubot_lidar_sim.pipeline.fleet import robots_argument

ROOT = Path(__file__).resolve().parents[2]
BOX = {'name': 'a', 'type': 'box', 'size_m': [1, 1, 1]}


def _world(motion, **box):
    return World.from_dict({'objects': [], 'actors': [{**BOX, **box, 'motion': motion}]},
                           materials=MaterialTable.load())


def test_a_yaml_exponent_without_a_dot_is_a_number():
    assert parse('a: 1e9\nb: -2E-3\nc: 3\nd: e9') == {'a': 1e9, 'b': -2e-3, 'c': 3, 'd': 'e9'}


@pytest.mark.parametrize('motion, where', [
    ({'waypoints': [[0, 0, 0], [1, 'x', 0]], 'speed_m_s': 1},
     r'motion\.waypoints\[1\]: expected a list of 3 numbers'),
    ({'pose': [0, 0, 0, 0, 0, 0], 'waypoints': [[0, 0, 0], [1, 0, 0]], 'speed_m_s': 1},
     r'motion: expected one of frame, pose .*got pose and waypoints'),
    ({'pose': [0, 0, 0, 0, 0, 0], 'twist': [1e6, 0, 0, 0, 0, 0]},
     r'motion\.twist: expected a speed < 1000 m/s'),
])
def test_a_bad_motion_names_the_key_that_is_wrong(motion, where):
    with pytest.raises(WorldError, match=where) as info:
        _world(motion)
    assert '\n' not in str(info.value)


def test_a_shape_pose_plus_a_motion_pose_beyond_the_world_span_is_refused():
    with pytest.raises(WorldError, match=r'motion\.pose: .*beyond the 1e\+06 m'):
        _world({'pose': [9e5, 0, 0, 0, 0, 0]}, pose={'xyz': [9e5, 0, 0]})


def test_an_address_port_beyond_65535_is_refused_as_a_port():
    with pytest.raises(ConfigError, match=r'--address.*PORT 1-65535') as info:
        ray_pool.check_address('127.0.0.1:99999')
    assert 'refused' not in str(info.value)


def test_semantickitti_refuses_an_out_named_like_a_file(tmp_path, capsys):
    out = tmp_path / 'x.pcd'
    assert main(['scan', '--world', 'flat', '--format', 'semantickitti', '--out', str(out)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert '--out' in line and 'directory' in line, line
    assert not out.exists()


@pytest.mark.parametrize('text', ['0', '-1', 'abc', '6'])
def test_a_bad_robots_launch_argument_is_one_line_naming_robots(text):
    with pytest.raises(ValueError, match=rf'robots: got .*{text}.*allowed an int 1-5'):
        robots_argument(text)


@pytest.mark.parametrize('name', ['demo.launch.py', 'sensors.launch.py'])
def test_the_launch_files_read_robots_through_the_checked_parser(name):
    tree = ast.parse((ROOT / 'launch' / name).read_text())
    ints = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and getattr(n.func, 'id', '') == 'int' and 'robots' in ast.dump(n)]
    parsed = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
              and getattr(n.func, 'id', '') == 'robots_argument']
    assert not ints and parsed
