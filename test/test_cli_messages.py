"""Errors in the user's words: parameter names, did-you-mean, presets by kind, world names."""

import os
import subprocess
import sys

import pytest

_TREE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cli(*argv, cwd):
    """Run the CLI from cwd (the source tree on PYTHONPATH); return the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (_TREE, os.environ.get('PYTHONPATH', '')) if p))
    return subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', *argv], capture_output=True,
                          text=True, timeout=300, cwd=cwd, env=env)


def _one_error_line(r):
    assert r.returncode == 2
    assert r.stderr.count('\n') == 1, r.stderr
    return r.stderr


def test_a_misspelled_parameter_names_the_node_and_the_close_match(tmp_path):
    line = _one_error_line(_cli('scan', '--out', 'x.npz', '--set', 'sub_ray=3', cwd=tmp_path))
    assert ('sub_ray: got 3, allowed a lidar_3d parameter name (docs/parameters.md) '
            "(did you mean 'sub_rays'?)") in line
    assert 'LidarConfig' not in line


def test_a_misspelled_lidar_preset_lists_only_lidar_presets_and_the_close_match(tmp_path):
    line = _one_error_line(_cli('scan', '--out', 'x.npz', '--set', 'preset=velodyne_vlp61',
                                cwd=tmp_path))
    assert 'a lidar_3d preset: custom, ' in line
    assert "(did you mean 'velodyne_vlp16'?)" in line
    assert 'sick_tim571' not in line and 'hokuyo' not in line


def test_a_misspelled_laser_preset_lists_only_laser_presets(tmp_path):
    line = _one_error_line(_cli('scan', '--sensor', 'laser_scan', '--out', 'x.json',
                                '--set', 'preset=sick_tim57', cwd=tmp_path))
    assert "(did you mean 'sick_tim571'?)" in line
    assert 'velodyne' not in line


@pytest.mark.parametrize('world', ['nowhere.yaml', 'exampel', 'config/worlds/example.yaml'])
def test_an_unreadable_world_is_one_wording_that_lists_the_built_in_names(tmp_path, world):
    line = _one_error_line(_cli('scan', '--out', 'x.npz', '--world', world, cwd=tmp_path))
    assert f"world_file: cannot read '{world}' (no such file from {tmp_path})" in line
    assert 'or a built-in world: demo, flat, example' in line


def test_a_misspelled_world_name_gets_the_close_match(tmp_path):
    line = _one_error_line(_cli('scan', '--out', 'x.npz', '--world', 'exampel', cwd=tmp_path))
    assert "(did you mean 'example'?)" in line


def test_the_example_world_is_found_by_name_from_any_directory(tmp_path):
    r = _cli('scan', '--sensor', 'laser_scan', '--world', 'example', '--out', 'scan.json',
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / 'scan.json').stat().st_size > 0


def test_a_relative_world_path_resolves_against_the_working_directory(tmp_path):
    (tmp_path / 'w').mkdir()
    (tmp_path / 'w' / 'tiny.yaml').write_text(
        'frame: map\nobjects:\n  - {name: ground, type: plane, size_m: [20, 20], '
        'material: grass}\n')
    r = _cli('scan', '--sensor', 'laser_scan', '--world', 'w/tiny.yaml', '--out', 'scan.json',
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_sensor_prefixed_misspelling_gets_the_close_match_with_one_sensor(tmp_path):
    line = _one_error_line(_cli('scan', '--out', 'x.npz', '--set', 'lidar_3d:sub_ray=3',
                                cwd=tmp_path))
    assert ('sub_ray: got 3, allowed a lidar_3d parameter name (docs/parameters.md) '
            "(did you mean 'sub_rays'?)") in line


def test_a_misspelled_preset_of_run_is_one_sentence(tmp_path):
    line = _one_error_line(_cli('run', '--preset', 'velodyne_vlp61', cwd=tmp_path))
    assert line.count("got 'velodyne_vlp61'") == 1, line
    assert "(did you mean 'velodyne_vlp16'?)" in line


def test_a_laser_scan_summary_counts_the_ranges_that_hit(tmp_path):
    r = _cli('scan', '--sensor', 'laser_scan', '--world', 'example', '--frames', '2',
             '--out', 's.json', cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert 'scan: 2 sweeps of laser_scan (0 returns' not in r.stderr
    assert 'returns: points and ranges hit, every sensor' in r.stderr


def test_a_file_output_in_a_missing_folder_makes_the_folder(tmp_path):
    r = _cli('scan', '--sensor', 'laser_scan', '--world', 'example', '--out', 'out/new/s.json',
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / 'out' / 'new' / 's.json').is_file()
