"""The parts behind the flat parameters (issues 38, 49): pattern, physical model, describe."""

import ast
import json
from pathlib import Path
import pickle

import pytest

from ubot_lidar_sim.cli import main
from ubot_lidar_sim.core.config import (applicable_names, flat_fields, flat_paths, from_dict,
                                        LaserScanConfig, LidarConfig, PhysicalModel, PlanarPattern,
                                        RadiometryConfig, replace, RosettePattern,
                                        SpinningPattern, TerrainConfig, to_dict)
from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.errors import ConfigError

CONFIG_DIR = Path(__file__).resolve().parents[3] / 'ubot_lidar_sim' / 'core' / 'config'


def _describe(capsys, *argv):
    assert main(['describe', *argv]) == 0
    return json.loads(capsys.readouterr().out)['settings']


def test_os1_64_describes_no_rosette_field(capsys):
    settings = _describe(capsys, '--sensor', 'lidar_3d', '--set', 'preset=ouster_os1_64')
    assert not [name for name in settings if name.startswith('rosette_')]
    assert settings['spin_direction'] == 'cw' and 'range_at_10pct_m' in settings


def test_rosette_describes_no_spinning_field(capsys):
    settings = _describe(capsys, '--sensor', 'lidar_3d', '--set', 'preset=livox_avia')
    assert 'rosette_prism_hz' in settings
    assert not {'spin_direction', 'scan_start_azimuth_deg', 'ring_time_offsets_us'} & set(settings)


def test_geometric_describes_no_physical_field(capsys):
    settings = _describe(capsys, '--sensor', 'laser_scan')
    assert 'resolution_deg' in settings and 'motion_distortion' in settings
    assert not {'range_at_10pct_m', 'sub_rays', 'weather', 'return_mode'} & set(settings)


def test_pattern_and_physical_are_the_sub_configs_of_the_flat_fields():
    cfg = effective_config('lidar_3d', overrides={'preset': 'livox_avia'})
    assert type(cfg.pattern) is RosettePattern
    assert cfg.pattern.rosette_prism_hz == cfg.rosette_prism_hz
    assert isinstance(cfg.physical, PhysicalModel)
    assert cfg.physical.radiometry.detection_threshold_counts == cfg.detection_threshold_counts
    assert type(LidarConfig().pattern) is SpinningPattern
    assert LidarConfig(model='geometric').physical is None
    laser = LaserScanConfig(fov_deg=180.0, resolution_deg=0.5)
    assert type(laser.pattern) is PlanarPattern and laser.pattern.n_rays == 360
    assert laser.physical is None and replace(laser, model='physical').physical is not None


def test_the_flat_names_round_trip_and_errors_name_them():
    cfg = LidarConfig(rosette_spin_hz=2.0, model='geometric')    # kept, though not applying
    assert from_dict(LidarConfig, to_dict(cfg)) == cfg
    assert 'rosette_spin_hz' not in applicable_names(cfg)
    with pytest.raises(ConfigError, match='rosette_prism_hz'):
        LidarConfig(pattern_type='rosette', horizontal_fov_deg=77.2, rosette_prism_hz=(1.0, 2.0))
    with pytest.raises(ConfigError, match='visibility_override_m'):
        LidarConfig(visibility_override_m=0.5)


def test_each_flat_name_lives_in_one_part():
    paths = flat_paths(LidarConfig)
    assert paths['range_at_10pct_m'] == ('physical_model', 'radiometry', 'range_at_10pct_m')
    assert paths['rain_db_per_km'] == ('physical_model', 'atmosphere', 'rain_db_per_km')
    assert paths['world_file'] == ('shared', 'world_file')
    assert paths['channels'] == ('sensor', 'channels')
    assert len(paths) == len(flat_fields(LidarConfig)) == len(to_dict(LidarConfig()))   # no clash
    cfg = LidarConfig(range_at_10pct_m=120.0, channels=32)
    assert type(cfg.radiometry) is RadiometryConfig
    assert cfg.radiometry.range_at_10pct_m == cfg.range_at_10pct_m == 120.0
    assert cfg.sensor.channels == cfg.channels == 32
    assert TerrainConfig(rate_hz=20.0).rays.rate_hz == 20.0


def test_the_laser_parts_keep_their_own_defaults():
    laser = LaserScanConfig(model='physical')
    assert laser.radiometry.range_at_10pct_m == 18.0 and laser.echoes.sub_rays == 1
    assert laser.to_lidar_config().range_at_10pct_m == 18.0
    assert LidarConfig().radiometry.range_at_10pct_m == 60.0


def test_a_bad_value_in_a_part_names_the_flat_parameter():
    with pytest.raises(ConfigError, match='range_noise_bands_m'):
        LidarConfig(range_noise_bands_m=(1.0,))
    with pytest.raises(ConfigError, match='max_range_m'):
        LaserScanConfig(min_range_m=5.0, max_range_m=2.0)
    with pytest.raises(TypeError, match='no_such_parameter'):
        LidarConfig(no_such_parameter=1)


def test_a_config_of_parts_pickles_to_an_equal_config():
    cfg = LidarConfig(channels=32, rain_override_mm_h=4.0)
    assert cfg.detection_threshold_counts > 0.0      # fills the cached threshold first
    copy = pickle.loads(pickle.dumps(cfg))
    assert copy == cfg and copy.rain_override_mm_h == 4.0 and hash(copy) == hash(cfg)


def test_config_imports_no_physics():
    for path in CONFIG_DIR.glob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert '.physics' not in node.module, f'{path.name}: {node.module}'
