"""The presets of issue 18: 2D scanners, Livox rosettes, firing orders; listing and describe."""

import json

import numpy as np
import pytest

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config import from_dict, LaserScanConfig, LidarConfig
from ubot_lidar_sim.core.config.presets import (list_presets, load_preset, preset_nodes,
                                                preset_pattern)
from ubot_lidar_sim.core.errors import ConfigError

SCANNERS_2D = ('sick_tim571', 'hokuyo_ust10lx', 'slamtec_rplidar_a2m8')
LIDARS = {'livox_avia': 'rosette', 'livox_mid360': 'rosette', 'velodyne_vlp32c': 'spinning',
          'velodyne_hdl64e': 'spinning'}


def test_each_preset_is_listed_with_its_sensor_and_pattern(capsys):
    assert set(SCANNERS_2D) == set(list_presets('laser_scan')) - {'custom'}
    assert set(LIDARS) <= set(list_presets('lidar_3d'))
    assert main(['presets']) == 0
    rows = {ln.split()[0]: ln.split()[1:3] for ln in capsys.readouterr().out.splitlines()}
    for name in SCANNERS_2D:
        assert rows[name] == ['laser_scan', 'planar'] and preset_pattern(name) == 'planar'
    for name, pattern in LIDARS.items():
        assert rows[name] == ['lidar_3d', pattern] and preset_nodes(name) == ('lidar_3d',)
    assert rows['custom'] == ['lidar_3d,laser_scan', 'spinning']


@pytest.mark.parametrize('name', SCANNERS_2D)
def test_2d_presets_give_datasheet_rays_and_describe(name, capsys):
    cfg = from_dict(LaserScanConfig, load_preset(name, 'laser_scan'))
    rays = {'sick_tim571': 811, 'hokuyo_ust10lx': 1081, 'slamtec_rplidar_a2m8': 800}[name]
    assert cfg.n_rays == rays and cfg.model == 'physical'
    assert main(['describe', '--sensor', 'laser_scan', '--set', f'preset={name}']) == 0
    data = json.loads(capsys.readouterr().out)
    assert data['settings']['preset'] == name and data['models']['model'].startswith('physical')
    assert f'{rays} rays' in data['models']['beam']


@pytest.mark.parametrize('name', sorted(LIDARS))
def test_3d_presets_build_and_describe(name, capsys):
    cfg = from_dict(LidarConfig, load_preset(name))
    assert build_beams(cfg).n_beams == cfg.channels * cfg.horizontal_samples
    assert main(['describe', '--sensor', 'lidar_3d', '--set', f'preset={name}']) == 0
    beam = json.loads(capsys.readouterr().out)['models']['beam']
    assert ('Risley rosette' in beam) == (LIDARS[name] == 'rosette')


def test_a_preset_of_the_other_sensor_is_refused():
    with pytest.raises(ConfigError, match='preset: got .sick_tim571.*a lidar_3d preset'):
        load_preset('sick_tim571')
    with pytest.raises(ConfigError, match='a laser_scan preset'):
        load_preset('livox_avia', 'laser_scan')


def test_livox_mid360_covers_its_datasheet_fov():
    cfg = from_dict(LidarConfig, load_preset('livox_mid360'))
    beams = build_beams(cfg)
    assert (beams.channels, beams.columns, cfg.rate_hz) == (4, 5000, 10.0)   # 200,000 points/s
    el = np.degrees(beams.elevation_rad)
    assert el.min() >= -7.0 - 1e-9 and el.max() <= 52.0 + 1e-9
    assert el.min() < -6.0 and el.max() > 51.0
    assert np.ptp(np.degrees(beams.azimuth_rad)) > 355.0


def test_rosette_sweeps_continue_the_pattern():
    cfg = from_dict(LidarConfig, load_preset('livox_avia'))
    first, second = build_beams(cfg, 0), build_beams(cfg, 1)
    # bound: direction tables differ by whole steps
    assert not np.allclose(first.dir_sensor, second.dir_sensor)
    np.testing.assert_array_equal(first.column_time_s, second.column_time_s)
    spinning = from_dict(LidarConfig, load_preset('velodyne_vlp16'))
    assert build_beams(spinning, 0) is build_beams(spinning, 7)
