"""
Recordings (scan --out x.mcap, dataset): bounded memory, size limits, ROS names, Ctrl-C, errors.

Each CLI case runs ``python -m ubot_lidar_sim`` in a fresh process, as a user would. Faults are
made here: a real SIGINT to the process group (what Ctrl-C in a terminal sends), a full tmpfs
in a private mount namespace (test_cli_outputs.in_small_tmpfs).
"""

import glob
import os
import signal
import subprocess
import sys
import time

from builders import write_spec
import numpy as np
import pytest
from rel_helpers import cli_argv, ROOT
from test_cli_outputs import in_small_tmpfs, needs_root
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset.outdir import LOCK
from ubot_lidar_sim.dataset.spec import MAX_SEQUENCES
from ubot_lidar_sim.output.files import NpzStream, write_npz
from ubot_lidar_sim.output.ros_names import check_tf_tree, topic_problem
from ubot_lidar_sim.pipeline.record import MAX_FRAMES, MAX_TF_TICKS

VLP16 = ('scan', '--set', 'preset=velodyne_vlp16', '--world', 'demo')
SMALL_LIDAR = {'type': 'lidar_3d', 'params': {'channels': 4, 'horizontal_samples': 90}}
SPEC = {'worlds': ['flat'], 'frames': 2, 'sensors': [SMALL_LIDAR]}

# Runs in its own process: its RUSAGE_CHILDREN peak is the CLI's alone (and the compute
# children's it waited for), not that of every process this test session started.
_PEAK_RSS = r"""
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_rss_mb(argv):
    r = subprocess.run([sys.executable, '-c', _PEAK_RSS, *map(str, argv)], capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return int(r.stdout) / 1024     # ru_maxrss is in kB on Linux


def _one_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and 'Traceback' not in r.stderr, r.stderr
    return lines[0]


def _cli(*args, timeout=120):
    return subprocess.run(cli_argv(*args), capture_output=True, text=True, cwd=ROOT,
                          timeout=timeout)


def test_scan_to_mcap_peak_memory_does_not_grow_with_the_frames(tmp_path):
    # Before: 347 / 465 / 726 MB for 20 / 200 / 600 frames, +0.65 MB a VLP-16 sweep on the
    # demo world (every sweep stayed alive through a label view): 150 frames would add ~95 MB.
    # bound: 30 MB, for allocator and page-cache noise between two runs (measured: +2 MB).
    few = _peak_rss_mb(cli_argv(*VLP16, '--frames', '3', '--out', tmp_path / 'few.mcap'))
    many = _peak_rss_mb(cli_argv(*VLP16, '--frames', '150', '--out', tmp_path / 'many.mcap'))
    assert many - few < 30, (few, many)


@pytest.mark.parametrize('extra,expected', [
    (('--frames', '1000000000'), f'--frames: got 1000000000, allowed an integer 1-{MAX_FRAMES}'),
    # A sweep of 1e9 s: 1e11 /tf messages at 100 Hz.
    (('--set', 'rate_hz=1.0e-9', '--frames', '1'),
     f'--frames: got 1, allowed a recording of at most {MAX_TF_TICKS} /tf messages'),
])
def test_a_recording_too_large_to_work_exits_2_with_one_line_and_no_file(
        tmp_path, extra, expected):
    line = _one_line(_cli(*VLP16, *extra, '--out', tmp_path / 'x.mcap'))
    assert expected in line, line
    assert os.listdir(tmp_path) == []


def _dataset_error(tmp_path, capsys, **change):
    path = write_spec(tmp_path, {**SPEC, **change})
    assert main(['dataset', str(path), '--out', str(tmp_path / 'o'), '--workers', '1',
                 '--quiet']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err and str(path) in err, err
    assert not (tmp_path / 'o').exists()
    return err


def test_a_spec_of_100000_frames_with_tf_at_10_khz_is_refused_before_recording(
        tmp_path, capsys):
    err = _dataset_error(tmp_path, capsys, frames=100000, tf_rate_hz=10000)
    assert f'frames: got 100000, allowed a recording of at most {MAX_TF_TICKS} /tf' in err
    assert '1e+08 messages at 10000 Hz' in err


def test_a_spec_whose_grids_expand_to_1e9_sequences_is_refused_before_expanding(
        tmp_path, capsys):
    err = _dataset_error(tmp_path, capsys, seeds=list(range(1000)), weather={'grid': {
        'rain_mm_h': list(range(1000)), 'visibility_m': list(range(1, 1001))}})
    assert '1 x 1 x 1000 x 1000 x 1000 = 1e+09 sequences' in err
    assert f'allowed at most {MAX_SEQUENCES}' in err


TOPIC_REFUSED = ("sensors[0].topic: expected a fully qualified ROS topic name: '/' then tokens of "
                 "ASCII letters, digits and '_' separated by single '/', no token starting with a "
                 "digit, no trailing '/', at most 247 characters (")


def _lidar(name, frame_id=None, mount=(0, 0, 1, 0, 0, 0), topic=None):
    params = dict(SMALL_LIDAR['params'], **({'frame_id': frame_id} if frame_id else {}))
    out = {'type': 'lidar_3d', 'name': name, 'mount': list(mount), 'params': params}
    return {**out, 'topic': topic} if topic else out


@pytest.mark.parametrize('change,expected', [
    ({'base_frame': 'map'}, "base_frame: got 'map', allowed a frame other than its parent "
     "'map'"),
    ({'sensors': [_lidar('a', frame_id='map')]},
     "frame_id of sensor 'a': got 'map', allowed a frame that is neither 'base_link' nor one "
     'of its ancestors'),
    ({'sensors': [_lidar('a', 'lidar'), _lidar('b', 'lidar', (0, 0, 2, 0, 0, 0), '/b')]},
     "frame_id of sensor 'b': got 'lidar', allowed a frame of its own: 'lidar' already has a "
     "transform from 'base_link'"),
    ({'sensors': [_lidar('a', frame_id='/lidar')]},
     "frame_id of sensor 'a': got '/lidar', allowed a tf2 frame id"),
    ({'base_frame': '/base_link'}, 'base_frame: expected a tf2 frame id'),
    *[({'sensors': [_lidar('a', topic=t)]}, (TOPIC_REFUSED, f'), got {t!r}'))
      for t in ('/a b', '/', '/points/', '/1x', '/tf/')],
    ({'sensors': [_lidar('a', topic='/tf')]}, 'sensors[0].topic: expected a topic of its own'),
], ids=['base_frame_is_world_frame', 'sensor_frame_is_world_frame', 'one_frame_two_mounts',
        'leading_slash', 'base_frame_leading_slash', 'topic_space', 'topic_slash',
        'topic_trailing_slash', 'topic_token_digit', 'topic_tf_slash', 'topic_reserved'])
def test_a_spec_that_would_record_an_invalid_bag_exits_2_naming_the_key(
        tmp_path, capsys, change, expected):
    err = _dataset_error(tmp_path, capsys, **change)
    for part in expected if isinstance(expected, tuple) else (expected,):
        assert part in err, err


def test_two_sensors_on_one_frame_with_one_mount_record_one_static_transform(tmp_path):
    from rosbags.highlevel import AnyReader

    path = write_spec(tmp_path, {**SPEC, 'sensors': [_lidar('a', 'lidar'),
                                                     _lidar('b', 'lidar', topic='/b')]})
    assert main(['dataset', str(path), '--out', str(tmp_path / 'o'), '--workers', '1',
                 '--quiet']) == 0
    with AnyReader([tmp_path / 'o' / 'seq_0000.mcap']) as reader:
        statics = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages()
                   if c.topic == '/tf_static']
    assert [[t.child_frame_id for t in m.transforms] for m in statics] == [['lidar']]


@pytest.mark.parametrize('sets,expected', [
    (('--set', 'frame_id=/lidar'), "frame_id of sensor 'lidar_3d': got '/lidar', allowed a "
     'tf2 frame id'),
    (('--set', 'world_frame=base_link'), "base_frame: got 'base_link', allowed a frame other "
     "than its parent 'base_link'"),
    (('--sensor', 'all', '--set', 'lidar_3d:frame_id=map'), "frame_id of sensor 'lidar_3d': "
     "got 'map', allowed a frame that is neither 'base_link' nor one of its ancestors"),
    # The rig loads the lead sensor's world: another sensor's world was silently ignored.
    (('--sensor', 'all', '--set', 'laser_scan:world_file=demo'),
     "world_file of sensor 'laser_scan': got 'demo', allowed 'flat' as for 'lidar_3d'"),
], ids=['leading_slash', 'world_frame_is_base_frame', 'cycle', 'second_world'])
def test_scan_to_mcap_refuses_an_invalid_recording_with_one_line(tmp_path, sets, expected):
    line = _one_line(_cli('scan', *sets, '--out', tmp_path / 'x.mcap'))   # world: flat
    assert expected in line, line
    assert os.listdir(tmp_path) == []


NAMES = ['/points', '/a/b_c', '/_x', '/A1/b2', '/a b', '/', '/points/', '/1x', '/tf/', 'points',
         '/a//b', '/a/1b', '/a-b', '/ü', '~/x', '/{ns}/x', '', '/' + 'a' * 246, '/' + 'a' * 247]


@pytest.mark.parametrize('name', NAMES, ids=range(len(NAMES)))
def test_the_topic_rule_is_rmws_rule_for_a_fully_qualified_name(name):
    from rclpy.exceptions import InvalidTopicNameException
    from rclpy.validate_full_topic_name import validate_full_topic_name

    try:
        validate_full_topic_name(name)
        rmw_ok = True
    except InvalidTopicNameException:
        rmw_ok = False
    assert (topic_problem(name) is None) == rmw_ok, (name, topic_problem(name))


def test_the_tf_check_takes_a_repeated_edge_and_refuses_two_parents_and_a_cycle_of_three():
    check_tf_tree([('a', 'map', 'base', None), ('b', 'base', 'x', 1), ('c', 'base', 'x', 1)])
    with pytest.raises(ConfigError, match="^c: got 'x', allowed a frame of its own"):
        check_tf_tree([('a', 'map', 'x', 1), ('b', 'map', 'y', 1), ('c', 'y', 'x', 1)])
    with pytest.raises(ConfigError, match="^c: got 'x', allowed a frame of its own"):
        check_tf_tree([('a', 'map', 'x', 1), ('c', 'map', 'x', 2)])
    with pytest.raises(ConfigError, match="^c: got 'map', allowed a frame that is neither 'y'"):
        check_tf_tree([('a', 'map', 'x', 1), ('b', 'x', 'y', 1), ('c', 'y', 'map', 1)])


def test_ctrl_c_of_scan_to_mcap_prints_one_interrupted_line_exits_130_and_leaves_nothing(
        tmp_path):
    proc = subprocess.Popen(cli_argv(*VLP16, '--frames', '300', '--out', tmp_path / 'run.mcap'),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)
    try:
        end = time.monotonic() + 120
        while not glob.glob(str(tmp_path / '.run.mcap.*')) and time.monotonic() < end:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        time.sleep(1.0)                         # inside the recording, sweeps being written
        os.killpg(proc.pid, signal.SIGINT)      # as Ctrl-C in a terminal: the whole group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ['ubot_lidar_sim: interrupted: no output file was '
                                        'written or changed'], err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize('delay_s', [0.5, 1.5])
def test_ctrl_c_while_the_cli_starts_prints_one_line_and_exits_130(tmp_path, delay_s):
    proc = subprocess.Popen(cli_argv(*VLP16, '--out', tmp_path / 'run.mcap'),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True)
    time.sleep(delay_s)                         # numba, open3d and rclpy are loading
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert len(err.strip().splitlines()) == 1 and 'interrupted' in err, err


@needs_root
def test_a_serial_dataset_on_a_full_disk_names_the_sequence_file(tmp_path):
    spec = write_spec(tmp_path, {**SPEC, 'frames': 3, 'sensors': [{'type': 'lidar_3d', 'params': {
        'channels': 16, 'horizontal_samples': 900}}]})
    run, = in_small_tmpfs(tmp_path, '2m', [('fill', 0), ('cli', [
        'dataset', str(spec), '--out', 'MNT', '--workers', '1', '--quiet'])])
    lines = run['stderr'].strip().splitlines()
    assert run['code'] == 2 and len(lines) == 1, run
    assert 'seq_0000' in lines[0] and 'No space left on device' in lines[0], lines
    # The run's lock file stays (empty); nothing of the sequence does.
    left = [name for name in run['files'] if name != LOCK]
    assert not any(name.startswith('seq_') or name.startswith('.') for name in left)


@needs_root
@pytest.mark.parametrize('name', ['run.mcap', 'c.npz'])
def test_an_error_names_the_users_out_never_the_temporary_path(tmp_path, name):
    # A tmpfs with one inode (its root): even the temporary directory cannot be made.
    run, = in_small_tmpfs(tmp_path, '2m,nr_inodes=1', [('cli', [
        'scan', '--world', 'flat', '--out', f'MNT/{name}'])])
    lines = run['stderr'].strip().splitlines()
    assert run['code'] == 2 and len(lines) == 1, run
    assert lines[0].startswith("ubot_lidar_sim: error: --out: could not write '"), lines
    assert lines[0].split("'")[1].endswith(f'/mnt/{name}'), lines
    assert run['files'] == {}


@needs_root
def test_a_recording_that_fills_the_disk_midway_names_the_out_file(tmp_path):
    run, = in_small_tmpfs(tmp_path, '2m', [('fill', 150_000), ('cli', [
        'scan', '--world', 'flat', '--set', 'channels=16', '--set', 'horizontal_samples=900',
        '--frames', '3', '--out', 'MNT/run.mcap'])])
    lines = run['stderr'].strip().splitlines()
    assert run['code'] == 2 and len(lines) == 1, run
    assert "run.mcap': No space left on device" in lines[0], lines
    assert list(run['files']) == ['filler']


def test_a_streamed_npz_has_the_bytes_of_write_npz_and_an_aborted_one_leaves_nothing(tmp_path):
    arrays = {'a/0000/class_id': np.arange(5, dtype=np.uint8),
              'a/stamp_ns': np.array([1, 2], dtype=np.int64)}
    write_npz(tmp_path / 'whole.npz', arrays)
    with NpzStream(tmp_path / 'streamed.npz') as stream:
        for name, arr in arrays.items():
            stream.add(name, arr)
    assert (tmp_path / 'streamed.npz').read_bytes() == (tmp_path / 'whole.npz').read_bytes()
    with pytest.raises(KeyboardInterrupt):
        with NpzStream(tmp_path / 'cut.npz') as stream:
            stream.add('x', np.zeros(3))
            raise KeyboardInterrupt
    assert sorted(os.listdir(tmp_path)) == ['streamed.npz', 'whole.npz']
