"""Dataset runs (python -m ubot_lidar_sim dataset): spec checks, manifest, resume, Ray, Ctrl-C."""

import json
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import time

from builders import write_spec
from mcap.reader import make_reader
import numpy as np
import pytest
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.dataset import runner
from ubot_lidar_sim.dataset.command import interrupted
from ubot_lidar_sim.dataset.outdir import LOCK
from ubot_lidar_sim.dataset.spec import load_spec, with_formats

ROOT = Path(__file__).resolve().parents[2]
SPEC = {
    'worlds': ['flat'],
    'frames': 2,
    'seeds': [0, 1],
    'trajectories': [{'name': 'drive', 'twist': [2.0, 0, 0, 0, 0, 10.0]}],
    'sensors': [
        {'type': 'lidar_3d', 'mount': [0, 0, 1.2, 0, 0, 0],
         'params': {'channels': 4, 'horizontal_samples': 90, 'range_noise_std_m': 0.02}},
        {'type': 'lidar_3d', 'name': 'rear', 'topic': '/rear/points',
         'mount': [-1, 0, 1, 0, 0, 180],
         'params': {'channels': 2, 'horizontal_samples': 45, 'frame_id': 'rear',
                    'point_layout': 'ouster'}},
    ],
    'weather': {'grid': {'rain_mm_h': [0.0, 20.0]}},
}


def _rows(out):
    return [json.loads(line) for line in (out / runner.MANIFEST).read_text().splitlines()]


@pytest.fixture(scope='module')
def serial(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('serial')
    out = tmp / 'out'
    assert main(['dataset', str(write_spec(tmp, SPEC)), '--out', str(out), '--workers', '1',
                 '--quiet']) == 0
    return tmp, out


def test_every_sequence_has_an_mcap_labels_and_a_manifest_row(serial):
    _, out = serial
    rows = _rows(out)
    assert [r['id'] for r in rows] == ['seq_0000', 'seq_0001', 'seq_0002', 'seq_0003']
    # grid x seeds in spec order: rain 0 seed 0, rain 0 seed 1, rain 20 seed 0, ...
    assert [(r['parameters']['weather']['rain_mm_h'], r['parameters']['seed']) for r in rows] \
        == [(0.0, 0), (0.0, 1), (20.0, 0), (20.0, 1)]
    for r in rows:
        assert r['frames'] == {'lidar_3d': 2, 'rear': 2}
        for kind in ('mcap', 'labels'):
            data = (out / r[kind]).read_bytes()
            assert len(data) == r[f'{kind}_bytes']
            import hashlib
            assert hashlib.sha256(data).hexdigest() == r[f'{kind}_sha256']
        assert r['wall_s'] > 0 and r['peak_rss_mb'] > 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [runner.MANIFEST, LOCK] + [r['mcap'] for r in rows] + [r['labels'] for r in rows])


def test_labels_align_with_each_cloud_and_count_its_points(serial):
    _, out = serial
    row = _rows(out)[2]
    labels = np.load(out / row['labels'])
    widths = {}
    with open(out / row['mcap'], 'rb') as f:
        for _, channel, message in make_reader(f).iter_messages(topics=['/points',
                                                                        '/rear/points']):
            widths.setdefault(channel.topic, []).append(message.data)
    total = 0
    for name, topic in (('lidar_3d', '/points'), ('rear', '/rear/points')):
        assert len(widths[topic]) == 2
        for k in range(2):
            cls = labels[f'{name}/{k:04d}/class_id']
            assert labels[f'{name}/{k:04d}/material'].shape == cls.shape
            total += cls.size
    # rear is an ouster cloud, organised: a label per cell (2 rings x 45 columns); its cells
    # without a return (NaN) are not points.
    from mcap_ros2.decoder import DecoderFactory
    from ubot_lidar_sim.core.sensors.point_layouts import LAYOUT_DTYPES
    with open(out / row['mcap'], 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        rear = [m for _, _, _, m in reader.iter_decoded_messages(topics=['/rear/points'])]
    for k, cloud in enumerate(rear):
        assert (cloud.height, cloud.width) == (2, 45)
        assert labels[f'rear/{k:04d}/class_id'].size == 90
        cells = np.frombuffer(bytes(cloud.data), dtype=LAYOUT_DTYPES['ouster'])
        total -= int(np.count_nonzero(np.isnan(cells['x'])))
    assert total == row['points'] > 0
    # The full layout carries class_id itself: the label array is the same column.
    with open(out / row['mcap'], 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        clouds = [m for _, _, _, m in reader.iter_decoded_messages(topics=['/points'])]
    for k, cloud in enumerate(clouds):
        pts = np.frombuffer(bytes(cloud.data), dtype=LAYOUT_DTYPES['full'])
        np.testing.assert_array_equal(pts['class_id'], labels[f'lidar_3d/{k:04d}/class_id'])


def test_a_resumed_run_redoes_nothing_and_redoes_a_changed_file(serial, capsys):
    tmp, out = serial
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.suffix != '.jsonl'}
    spec = str(write_spec(tmp, SPEC))
    assert main(['dataset', spec, '--out', str(out), '--workers', '1', '--quiet']) == 0
    assert capsys.readouterr().out.startswith('0 sequences recorded, 4 already done')
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.suffix != '.jsonl'} \
        == before
    sha = _rows(out)[1]['mcap_sha256']
    with open(out / 'seq_0001.mcap', 'r+b') as f:   # damage one file
        f.seek(100)
        f.write(b'\0' * 8)
    assert main(['dataset', spec, '--out', str(out), '--workers', '1', '--quiet']) == 0
    assert capsys.readouterr().out.startswith('1 sequences recorded, 3 already done')
    assert _rows(out)[1]['mcap_sha256'] == sha


def test_two_ray_workers_give_the_serial_checksums_and_show_their_sweeps(serial, tmp_path,
                                                                         capsys):
    spec_path, out = serial[0] / 'spec.yaml', tmp_path / 'ray'
    summary = runner.run(load_spec(spec_path), out, workers=2, show_progress=True)
    assert summary['recorded'] == 4
    # 4 sequences x 2 frames: the workers' sweeps show while they run (polled every 0.5 s)
    assert re.search(r'sweeps [1-8]/8', capsys.readouterr().err)
    sums = [(r['mcap_sha256'], r['labels_sha256']) for r in _rows(out)]
    assert sums == [(r['mcap_sha256'], r['labels_sha256']) for r in _rows(serial[1])]


@pytest.mark.parametrize('change,key', [
    ({'framez': 3}, 'framez'),
    ({'weather': [{'rain_mmh': 3}]}, 'weather[0].rain_mmh'),
    ({'weather': [{'rain_mm_h': -1}]}, 'weather[0].rain_mm_h'),
    ({'weather': {'grid': {'visibility_m': [100, 0.5]}}}, 'weather.grid[1].visibility_m'),
    ({'trajectories': [{'waypoints': [[0, 0, 0]], 'speed_m_s': 1}]},
     'trajectories[0].waypoints'),
    ({'sensors': [{'type': 'lidar_3d', 'params': {'chanels': 4}}]}, 'chanels'),
    ({'sensors': [{'type': 'terrain_sensor', 'mount': [0, 0, 1, 0, 0, 0]}]}, 'sensors[0].mount'),
    ({'sensors': [{'type': 'lidar_3d'}, {'type': 'lidar_3d'}]}, 'sensors[1].name'),
])
def test_a_bad_spec_exits_2_with_one_line_naming_the_key(tmp_path, capsys, change, key):
    path = write_spec(tmp_path, {**SPEC, **change})
    assert main(['dataset', str(path), '--out', str(tmp_path / 'o'), '--workers', '1']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert key in err and str(path) in err
    assert not (tmp_path / 'o').exists()


def test_a_bad_world_file_exits_2_before_any_sequence(tmp_path, capsys):
    (tmp_path / 'w.yaml').write_text(
        'frame: map\nobjects:\n  - {name: g, type: plane, size_m: [9, 9], material: grasss}\n')
    path = write_spec(tmp_path, {**SPEC, 'worlds': ['flat', 'w.yaml']})
    assert main(['dataset', str(path), '--out', str(tmp_path / 'o'), '--workers', '1']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and "material: unknown material 'grasss'" in err
    assert not (tmp_path / 'o').exists()


@pytest.mark.parametrize('formats', [None, 'mcap,semantickitti,pcd'])
def test_ctrl_c_removes_only_the_sequence_in_progress(tmp_path, formats):
    lidar = {'type': 'lidar_3d', 'params': {'channels': 16, 'horizontal_samples': 720}}
    data = {**SPEC, 'frames': 60, 'seeds': [0], 'sensors': [lidar]}   # 2 sequences of ~2 s
    spec, out = write_spec(tmp_path, data), tmp_path / 'out'
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT),
                                                        os.environ.get('PYTHONPATH', '')])}
    argv = [sys.executable, '-m', 'ubot_lidar_sim', 'dataset', str(spec), '--out', str(out),
            '--workers', '1', '--quiet'] + (['--formats', formats] if formats else [])
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(out.glob('.seq_0001*')):
        time.sleep(0.01)          # the second sequence's temporaries: it is in progress
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.count('\n') == 1 and 'interrupted' in err
    rows = _rows(out)
    assert [r['id'] for r in rows] == ['seq_0000']
    files = sorted(str(p.relative_to(out)) for p in out.rglob('*') if p.is_file())
    files.remove(LOCK)          # the run's lock file stays (dataset/outdir.py)
    if formats is None:
        assert files == [runner.MANIFEST, 'seq_0000.labels.npz', 'seq_0000.mcap']
    else:   # every format's files of the finished sequence, nothing of the interrupted one
        listed = [f for names in rows[0]['files'].values() for f in names]
        assert files == sorted(listed + [runner.MANIFEST, 'semantic-kitti.yaml'])
        assert any(f.endswith('.pcd') for f in listed) and any('.label' in f for f in listed)
    assert [p.name for p in out.rglob('.*')] == [LOCK]      # no temporary left
    the_spec = load_spec(spec) if formats is None else with_formats(load_spec(spec), formats)
    summary = runner.run(the_spec, out, workers=1, show_progress=False)
    assert (summary['skipped'], summary['recorded']) == (1, 1)


def _raised_inside_a_callback():
    """Return the SystemError C code raises when Ctrl-C lands in its Python callback."""
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as ki:
            raise SystemError('<function _numba_unpickle> returned a result with an '
                              'exception set') from ki
    except SystemError as exc:
        return exc


def test_ctrl_c_wrapped_by_a_c_callback_still_counts_as_an_interrupt():
    assert interrupted(KeyboardInterrupt())
    assert interrupted(_raised_inside_a_callback())
    assert not interrupted(ValueError('a bad value'))
    assert not interrupted(SystemError('no cause'))
