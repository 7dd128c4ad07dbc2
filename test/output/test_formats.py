"""Issue 30 formats: PCD and SemanticKITTI from scan and dataset, read back; bad inputs exit 2."""

import json
from pathlib import Path

from builders import write_spec
import numpy as np
import open3d as o3d
from pypcd4 import PointCloud
import pytest
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS, SMOKE_CLASS
from ubot_lidar_sim.core.sensors import point_layouts
from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE, to_layout
from ubot_lidar_sim.dataset import outdir, runner
from ubot_lidar_sim.output import pcd, semantickitti
import yaml

WORLD = """frame: map
objects:
  - {name: ground, type: plane, size_m: [100, 100], material: grass}
  - {name: wall, type: box, size_m: [0.2, 20, 4], pose: {xyz: [8.1, 0, 2]}, material: concrete}
  - {name: bush, type: sphere, radius_m: 0.8, pose: {xyz: [4, 2, 1]}, material: shrub}
"""
SMALL = ['--set', 'channels=4', '--set', 'horizontal_samples=120', '--seed', '3',
         '--set', 'range_noise_std_m=0.02']
DRIVE = ['--twist', '2', '0', '0', '0', '0', '10', '--frames', '3']
SPEC = {
    'worlds': ['flat'], 'frames': 2, 'seeds': [0, 1],
    'trajectories': [{'name': 'drive', 'twist': [2.0, 0, 0, 0, 0, 10.0]}],
    'sensors': [
        {'type': 'lidar_3d', 'mount': [0, 0, 1.2, 0, 0, 0],
         'params': {'channels': 4, 'horizontal_samples': 90}},
        {'type': 'lidar_3d', 'name': 'rear', 'topic': '/rear/points',
         'mount': [-1, 0, 1, 0, 0, 180],
         'params': {'channels': 2, 'horizontal_samples': 45, 'frame_id': 'rear',
                    'point_layout': 'ouster'}},
        {'type': 'laser_scan', 'mount': [0.3, 0, 0.3, 0, 0, 0]},
    ],
}
ALL = ['--formats', 'mcap,semantickitti,pcd']


@pytest.fixture()
def world(tmp_path):
    path = tmp_path / 'world.yaml'
    path.write_text(WORLD)
    return str(path)


def _scan(world, out, *extra):
    assert main(['scan', '--world', world, '--out', str(out), *SMALL, *extra]) == 0


def _fails(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'Traceback' not in err
    return err


def _dataset(spec, out, *extra):
    return main(['dataset', str(spec), '--out', str(out), '--workers', '1', '--quiet', *extra])


def _rows(out):
    return [json.loads(line) for line in (out / runner.MANIFEST).read_text().splitlines()]


def _files(root):
    return sorted(str(p.relative_to(root)) for p in Path(root).rglob('*') if p.is_file())


# --- PCD ---------------------------------------------------------------------------------------

def test_pcd_holds_every_field_of_the_layout_as_pypcd4_and_open3d_read_it(tmp_path, world):
    _scan(world, tmp_path / 'a.npz')
    _scan(world, tmp_path / 'a.pcd')
    full = np.load(tmp_path / 'a.npz')
    cloud = PointCloud.from_path(tmp_path / 'a.pcd')
    assert cloud.fields == FULL_DTYPE.names
    assert cloud.types == tuple(FULL_DTYPE[n].type for n in FULL_DTYPE.names)
    assert cloud.points == full['x'].size > 0
    for name in FULL_DTYPE.names:
        np.testing.assert_array_equal(cloud.numpy((name,))[:, 0], full[name])
    header = (tmp_path / 'a.pcd').read_bytes()[:400]
    assert b'\nDATA binary\n' in header
    positions = o3d.t.io.read_point_cloud(str(tmp_path / 'a.pcd')).point.positions.numpy()
    np.testing.assert_array_equal(positions, np.stack([full['x'], full['y'], full['z']], 1))


def test_pcd_of_the_ouster_layout_has_its_types_and_organised_rows(tmp_path, world):
    one = ('--set', 'point_layout=ouster', '--set', 'return_mode=strongest')   # one per beam
    _scan(world, tmp_path / 'o.npz', *one)
    _scan(world, tmp_path / 'o.pcd', *one)
    full = np.load(tmp_path / 'o.npz')
    points = np.empty(full['x'].size, FULL_DTYPE)
    for name in FULL_DTYPE.names:
        points[name] = full[name]
    cfg = effective_config('lidar_3d', None, {'point_layout': 'ouster'})
    want = to_layout(points, 'ouster', cfg.ambient_counts, 1_000_000_000)  # clock starts at 1 s
    cloud = PointCloud.from_path(tmp_path / 'o.pcd')
    assert cloud.fields == want.dtype.names
    assert (cloud.metadata.width, cloud.metadata.height) == (120, 4)   # organised, as ouster-ros
    got = cloud.numpy(want.dtype.names)
    got = got[~np.isnan(got[:, 0])]              # the cells with a return: one per point
    assert len(got) == len(want)
    order_got = np.lexsort(got[:, :3].T)
    order_want = np.lexsort((want['x'], want['y'], want['z']))
    for k, name in enumerate(want.dtype.names):
        # ring is the row: 0 the top ring, the core's ring 0 the lowest
        expect = 3 - want['ring'] if name == 'ring' else want[name]
        np.testing.assert_array_equal(got[order_got, k], expect[order_want])
    assert dict(zip(cloud.fields, cloud.types))['t'] == np.uint32


def test_pcd_holds_every_layout_and_refuses_a_field_it_has_no_type_for():
    # Every layout the config allows has PCD types (the CLI and the runner check it before a
    # sweep); a float16 field, which PCD has no type for, is refused naming the field.
    for layout, dtype in point_layouts.LAYOUT_DTYPES.items():
        pcd.check_dtype(dtype, layout)
    half = np.dtype([('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f2')])
    with pytest.raises(ConfigError, match=r"point_layout: got 'half'.*'intensity' is <f2"):
        pcd.check_dtype(half, 'half')


# --- SemanticKITTI -----------------------------------------------------------------------------

def test_remission_and_label_words_by_hand():
    pts = np.zeros(3, FULL_DTYPE)
    pts['x'], pts['intensity'] = [1, 2, 3], [255, 100, 0]
    pts['class_id'] = [72, PRECIPITATION_CLASS, SMOKE_CLASS]
    scan, label = semantickitti.scan_arrays(pts)
    # bound: float32 of 100 / 255 (relative rounding 6e-8)
    np.testing.assert_allclose(scan[:, 3], [1.0, 100 / 255, 0.0], rtol=1e-7)
    assert label.tolist() == [72, PRECIPITATION_CLASS, SMOKE_CLASS]
    with_instance = np.zeros(2, FULL_DTYPE)
    with_instance['class_id'], with_instance['instance_id'] = [256, 10], [1, 65535]
    _, label = semantickitti.scan_arrays(with_instance)
    assert label.tolist() == [(1 << 16) | 256, (65535 << 16) | 10]


def test_semantickitti_scan_reads_back_as_the_api_does(tmp_path, world):
    _scan(world, tmp_path / 'a.npz', *DRIVE)
    root = tmp_path / 'kitti'
    _scan(world, root, *DRIVE, '--format', 'semantickitti', '--sequence', '7')
    seq = root / 'sequences' / '07'
    assert _files(root) == sorted(
        ['poses/07.txt', 'semantic-kitti.yaml'] + [f'sequences/07/{n}' for n in (
            'calib.txt', 'poses.txt', 'times.txt', semantickitti.MARKER,
            *(f'velodyne/{k:06d}.bin' for k in range(3)),
            *(f'labels/{k:06d}.label' for k in range(3)))])
    for k in range(3):
        full = np.load(tmp_path / f'a_{k:04d}.npz')
        scan = np.fromfile(seq / 'velodyne' / f'{k:06d}.bin', dtype=np.float32).reshape((-1, 4))
        label = np.fromfile(seq / 'labels' / f'{k:06d}.label', dtype=np.uint32)
        np.testing.assert_array_equal(scan[:, :3], np.stack([full['x'], full['y'], full['z']], 1))
        np.testing.assert_array_equal(scan[:, 3], np.float32(full['intensity'] / 255.0))
        np.testing.assert_array_equal(label & 0xFFFF, full['class_id'])
        np.testing.assert_array_equal(label >> 16, 0)
    # 2 m/s forward turning at 10 deg/s: after 0.1 s the sensor has turned 1 deg on an arc of
    # radius 2 / (10 deg/s in rad/s) = 11.459 m: x = r sin(1 deg), y = r (1 - cos(1 deg)).
    poses = np.loadtxt(seq / 'poses.txt').reshape(-1, 3, 4)
    r, a = 2.0 / np.radians(10.0), np.radians(1.0)
    # bound: 9 significant digits written (%.9e) of poses computed in float64
    np.testing.assert_allclose(poses[1, :, 3], [r * np.sin(a), r * (1 - np.cos(a)), 0],
                               atol=1e-9)
    # bound: as above
    np.testing.assert_allclose(poses[0], np.eye(4)[:3], atol=1e-12)
    assert np.loadtxt(seq / 'times.txt').tolist() == [0.0, 0.1, 0.2]
    assert (root / 'poses' / '07.txt').read_text() == (seq / 'poses.txt').read_text()
    calib = dict(line.split(':', 1) for line in (seq / 'calib.txt').read_text().splitlines())
    assert sorted(calib) == ['P0', 'P1', 'P2', 'P3', 'Tr']
    assert np.fromstring(calib['Tr'], sep=' ').tolist() == np.eye(4)[:3].ravel().tolist()
    names = yaml.safe_load((root / 'semantic-kitti.yaml').read_text())['labels']
    assert (names[72], names[50], names[PRECIPITATION_CLASS], names[SMOKE_CLASS]) == (
        'terrain', 'building', 'precipitation', 'smoke')


def test_scan_refuses_a_directory_holding_another_sequence(tmp_path, world, capsys):
    root = tmp_path / 'kitti'
    _scan(world, root, '--format', 'semantickitti')
    before = {p: p.read_bytes() for p in root.rglob('*') if p.is_file()}
    _scan(world, root, '--format', 'semantickitti')     # the same scan again: allowed
    err = _fails(capsys, ['scan', '--world', world, '--out', str(root), *SMALL, '--rain', '5',
                          '--format', 'semantickitti'])
    assert '--out' in err and 'sequences/00' in err
    assert {p: p.read_bytes() for p in root.rglob('*') if p.is_file()} == before


def test_scan_label_map_semantickitti_writes_semantickittis_ids_and_its_yaml(tmp_path, world):
    # grass 72 terrain, concrete 48 sidewalk, shrub 70 vegetation (output/label_maps.py).
    root = tmp_path / 'kitti'
    _scan(world, root, '--format', 'semantickitti', '--label-map', 'semantickitti')
    label = np.fromfile(root / 'sequences/00/labels/000000.label', np.uint32) & 0xFFFF
    assert set(label.tolist()) == {72, 48, 70}
    data = yaml.safe_load((root / 'semantic-kitti.yaml').read_text())
    assert data['learning_map'][72] == 17 and data['labels'][72] == 'terrain'   # SemanticKITTI's


@pytest.mark.parametrize('extra, word', [
    (['--format', 'semantickitti', '--sequence', '100'], '--sequence: got 100'),
    (['--format', 'kitti'], "--format: got 'kitti'"),
    (['--format', 'semantickitti', '--sensor', 'laser_scan'], '--sensor'),
    (['--label-map', 'semantickitti'], "--label-map: got 'semantickitti'"),   # k is no sequence
])
def test_bad_scan_formats_exit_2_with_one_line(tmp_path, world, capsys, extra, word):
    err = _fails(capsys, ['scan', '--world', world, '--out', str(tmp_path / 'k'), *extra])
    assert word in err
    assert not (tmp_path / 'k').exists()


# --- dataset -----------------------------------------------------------------------------------

@pytest.fixture(scope='module')
def recorded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('formats')
    out = tmp / 'out'
    assert _dataset(write_spec(tmp, SPEC), out, *ALL) == 0
    return tmp, out


def test_every_format_of_every_sequence_is_on_disk_and_in_the_manifest(recorded):
    _, out = recorded
    rows = _rows(out)
    assert [r['id'] for r in rows] == ['seq_0000', 'seq_0001']
    listed = []
    for n, r in enumerate(rows):
        assert r['formats'] == ['mcap', 'semantickitti', 'pcd']
        assert r['files']['mcap'] == [f'seq_{n:04d}.mcap', f'seq_{n:04d}.labels.npz']
        assert r['files']['pcd'] == sorted(f'pcd/seq_{n:04d}/{name}/{k:06d}.pcd'
                                           for name in ('lidar_3d', 'rear') for k in range(2))
        assert f'sequences/{n:02d}/velodyne/000001.bin' in r['files']['semantickitti']
        assert f'poses/{n:02d}.txt' in r['files']['semantickitti']
        listed += [f for names in r['files'].values() for f in names]
    assert _files(out) == sorted(listed + [runner.MANIFEST, outdir.LOCK, 'semantic-kitti.yaml'])


def test_the_dataset_semantickitti_is_the_first_lidar_and_matches_its_mcap_labels(recorded):
    _, out = recorded
    labels = np.load(out / 'seq_0001.labels.npz')
    for k in range(2):
        cls = labels[f'lidar_3d/{k:04d}/class_id']
        words = np.fromfile(out / f'sequences/01/labels/{k:06d}.label', dtype=np.uint32)
        np.testing.assert_array_equal(words & 0xFFFF, cls)
        scan = np.fromfile(out / f'sequences/01/velodyne/{k:06d}.bin', np.float32)
        assert scan.reshape(-1, 4).shape[0] == cls.size
        rear = PointCloud.from_path(out / f'pcd/seq_0001/rear/{k:06d}.pcd')
        assert rear.fields == point_layouts.OUSTER_DTYPE.names
        assert rear.points == labels[f'rear/{k:04d}/class_id'].size


def test_a_resume_redoes_only_a_sequence_missing_a_file_of_any_format(recorded, capsys):
    tmp, out = recorded
    spec = write_spec(tmp, SPEC)
    assert _dataset(spec, out, *ALL) == 0
    assert capsys.readouterr().out.startswith('0 sequences recorded, 2 already done')
    before = (out / 'seq_0000.mcap').stat().st_mtime_ns
    (out / 'pcd/seq_0001/rear/000001.pcd').unlink()
    assert _dataset(spec, out, *ALL) == 0
    assert capsys.readouterr().out.startswith('1 sequences recorded, 1 already done')
    assert (out / 'pcd/seq_0001/rear/000001.pcd').is_file()
    assert (out / 'seq_0000.mcap').stat().st_mtime_ns == before


@pytest.mark.parametrize('change, argv, word', [
    ({}, ['--formats', 'mcap,kitti'], "--formats: got 'kitti'"),
    ({'formats': ['mcap', 'las']}, [], 'formats: expected a non-empty list of mcap'),
    ({'formats': ['semantickitti'], 'seeds': list(range(101))}, [],
     'formats: expected a spec of at most 100 sequences'),
    ({'seeds': list(range(101))}, ['--formats', 'semantickitti'], 'this one has 101'),
    ({'sensors': [{'type': 'laser_scan'}]}, ['--formats', 'pcd'], 'formats'),
])
def test_bad_formats_exit_2_with_one_line_and_write_nothing(tmp_path, capsys, change, argv,
                                                            word):
    err = _fails(capsys, ['dataset', str(write_spec(tmp_path, {**SPEC, **change})), '--out',
                          str(tmp_path / 'o'), '--workers', '1', *argv])
    assert word in err
    assert not (tmp_path / 'o').exists()


def test_a_directory_holding_another_sequence_exits_2_and_stays_as_it_was(recorded, capsys):
    tmp, out = recorded
    other = write_spec(tmp, {**SPEC, 'seeds': [5]}, name='other.yaml')
    before = {p: p.stat().st_mtime_ns for p in out.rglob('*')}
    err = _fails(capsys, ['dataset', str(other), '--out', str(out), '--workers', '1', *ALL])
    assert '--out' in err and 'sequences/00' in err
    assert {p: p.stat().st_mtime_ns for p in out.rglob('*')} == before
