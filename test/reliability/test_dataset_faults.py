"""
The dataset runner under faults: Ctrl-C and SIGKILL, planted links, changed inputs, a second run.

Faults are made here: a real SIGINT to the run's process group (as a terminal sends Ctrl-C), a
child killed with SIGKILL, links in a temporary DIR, a held lock, a full tmpfs in a private
mount namespace (root only). Ray's cluster faults are in test_dataset_ray.py.
"""

import io
import os
import signal
import subprocess
import sys
import time

from builders import write_spec
import numpy as np
import pytest
from rel_helpers import ROOT
from test_cli_outputs import needs_root
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.dataset import outdir, runner
from ubot_lidar_sim.dataset.spec import load_spec
from ubot_lidar_sim.output import atomic, files

SMALL_LIDAR = {'type': 'lidar_3d', 'mount': [0, 0, 1.2, 0, 0, 0],
               'params': {'channels': 4, 'horizontal_samples': 90}}
SPEC = {'worlds': ['flat'], 'frames': 2, 'seeds': [0, 1], 'sensors': [SMALL_LIDAR]}
# Sequences of a few seconds each, so that a signal lands while one is in progress.
SLOW_LIDAR = {'type': 'lidar_3d', 'params': {'channels': 16, 'horizontal_samples': 720}}
MARKER = 'UBOT_TEST_DATASET_RUN'


def _rows(out):
    return list(runner.read_manifest(out).values())     # the manifest's rows, in file order


def _one_line(err):
    assert err.count('\n') == 1 and 'Traceback' not in err, err
    return err.strip()


def _env(marker=''):
    return {**os.environ, MARKER: marker,
            'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}


def _start(argv, marker=''):
    """Start ``python -m ubot_lidar_sim ARGV`` as the leader of its own process group."""
    return subprocess.Popen([sys.executable, '-m', 'ubot_lidar_sim', *map(str, argv)],
                            env=_env(marker), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _wait_for(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f'no {what} within {timeout_s} s'
        time.sleep(0.02)


def _marked(marker):
    """Return the pids whose environment holds MARKER=marker (the run and all it started)."""
    token = f'{MARKER}={marker}'.encode()
    pids = []
    for entry in os.scandir('/proc'):
        if entry.name.isdigit():
            try:
                with open(f'/proc/{entry.name}/environ', 'rb') as f:
                    if token in f.read().split(b'\0'):
                        pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _leftovers(out):
    """Return the hidden entries below out other than the lock: temporaries."""
    return sorted(str(p.relative_to(out)) for p in out.rglob('.*') if p.name != outdir.LOCK)


def _every_bag_has_a_row(out):
    rows = {r['mcap'] for r in _rows(out)} if (out / runner.MANIFEST).exists() else set()
    return sorted(p.name for p in out.glob('*.mcap')) == sorted(rows)


# --- Ctrl-C, SIGTERM and SIGKILL ------------------------------------------------------------
@pytest.mark.parametrize('moment', ['ray_starting', 'sequences_running'])
def test_ctrl_c_of_a_ray_run_exits_130_with_one_line_and_leaves_no_process_or_temp(tmp_path,
                                                                                   moment):
    data = {**SPEC, 'frames': 40, 'seeds': [0, 1, 2, 3, 4, 5], 'sensors': [SLOW_LIDAR]}
    spec, out = write_spec(tmp_path, data), tmp_path / 'out'
    marker = f'ctrlc{os.getpid()}{moment}'
    proc = _start(['dataset', spec, '--out', out, '--workers', '2', '--quiet'], marker)
    try:
        if moment == 'ray_starting':    # Ray's first process is up: ray.init is under way
            _wait_for(lambda: len(_marked(marker)) > 1, 120, 'Ray process')
        else:   # a sequence finished, two in progress: the case that left bags without a row
            _wait_for(lambda: (out / runner.MANIFEST).exists() and len(_leftovers(out)) >= 2,
                      240, 'finished sequence')
        os.killpg(proc.pid, signal.SIGINT)      # as a terminal: the whole foreground group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert 'interrupted' in _one_line(err)
    assert _every_bag_has_a_row(out) and _leftovers(out) == []
    time.sleep(1.0)         # bound: Ray's agents took 42 s, or for ever, before the fix
    assert _marked(marker) == []
    summary = runner.run(load_spec(spec), out, workers=1, show_progress=False)
    assert summary['skipped'] + summary['recorded'] == 6
    assert _every_bag_has_a_row(out) and _leftovers(out) == []


def test_sigterm_of_a_run_exits_143_with_one_line_and_removes_the_sequence_in_progress(
        tmp_path):
    spec = write_spec(tmp_path, {**SPEC, 'frames': 40, 'sensors': [SLOW_LIDAR]})
    out = tmp_path / 'o'
    proc = _start(['dataset', spec, '--out', out, '--workers', '1', '--quiet'])
    _wait_for(lambda: _leftovers(out), 120, 'sequence in progress')
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and 'interrupted' in _one_line(err)
    assert _every_bag_has_a_row(out) and _leftovers(out) == []


def test_a_resume_after_sigkill_removes_the_killed_runs_temporaries(tmp_path):
    spec = write_spec(tmp_path, {**SPEC, 'frames': 40, 'sensors': [SLOW_LIDAR]})
    out = tmp_path / 'o'
    proc = _start(['dataset', spec, '--out', out, '--workers', '1', '--quiet'])
    _wait_for(lambda: any('.mcap.' in p for p in _leftovers(out)), 120, 'partial bag')
    proc.kill()
    proc.communicate(timeout=30)
    assert _leftovers(out)                  # what the killed run left
    assert main(['dataset', str(spec), '--out', str(out), '--workers', '1', '--quiet']) == 0
    assert [r['id'] for r in _rows(out)] == ['seq_0000', 'seq_0001']
    assert _leftovers(out) == [] and _every_bag_has_a_row(out)


def test_a_resume_removes_a_bag_without_a_row_and_every_kind_of_temporary(tmp_path):
    spec, out = write_spec(tmp_path, SPEC), tmp_path / 'o'
    out.mkdir()
    planted = ['.seq_0000.mcap.x1y2z3/seq_0000/seq_0000.mcap', '.seq_0001.labels.npz.ab12/f',
               '.manifest.jsonl.tmp', 'sequences/.01.qw12/velodyne/000000.bin',
               'pcd/.seq_0001.zz/lidar_3d/000000.pcd', 'poses/.01.txt.k2/01.txt']
    for name in planted:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(b'partial')
    (out / 'seq_0001.mcap').write_bytes(b'finished, but its row was never written')
    assert main(['dataset', str(spec), '--out', str(out), '--workers', '1', '--quiet']) == 0
    assert _leftovers(out) == [] and _every_bag_has_a_row(out)
    assert (out / 'seq_0001.mcap').read_bytes()[:8] != b'finished'


@pytest.mark.parametrize('delay_s', [0.15, 0.5, 1.0, 2.0])
def test_ctrl_c_in_the_first_seconds_exits_130_with_one_line(tmp_path, delay_s):
    spec = write_spec(tmp_path, {**SPEC, 'frames': 40, 'sensors': [SLOW_LIDAR]})
    proc = _start(['dataset', spec, '--out', tmp_path / 'o', '--workers', '1', '--quiet'])
    time.sleep(delay_s)         # while open3d, numba and rclpy are being imported
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert 'interrupted' in _one_line(err) and 'Open3D' not in err


# --- planted links ----------------------------------------------------------------------------
@pytest.mark.parametrize('name', ['.manifest.jsonl.tmp', runner.MANIFEST, 'seq_0000.labels.npz',
                                  'seq_0001.mcap', 'sequences', outdir.LOCK])
def test_a_link_planted_in_the_output_directory_is_refused_and_its_target_untouched(
        tmp_path, capsys, name):
    spec, out, victim = write_spec(tmp_path, SPEC), tmp_path / 'o', tmp_path / 'victim'
    victim.write_text('precious\n')
    out.mkdir()
    (out / name).symlink_to(victim)
    assert main(['dataset', str(spec), '--out', str(out), '--workers', '1', '--quiet']) == 2
    line = _one_line(capsys.readouterr().err)
    assert '--out' in line and name in line and 'symbolic link' in line
    assert victim.read_text() == 'precious\n'
    assert sorted(p.name for p in out.iterdir()) == [name]      # nothing written


@pytest.mark.parametrize('name', ['cloud.npz', 'run.mcap'])
def test_every_writer_refuses_an_out_that_is_a_link(tmp_path, name):
    target = tmp_path / 'real'
    target.write_bytes(b'old')
    link = tmp_path / name
    link.symlink_to(target)
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'scan', '--world', 'flat',
                        '--set', 'channels=4', '--set', 'horizontal_samples=90', '--out',
                        str(link)], capture_output=True, text=True, env=_env(), timeout=120)
    assert r.returncode == 2
    line = _one_line(r.stderr)
    assert name in line and 'symbolic link' in line
    assert target.read_bytes() == b'old' and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, 'real'])


def test_files_never_append_or_rename_through_a_link(tmp_path):
    victim = tmp_path / 'victim'
    victim.write_text('x')
    (tmp_path / 'log').symlink_to(victim)
    with pytest.raises(atomic.LinkRefused):
        atomic.open_append(tmp_path / 'log')
    with pytest.raises(atomic.LinkRefused):
        files.write_json(tmp_path / 'log', {'a': 1})
    assert victim.read_text() == 'x'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['log', 'victim']


# --- changed inputs -------------------------------------------------------------------------
WORLD = ('frame: map\nobjects:\n'
         '  - {name: wall, type: box, material: concrete, size_m: [0.5, 8, 3], '
         'pose: {xyz: [%s, 0, 1.5]}}\n'
         '  - {name: hills, type: heightfield, file: h.npy, cell_m: 1.0, material: soil}\n'
         '  - {name: yard, type: occupancy_map, file: map.yaml, wall_height_m: 2.0, '
         'material: concrete}\n')
MAP = 'image: map.pgm\nresolution: 1.0\norigin: [-4.0, -4.0, 0.0]\noccupied_thresh: 0.65\n'


def _pgm(occupied_column):
    """Return an 8 x 8 P5 map, free but for one occupied column of cells."""
    pixels = bytearray([254] * 64)
    for row in range(8):
        pixels[row * 8 + occupied_column] = 0
    return b'P5\n8 8\n255\n' + bytes(pixels)


def _heights(level_m):
    buf = io.BytesIO()
    np.save(buf, np.full((9, 9), level_m))
    return buf.getvalue()


@pytest.mark.parametrize('change', ['world', 'heightfield', 'map_image', 'params_file',
                                    'materials'])
def test_a_resume_records_again_a_sequence_whose_input_files_changed(tmp_path, capsys, change):
    inputs = {'w.yaml': (WORLD % 6).encode(), 'h.npy': _heights(-1.0), 'map.yaml': MAP.encode(),
              'map.pgm': _pgm(0),
              'p.yaml': b'/**:\n  ros__parameters: {max_range_m: 50.0}\n',
              'm.yaml': b'concrete: {reflectivity: 0.3}\n'}
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
    lidar = {**SMALL_LIDAR, 'params_file': 'p.yaml',
             'params': {**SMALL_LIDAR['params'], 'materials_file': str(tmp_path / 'm.yaml')}}
    spec = write_spec(tmp_path, {**SPEC, 'worlds': ['w.yaml'], 'seeds': [0], 'sensors': [lidar]})
    argv = ['dataset', str(spec), '--out', str(tmp_path / 'o'), '--workers', '1', '--quiet']
    assert main(argv) == 0
    first = _rows(tmp_path / 'o')[0]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith('0 sequences recorded, 1 already')
    name, data = {'world': ('w.yaml', (WORLD % 4).encode()),
                  'heightfield': ('h.npy', _heights(0.5)),
                  'map_image': ('map.pgm', _pgm(6)),
                  'materials': ('m.yaml', b'concrete: {reflectivity: 0.9}\n'),
                  'params_file': ('p.yaml', b'/**:\n  ros__parameters: {max_range_m: 5.0}\n')
                  }[change]
    (tmp_path / name).write_bytes(data)
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith('1 sequences recorded, 0 already done')
    second = _rows(tmp_path / 'o')[0]
    assert second['inputs_sha256'] != first['inputs_sha256']
    assert second['mcap_sha256'] != first['mcap_sha256']        # the old bag was replaced


# --- one run per directory, addresses, duplicates -----------------------------------------
def test_a_second_run_into_the_same_directory_is_refused_with_one_line(tmp_path, capsys):
    spec, out = write_spec(tmp_path, SPEC), tmp_path / 'o'
    out.mkdir()
    with outdir.locked(out):        # another run holds it
        assert main(['dataset', str(spec), '--out', str(out), '--workers', '1']) == 2
    line = _one_line(capsys.readouterr().err)
    assert '--out' in line and 'no other dataset run' in line
    assert sorted(p.name for p in out.iterdir()) == [outdir.LOCK]


@pytest.mark.parametrize('change,key', [({'seeds': [0, 1, 0]}, 'seeds[2]'),
                                        ({'worlds': ['flat', 'demo', 'flat']}, 'worlds[2]')])
def test_duplicate_worlds_or_seeds_are_refused(tmp_path, capsys, change, key):
    spec = write_spec(tmp_path, {**SPEC, **change})
    assert main(['dataset', str(spec), '--out', str(tmp_path / 'o'), '--workers', '1']) == 2
    line = _one_line(capsys.readouterr().err)
    assert f'{key}: ' in line and 'used twice' in line
    assert not (tmp_path / 'o').exists()


# --- full disk --------------------------------------------------------------------------------
@needs_root
@pytest.mark.parametrize('workers', ['1', '2'])
def test_a_full_disk_gives_one_short_line_naming_the_users_file(tmp_path, workers):
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    spec = write_spec(tmp_path, {**SPEC, 'frames': 20})
    script = (f'import subprocess, sys; subprocess.run(["mount", "-t", "tmpfs", "-o", '
              f'"size=96k", "tmpfs", "{mnt}"], check=True); '
              f'r = subprocess.run([sys.executable, "-m", "ubot_lidar_sim", "dataset", '
              f'"{spec}", "--out", "{mnt}/o", "--workers", "{workers}", "--quiet"]); '
              f'import os; print(sorted(os.listdir("{mnt}/o"))); sys.exit(r.returncode)')
    r = subprocess.run(['unshare', '-m', sys.executable, '-c', script], capture_output=True,
                       text=True, env=_env(), timeout=300)
    assert r.returncode == 2, r.stderr[-2000:]
    line = _one_line(r.stderr)
    assert 'No space left on device' in line and 'seq_000' in line and '\x1b[' not in line
    assert len(line) < 300 and '.mcap.' not in line      # the user's file, not a temporary
    left = [outdir.LOCK], [outdir.LOCK, runner.MANIFEST]
    assert r.stdout.strip() in map(str, left)
