"""
deskew: true writes ego-motion-compensated SemanticKITTI scans, as KITTI's odometry scans are.

A sensor driving at 10 m/s straight at a wall 19.9 m ahead of the start: in sweep k (stamp k x
0.1 s) the scanner is at x = k m, so every deskewed wall point has x = 19.9 - k m; a skewed
scan spreads the wall over what the sensor drives while its beams sweep the wall.
"""

from builders import run_dataset
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
import numpy as np
from pypcd4 import PointCloud
import pytest
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE
from ubot_lidar_sim.dataset import perception
import yaml

WORLD = {'objects': [{'name': 'wall', 'type': 'box', 'size_m': [0.2, 40, 10], 'class_id': 50,
                      'pose': {'xyz': [20, 0, 5]}}]}
LIDAR = {'channels': 8, 'horizontal_samples': 360, 'model': 'geometric',
         'vertical_fov_down_deg': 10.0}


def _mcap_wall_x(path, topic='/points'):
    """Return the x (float64) of the wall's points (class 50) of each full-layout cloud."""
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        clouds = [m for _, _, _, m in reader.iter_decoded_messages(topics=[topic])]
    pts = [np.frombuffer(bytes(c.data), FULL_DTYPE) for c in clouds]
    return [p['x'][p['class_id'] == 50].astype(np.float64) for p in pts]


def _pcd_wall_x(paths):
    """Return the x (float64) of the wall's points of each full-layout PCD file."""
    out = []
    for path in paths:
        a = PointCloud.from_path(path).numpy(('x', 'class_id'))
        out.append(a[a[:, 1] == 50, 0])
    return out


def _wall_x(tmp_path, deskew, formats=('semantickitti',)):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(WORLD))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': 3, 'formats': list(formats),
            'deskew': deskew,
            'trajectories': [{'name': 'drive', 'pose': [0, 0, 0, 0, 0, 0],
                              'twist': [10, 0, 0, 0, 0, 0]}],
            'sensors': [{'type': 'lidar_3d', 'mount': [0, 0, 1.0, 0, 0, 0], 'params': LIDAR}]}
    out = run_dataset(tmp_path, spec)
    xs = []
    for k in range(3):
        scan = np.fromfile(out / f'sequences/00/velodyne/{k:06d}.bin', np.float32).reshape(-1, 4)
        label = np.fromfile(out / f'sequences/00/labels/{k:06d}.label', np.uint32) & 0xFFFF
        xs.append(scan[label == 50, 0].astype(np.float64))
    if 'mcap' in formats:
        return xs, out
    return xs


def test_deskewed_wall_points_lie_where_the_scanner_at_the_stamp_sees_the_wall(tmp_path):
    for k, x in enumerate(_wall_x(tmp_path, True)):
        assert len(x) > 50
        # bound: float32 coordinates at 20 m and the float64 pose products (micrometres)
        np.testing.assert_allclose(x, 19.9 - k, atol=1e-4)


def test_a_skewed_scan_spreads_the_wall_over_what_the_sensor_drives_while_facing_it(tmp_path):
    # The wall fills azimuths -45..45 deg, a quarter of the sweep (0.025 s): 0.25 m at 10 m/s.
    for x in _wall_x(tmp_path, False):
        assert np.ptp(x) > 0.2


def _assert_deskewed(xs):
    assert len(xs) == 3
    for k, x in enumerate(xs):
        assert len(x) > 50
        # bound: float32 coordinates at 20 m and the float64 pose products (micrometres)
        np.testing.assert_allclose(x, 19.9 - k, atol=1e-4)


def test_deskew_applies_to_the_datasets_mcap_and_pcd_too(tmp_path):
    xs, out = _wall_x(tmp_path, True, ('semantickitti', 'mcap', 'pcd'))
    _assert_deskewed(xs)
    _assert_deskewed(_mcap_wall_x(out / 'seq_0000.mcap'))
    _assert_deskewed(_pcd_wall_x(sorted((out / 'pcd').rglob('*.pcd'))))


def test_scan_deskew_writes_deskewed_pcd_mcap_and_semantickitti(tmp_path):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(WORLD))
    base = ['scan', '--world', str(tmp_path / 'world.yaml'), '--pose', '0', '0', '1', '0', '0',
            '0', '--twist', '10', '0', '0', '0', '0', '0', '--frames', '3', '--deskew',
            *[a for k, v in LIDAR.items() for a in ('--set', f'{k}={v}')]]
    assert main(base + ['--out', str(tmp_path / 'w.pcd')]) == 0
    _assert_deskewed(_pcd_wall_x(sorted(tmp_path.glob('w_*.pcd'))))
    assert main(base + ['--out', str(tmp_path / 'w.mcap')]) == 0
    _assert_deskewed(_mcap_wall_x(tmp_path / 'w.mcap'))
    assert main(base + ['--out', str(tmp_path / 'kitti'), '--format', 'semantickitti']) == 0
    xs = []
    for k in range(3):
        scan = np.fromfile(tmp_path / f'kitti/sequences/00/velodyne/{k:06d}.bin',
                           np.float32).reshape(-1, 4)
        label = np.fromfile(tmp_path / f'kitti/sequences/00/labels/{k:06d}.label',
                            np.uint32) & 0xFFFF
        xs.append(scan[label == 50, 0].astype(np.float64))
    _assert_deskewed(xs)


@pytest.mark.parametrize('key, value', [('deskew', 'yes'), ('label_map', 'kitti'),
                                        ('boxes', [300])])
def test_a_bad_perception_option_is_refused_naming_it(key, value):
    with pytest.raises(Exception) as err:
        perception.parse({key: value})
    assert err.value.name == key
