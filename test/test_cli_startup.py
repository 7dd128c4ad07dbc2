"""The CLI answers at once: presets, --help and argument errors load no heavy module."""

import re
import subprocess
import sys

import pytest

HEAVY = ('open3d', 'matplotlib', 'numba', 'ray', 'rclpy', 'pypcd4')

_PROBE = """
import contextlib, io, sys
from ubot_lidar_sim.cli import main
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print(code, *[m for m in %r if m in sys.modules])
""" % (HEAVY,)


def _loaded(*argv):
    """Return (exit code, heavy modules loaded) of the CLI run with argv in a fresh process."""
    r = subprocess.run([sys.executable, '-c', _PROBE, *argv], capture_output=True, text=True,
                       timeout=120, check=True)
    code, *loaded = r.stdout.split()
    return int(code), loaded


@pytest.mark.parametrize('argv', [('presets',), ('--help',), ('run', '--help'),
                                  ('scan', '--help'), ('dataset', '--help'), ('view', '--help'),
                                  ()])
def test_presets_and_help_load_no_heavy_module(argv):
    code, loaded = _loaded(*argv)
    assert code == (2 if not argv else 0)
    assert loaded == []


def test_a_bad_parameter_is_answered_without_loading_open3d_or_numba():
    code, loaded = _loaded('scan', '--out', 'x.npz', '--set', 'sub_ray=3')
    assert (code, loaded) == (2, [])


def test_view_of_a_missing_file_is_refused_without_loading_rclpy(tmp_path):
    # A file that is not there is refused before the viewer opens: no rclpy (the live mode's).
    code, loaded = _loaded('view', str(tmp_path / 'missing.mcap'))
    assert (code, loaded) == (2, [])


def test_describe_loads_no_world_and_so_no_open3d():
    code, loaded = _loaded('describe', '--sensor', 'laser_scan')
    assert code == 0
    assert 'open3d' not in loaded and 'rclpy' not in loaded and 'ray' not in loaded


@pytest.mark.parametrize('sensor', ['lidar_3d', 'laser_scan', 'terrain_sensor'])
def test_describe_loads_neither_the_kernels_nor_the_pcd_writer(sensor):
    # The model texts live in modules without numba; JSON needs no file writer (pypcd4).
    code, loaded = _loaded('describe', '--sensor', sensor)
    assert code == 0
    assert 'numba' not in loaded and 'pypcd4' not in loaded


def _cli(*argv):
    return subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', *argv], capture_output=True,
                          text=True, timeout=120)


def test_help_lists_every_command_run_included_with_examples():
    r = _cli('--help')
    for name in ('scan', 'describe', 'presets', 'dataset', 'run', 'view'):
        assert name in r.stdout
    assert 'examples:' in r.stdout


@pytest.mark.parametrize('command', ['scan', 'describe', 'presets', 'dataset', 'run', 'view'])
def test_every_command_help_shows_an_example(command):
    r = _cli(command, '--help')
    assert r.returncode == 0
    assert re.search(rf'examples?:\n  python -m ubot_lidar_sim {command}\b', r.stdout)
    assert '``' not in r.stdout


def test_a_bare_call_names_the_commands_on_one_line():
    r = _cli()
    assert r.returncode == 2
    assert r.stderr.count('\n') == 1
    assert 'name a command: scan, describe, presets, dataset, run, view' in r.stderr


def test_a_scan_of_several_frames_ends_with_a_one_line_summary(tmp_path):
    r = _cli('scan', '--world', 'flat', '--set', 'channels=4', '--set', 'horizontal_samples=64',
             '--frames', '3', '--out', str(tmp_path / 'f.npz'))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count('\n') == 1
    assert re.match(r'scan: 3 sweeps of lidar_3d \(\d+ returns: points and '
                    r'ranges hit, every sensor\) in ', r.stderr)
