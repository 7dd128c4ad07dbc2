"""
What the scan CLI leaves on disk: a full filesystem, umask, multi-frame runs.

The full-disk cases run the real CLI on a real full filesystem: a small tmpfs mounted in a
private mount namespace (``unshare -m``, root only), so nothing outside the test sees it.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest
from rel_helpers import ROOT

SMALL = ('--world', 'flat', '--set', 'channels=8', '--set', 'horizontal_samples=90')


def small(sensor):
    """Return the CLI arguments of a small scan of sensor on the flat world."""
    return ('--sensor', sensor, *(SMALL if sensor == 'lidar_3d' else SMALL[:2]))


# Runs inside the namespace: mount the tmpfs, then each step, then print what each left behind.
_IN_NAMESPACE = r"""
import hashlib, json, os, subprocess, sys
mnt, size, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=' + size, 'tmpfs', mnt], check=True)
out = []
for kind, arg in steps:
    if kind == 'fill':              # leave arg bytes free (0: a full filesystem)
        with open(os.path.join(mnt, 'filler'), 'ab') as f:
            while True:
                st = os.statvfs(mnt)
                free = st.f_bavail * st.f_frsize - arg
                if free <= 0:
                    break
                try:
                    f.write(b'\0' * min(free, 1 << 16))
                    f.flush()
                except OSError:
                    break
        continue
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', *arg], capture_output=True,
                       text=True)
    files = {}
    for name in sorted(os.listdir(mnt)):
        with open(os.path.join(mnt, name), 'rb') as f:
            files[name] = hashlib.sha256(f.read()).hexdigest()
    out.append({'code': r.returncode, 'stdout': r.stdout, 'stderr': r.stderr, 'files': files})
print(json.dumps(out))
"""


def _can_unshare():
    return os.geteuid() == 0 and shutil.which('unshare') is not None and shutil.which('mount')


needs_root = pytest.mark.skipif(not _can_unshare(), reason='needs root and unshare(1)')


def in_small_tmpfs(tmp_path, size, steps):
    """Run steps (('cli', argv) / ('fill', bytes left)) on a fresh tmpfs at tmp_path / 'mnt'."""
    mnt = tmp_path / 'mnt'
    mnt.mkdir()
    steps = [(k, [str(a).replace('MNT', str(mnt)) for a in v] if k == 'cli' else v)
             for k, v in steps]
    r = subprocess.run(['unshare', '-m', sys.executable, '-c', _IN_NAMESPACE, str(mnt), size,
                        json.dumps(steps)], capture_output=True, text=True, cwd=ROOT,
                       timeout=240)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def _one_error_line(result):
    lines = result['stderr'].strip().splitlines()
    assert result['code'] == 2 and len(lines) == 1, result
    assert 'Traceback' not in result['stderr']
    return lines[0]


@needs_root
def test_ply_on_a_full_disk_exits_2_naming_the_file_and_leaves_nothing(tmp_path):
    # 108 kB of PLY into 64 kB: open3d prints 'RPly: Failed writing' and reported success.
    run, = in_small_tmpfs(tmp_path, '64k', [('cli', ['scan', '--world', 'flat',
                                                     '--out', 'MNT/cloud.ply'])])
    line = _one_error_line(run)
    assert 'cloud.ply' in line and 'No space left on device' in line, line
    assert run['files'] == {} and run['stdout'] == ''


@needs_root
@pytest.mark.parametrize('sensor,name', [('lidar_3d', 'cloud.npz'), ('lidar_3d', 'cloud.ply'),
                                         ('laser_scan', 'scan.json'),
                                         ('terrain_sensor', 'terrain.npz'),
                                         ('lidar_3d', 'run.mcap')])
def test_every_writer_on_a_full_disk_exits_2_naming_the_file(tmp_path, sensor, name):
    run, = in_small_tmpfs(tmp_path, '64k', [
        ('fill', 0), ('cli', ['scan', *small(sensor), '--out', f'MNT/{name}'])])
    line = _one_error_line(run)
    assert name in line and 'No space left on device' in line, line
    assert list(run['files']) == ['filler']        # no final file, no temporary file


@needs_root
def test_a_multi_frame_run_that_fails_leaves_the_earlier_run_untouched(tmp_path):
    # Three frames of ~20 kB, then three of ~40 kB into 48 kB: the first new frame fits, the
    # second does not. No new frame may replace an earlier one (no mix of two runs).
    first, second = in_small_tmpfs(tmp_path, '128k', [
        ('cli', ['scan', *SMALL, '--seed', '1', '--frames', '3', '--out', 'MNT/f.npz']),
        ('fill', 48 * 1024),
        ('cli', ['scan', *SMALL, '--set', 'channels=16', '--seed', '2', '--frames', '3',
                 '--out', 'MNT/f.npz'])])
    assert first['code'] == 0, first
    line = _one_error_line(second)
    assert 'No space left on device' in line and 'f_000' in line, line
    after = {k: v for k, v in second['files'].items() if k != 'filler'}
    assert after == first['files']
    assert sorted(after) == ['f_0000.npz', 'f_0001.npz', 'f_0002.npz']


def _scan(out, *extra, sensor='lidar_3d', umask=None):
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'scan', *small(sensor), *extra,
                        '--out', str(out)], capture_output=True, text=True, cwd=ROOT,
                       timeout=120, preexec_fn=None if umask is None else lambda: os.umask(umask))
    assert r.returncode == 0, r.stderr
    return r


@pytest.mark.parametrize('sensor,name', [('lidar_3d', 'c.npz'), ('lidar_3d', 'c.ply'),
                                         ('laser_scan', 's.json')])
def test_output_files_get_the_mode_the_umask_allows(tmp_path, sensor, name):
    _scan(tmp_path / name, sensor=sensor, umask=0o027)
    assert (tmp_path / name).stat().st_mode & 0o777 == 0o640


def test_a_multi_frame_run_leaves_no_temporary_files(tmp_path):
    _scan(tmp_path / 'f.npz', '--frames', '2')
    assert sorted(p.name for p in tmp_path.iterdir()) == ['f_0000.npz', 'f_0001.npz']
