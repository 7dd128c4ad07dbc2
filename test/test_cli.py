"""Offline CLI (docs/cli-and-datasets.md): outputs, determinism, frames, one-line errors (2)."""

import json

import numpy as np
import open3d as o3d
import pytest

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE
from ubot_lidar_sim.output import atomic
from ubot_lidar_sim.pipeline import writers

WORLD = """frame: map
objects:
  - {name: ground, type: plane, size_m: [100, 100], material: grass}
  - {name: wall, type: box, size_m: [0.2, 20, 4], pose: {xyz: [8.1, 0, 2]}, material: concrete}
  - {name: bush, type: sphere, radius_m: 0.8, pose: {xyz: [4, 2, 1]}, material: shrub}
"""
SMALL = ['--set', 'channels=4', '--set', 'horizontal_samples=120']


@pytest.fixture()
def world(tmp_path):
    path = tmp_path / 'world.yaml'
    path.write_text(WORLD)
    return str(path)


def _scan(tmp_path, world, name, *extra):
    out = tmp_path / name
    assert main(['scan', '--world', world, '--out', str(out), *SMALL, *extra]) == 0
    return out


def _fails(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err
    return err


def test_scan_writes_every_full_field_plus_stamp_and_pose(tmp_path, world):
    out = _scan(tmp_path, world, 'a.npz', '--rain', '5')
    data = np.load(out)
    assert set(FULL_DTYPE.names) | {'stamp_s', 'sensor_pose'} == set(data.files)
    assert data['x'].dtype == np.float32 and data['ring'].dtype == np.uint16
    assert data['x'].size > 0
    # bound: float64 poses saved and read back exactly; default rtol 1e-7
    np.testing.assert_allclose(data['sensor_pose'][:3, 3], [0, 0, 1.5])
    assert float(data['stamp_s']) == 0.0


def test_same_seed_is_byte_identical_and_another_seed_differs(tmp_path, world):
    noise = ['--set', 'range_noise_std_m=0.05', '--rain', '8']
    a = _scan(tmp_path, world, 'a.npz', '--seed', '3', *noise).read_bytes()
    b = _scan(tmp_path, world, 'b.npz', '--seed', '3', *noise).read_bytes()
    c = _scan(tmp_path, world, 'c.npz', '--seed', '4', *noise).read_bytes()
    assert a == b
    assert a != c


def test_compute_workers_split_the_frames_over_processes_with_the_same_bytes(tmp_path, world):
    moving = ['--frames', '2', '--twist', '1', '0', '0', '0', '0', '10', '--rain', '8',
              '--set', 'sub_rays=7']
    _scan(tmp_path, world, 'one.npz', *moving)
    _scan(tmp_path, world, 'two.npz', *moving, '--set', 'compute_workers=2')
    for k in (0, 1):
        one = (tmp_path / f'one_{k:04d}.npz').read_bytes()
        assert len(np.load(tmp_path / f'one_{k:04d}.npz')['x']) > 100
        assert one == (tmp_path / f'two_{k:04d}.npz').read_bytes()


def test_frames_get_numbered_names_stamps_and_continuing_noise(tmp_path, world):
    _scan(tmp_path, world, 'f.npz', '--frames', '2', '--twist', '1', '0', '0', '0', '0', '0',
          '--set', 'range_noise_std_m=0.05')
    f0, f1 = np.load(tmp_path / 'f_0000.npz'), np.load(tmp_path / 'f_0001.npz')
    assert not (tmp_path / 'f.npz').exists()
    assert (float(f0['stamp_s']), float(f1['stamp_s'])) == (0.0, 0.1)
    # bound: float64 poses saved and read back exactly; default rtol 1e-7
    np.testing.assert_allclose(f1['sensor_pose'][0, 3], 0.1)
    assert f0['range'].tobytes() != f1['range'].tobytes()


def test_ply_output_has_one_vertex_property_per_field(tmp_path, world):
    ply = _scan(tmp_path, world, 'p.ply', '--seed', '1')
    npz = _scan(tmp_path, world, 'p.npz', '--seed', '1')
    header = ply.read_bytes().split(b'end_header')[0].decode()
    for name in FULL_DTYPE.names:
        assert f' {name}\n' in header
    cloud = o3d.t.io.read_point_cloud(str(ply))
    ref = np.load(npz)
    assert cloud.point.positions.shape[0] == ref['x'].size
    np.testing.assert_array_equal(cloud.point['ring'].numpy()[:, 0], ref['ring'])
    np.testing.assert_array_equal(cloud.point['range'].numpy()[:, 0], ref['range'])


def test_ply_of_an_empty_sweep_is_a_valid_header(tmp_path):
    empty = tmp_path / 'empty.yaml'
    empty.write_text('frame: map\nobjects: []\n')
    ply = _scan(tmp_path, str(empty), 'e.ply')
    assert b'element vertex 0' in ply.read_bytes()
    assert o3d.t.io.read_point_cloud(str(ply)).point.positions.shape[0] == 0


def test_laser_scan_json_and_npz(tmp_path, world):
    js = tmp_path / 'l.json'
    assert main(['scan', '--sensor', 'laser_scan', '--world', world, '--out', str(js)]) == 0
    data = json.loads(js.read_text())
    # Rays from 0 deg (docs/presets.md): the wall 8 m ahead at index 0, nothing behind (180 deg).
    assert len(data['ranges']) == 360 and data['ranges'][180] == float('inf')
    # bound: 5 cm, a range of the geometric model at 8 m (noise off)
    np.testing.assert_allclose(data['ranges'][0], 8.0 - 0.0, atol=0.05)
    npz = tmp_path / 'l.npz'
    assert main(['scan', '--sensor', 'laser_scan', '--world', world, '--out', str(npz)]) == 0
    assert {'ranges', 'intensities', 'angle_min', 'angle_max', 'angle_increment', 'range_min',
            'range_max', 'time_increment', 'scan_time'} <= set(np.load(npz).files)


def test_terrain_json_has_the_message_fields(tmp_path, world):
    out = tmp_path / 't.json'
    assert main(['scan', '--sensor', 'terrain_sensor', '--world', world, '--out', str(out),
                 '--set', 'tire_radii_m=[0.3,0.3,0.3,0.3]', '--pose', '0', '0', '0.5', '0', '0',
                 '0']) == 0
    data = json.loads(out.read_text())
    # bound: vertical rays on z = 0 of exact vertices (test_terrain): < 1e-6 m
    np.testing.assert_allclose(data['tire_hit_dist'], [0.2] * 4, atol=1e-5)
    assert data['hit_flg'] == [0, 1, 1, 1, 1] and data['veh_hit_dist'] == float('inf')


def test_presets_lists_one_line_each(capsys):
    assert main(['presets']) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [ln.split()[0] for ln in lines][:1] == ['custom'] and len(lines) >= 6
    assert any(ln.startswith('velodyne_vlp16 ') for ln in lines)


def test_describe_prints_settings_threshold_and_models(capsys):
    assert main(['describe', '--sensor', 'lidar_3d', '--set', 'preset=ouster_os1_64']) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['settings']['channels'] == 64
    assert data['detection_threshold_counts'] > 0
    assert {'beam', 'echo', 'signal', 'return_selection', 'intensity', 'weather',
            'material'} <= set(data['models'])


def test_too_many_rays_exits_2_with_one_line_naming_both_numbers(tmp_path, capsys):
    err = _fails(capsys, ['scan', '--set', 'channels=128', '--set', 'horizontal_samples=1024',
                          '--out', str(tmp_path / 'x.npz')])
    assert 'max_rays_per_scan' in err and '131072' in err and '65536' in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('argv, word', [
    (['--set', 'channels=0'], 'channels'),
    (['--set', 'no_such_param=1'], 'no_such_param'),
    (['--set', 'novalue'], '--set'),
    (['--set', 'preset=hdl64'], 'velodyne_vlp16'),
    (['--params', '/nonexistent/p.yaml'], '--params'),
    (['--world', '/nonexistent/w.yaml'], 'w.yaml'),
    (['--sensor', 'radar'], '--sensor'),
    (['--frames', '0'], '--frames'),
    (['--rain', '1e9'], '--rain: got 1000000000.0, allowed 0 to 500 mm/h'),
    (['--rain', '-1'], '--rain'),
    (['--visibility', '0.5'], '--visibility: got 0.5, allowed inf (clear) or >= 1 m'),
])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, argv, word):
    err = _fails(capsys, ['scan', '--out', str(tmp_path / 'x.npz'), *argv])
    assert word in err
    assert list(tmp_path.iterdir()) == []


def test_bad_yaml_params_file_exits_2(tmp_path, capsys):
    bad = tmp_path / 'bad.yaml'
    bad.write_text('lidar_3d: [unclosed\n')
    err = _fails(capsys, ['scan', '--params', str(bad), '--out', str(tmp_path / 'x.npz')])
    assert '--params' in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ['bad.yaml']


def test_wrong_extension_for_the_sensor_exits_2(tmp_path, capsys):
    err = _fails(capsys, ['scan', '--sensor', 'terrain_sensor', '--out', str(tmp_path / 'x.ply')])
    assert '--out' in err and '.json' in err


def test_a_new_output_format_is_one_registration(tmp_path, world, monkeypatch, capsys):
    seen = []

    def write_txt(path, result, cfg, sensor):
        seen.append((path.name, sensor, cfg.channels, len(result.points) > 0))

    monkeypatch.setitem(writers.WRITERS, '.txt', None)     # undone: the entry leaves WRITERS
    writers.register_frame_format('.txt', write_txt, ('lidar_3d',))
    _scan(tmp_path, world, 'a.txt', '--frames', '2')
    assert seen == [('a_0000.txt', 'lidar_3d', 4, True), ('a_0001.txt', 'lidar_3d', 4, True)]
    assert capsys.readouterr().err.startswith('scan: 2 sweeps of lidar_3d (')   # the summary
    err = _fails(capsys, ['scan', '--sensor', 'laser_scan', '--out', str(tmp_path / 'b.txt')])
    assert 'allowed a file ending in .npz or .json or .mcap for --sensor laser_scan' in err


def test_a_writer_that_fails_leaves_neither_the_file_nor_its_temporary(tmp_path):
    def write(tmp):
        with open(tmp, 'w') as f:
            f.write('half')
        raise OSError('disk full')

    with pytest.raises(OSError, match='disk full'):
        atomic.atomic_write(tmp_path / 'x.npz', write)
    assert list(tmp_path.iterdir()) == []
