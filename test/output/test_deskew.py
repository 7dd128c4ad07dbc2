"""
deskew: true writes ego-motion-compensated SemanticKITTI scans, as KITTI's odometry scans are.

A sensor driving at 10 m/s straight at a wall 19.9 m ahead of the start: in sweep k (stamp k x
0.1 s) the scanner is at x = k m, so every deskewed wall point has x = 19.9 - k m; a skewed
scan spreads the wall over what the sensor drives while its beams sweep the wall.
"""

from builders import run_dataset
import numpy as np
import pytest
from ubot_lidar_sim.dataset import perception
import yaml

WORLD = {'objects': [{'name': 'wall', 'type': 'box', 'size_m': [0.2, 40, 10], 'class_id': 50,
                      'pose': {'xyz': [20, 0, 5]}}]}
LIDAR = {'channels': 8, 'horizontal_samples': 360, 'model': 'geometric',
         'vertical_fov_down_deg': 10.0}


def _wall_x(tmp_path, deskew):
    (tmp_path / 'world.yaml').write_text(yaml.safe_dump(WORLD))
    spec = {'worlds': [str(tmp_path / 'world.yaml')], 'frames': 3, 'formats': ['semantickitti'],
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


@pytest.mark.parametrize('key, value', [('deskew', 'yes'), ('label_map', 'kitti'),
                                        ('boxes', [300])])
def test_a_bad_perception_option_is_refused_naming_it(key, value):
    with pytest.raises(Exception) as err:
        perception.parse({key: value})
    assert err.value.name == key
