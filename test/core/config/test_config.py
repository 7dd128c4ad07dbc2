import dataclasses
import math

import numpy as np
import pytest

from ubot_lidar_sim.core.beams.firing import planar_beams
from ubot_lidar_sim.core.beams.planar_and_rosette import planar_azimuths_rad
from ubot_lidar_sim.core.config import (descriptors, from_dict, LaserScanConfig, LidarConfig,
                                        replace, TerrainConfig, to_dict)
from ubot_lidar_sim.core.errors import ConfigError, ScanError


def test_lidar_defaults_match_contract():
    cfg = LidarConfig()
    assert (cfg.channels, cfg.horizontal_samples, cfg.horizontal_fov_deg) == (16, 360, 360.0)
    assert (cfg.min_range_m, cfg.max_range_m, cfg.max_rays_per_scan) == (0.1, 100.0, 65536)
    assert (cfg.sub_rays, cfg.max_hits_per_sub_ray, cfg.return_mode) == (
        7, 4, 'dual_strongest_last')
    assert (cfg.world_file, cfg.world_frame, cfg.seed, cfg.qos_depth) == ('flat', 'map', 0, 5)
    assert cfg.frame_id == cfg.sensor_id == 'lidar_3d'
    # bound: rain_drops_per_m3 = 1951.2 is 8000 / 4.1 to 5 digits (1.1e-5 rel) < 1e-4
    assert cfg.rain_drops_per_m3 == pytest.approx(8000 / 4.1, rel=1e-4)


def test_detection_threshold_of_defaults_by_hand():
    cfg = LidarConfig()
    # bound: z to 10 decimals: 5e-11 abs, 4e-11 rel << 1e-9; threshold 5e-10 of 86 << 1e-9
    np.testing.assert_allclose(cfg.detection_z, 1.2815515655, rtol=1e-9)
    np.testing.assert_allclose(cfg.detection_threshold_counts,
                               100 - 1.2815515655 * math.sqrt(120), rtol=1e-9)
    assert cfg.period_s == pytest.approx(0.1)  # bound: one float64 division; approx rel 1e-6


def test_out_of_range_value_names_param_value_and_range():
    with pytest.raises(ConfigError, match=r'detection_at_spec: got 0\.3, allowed .*0\.5, 0\.9999'):
        LidarConfig(detection_at_spec=0.3)
    with pytest.raises(ConfigError, match=r'channels: got 300, allowed int in \[1, 256\]'):
        LidarConfig(channels=300)
    with pytest.raises(ConfigError, match=r"return_mode: got 'best'.*'strongest'"):
        LidarConfig(return_mode='best')
    with pytest.raises(ConfigError, match='sub_rays'):
        LidarConfig(sub_rays=3)


def test_nan_and_wrong_types_are_rejected():
    with pytest.raises(ConfigError, match='divergence_mrad'):
        LidarConfig(divergence_mrad=float('nan'))
    with pytest.raises(ConfigError, match='channels'):
        LidarConfig(channels=16.5)
    with pytest.raises(ConfigError, match='noise_enabled'):
        LidarConfig(noise_enabled=1)
    with pytest.raises(ConfigError, match='frame_id'):
        LidarConfig(frame_id='')


def test_max_range_must_exceed_min_range():
    with pytest.raises(ConfigError, match=r'max_range_m: got 5\.0, allowed > min_range_m'):
        LidarConfig(min_range_m=5.0, max_range_m=5.0)


def test_per_ring_tables_must_have_channels_entries():
    with pytest.raises(ConfigError, match='elevations_deg'):
        LidarConfig(channels=2, elevations_deg=(1.0, 2.0, 3.0))
    with pytest.raises(ConfigError, match='ring_range_at_10pct_m'):
        LidarConfig(channels=2, ring_range_at_10pct_m=(40.0,))
    cfg = LidarConfig(channels=2, elevations_deg=[-1, 1], ring_range_at_10pct_m=[40, 90])
    assert cfg.elevations_deg == (-1.0, 1.0)


def test_too_many_rays_are_refused_by_the_config_itself_naming_both_numbers():
    # The one place of the rule: the CLI, the node and the dataset runner all build the config.
    with pytest.raises(ScanError, match=r'256 x 8192 = 2097152 rays.*65536'):
        LidarConfig(channels=256, horizontal_samples=8192)


def test_from_dict_accepts_ints_for_floats_and_lists_for_tuples():
    cfg = from_dict(LidarConfig, {'divergence_mrad': 2, 'ignored_objects': ['a', 'b']})
    assert isinstance(cfg.divergence_mrad, float) and cfg.divergence_mrad == 2.0
    assert cfg.ignored_objects == ('a', 'b')


def test_from_dict_unknown_key_names_the_key():
    with pytest.raises(ConfigError, match='no_such_param: got 3'):
        from_dict(LidarConfig, {'no_such_param': 3})


def test_replace_revalidates_and_to_dict_round_trips():
    cfg = replace(LidarConfig(), channels=32)
    assert cfg.channels == 32
    assert from_dict(LidarConfig, to_dict(cfg)) == cfg
    with pytest.raises(ConfigError, match='channels'):
        replace(cfg, channels=0)


def test_every_field_has_a_description():
    for cls in (LidarConfig, LaserScanConfig, TerrainConfig):
        for name, meta in descriptors(cls).items():
            assert meta['description'], name
    assert descriptors(LidarConfig)['channels']['read_only']
    assert not descriptors(LidarConfig)['divergence_mrad'].get('read_only', False)


def test_configs_are_frozen_and_hashable():
    cfg = LidarConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.channels = 3
    assert hash(cfg) == hash(LidarConfig())


def test_laser_scan_full_circle_has_no_repeated_ray():
    lidar = LaserScanConfig(resolution_deg=0.5).to_lidar_config()
    assert (lidar.channels, lidar.horizontal_samples, lidar.horizontal_fov_deg) == (1, 720, 360.0)
    assert (lidar.vertical_fov_up_deg, lidar.vertical_fov_down_deg) == (0.0, 0.0)
    assert (lidar.sub_rays, lidar.return_mode, lidar.rate_hz) == (1, 'strongest', 30.0)


def test_laser_scan_partial_fov_spans_n_minus_one_increments():
    # ceil(270 / 0.25) = 1080 rays, 1079 increments apart.
    lidar = LaserScanConfig(fov_deg=270.0, resolution_deg=0.25).to_lidar_config()
    assert lidar.horizontal_samples == 1080
    # bound: float64 product of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(lidar.horizontal_fov_deg, 1079 * 0.25)
    assert lidar.frame_id == 'laser'


def test_laser_scan_rejects_multi_return_modes_and_too_fine_resolution():
    with pytest.raises(ConfigError, match='return_mode'):
        LaserScanConfig(return_mode='dual_first_last')
    with pytest.raises(ConfigError, match='resolution_deg'):
        LaserScanConfig(resolution_deg=0.01)


def test_terrain_defaults_and_list_lengths():
    cfg = TerrainConfig()
    assert cfg.trace_lengths_m == (5.0,) * 5 and cfg.trace_enabled == (True,) * 5
    assert len(cfg.tire_positions_m) == 12 and cfg.tire_frames == ('',) * 4
    with pytest.raises(ConfigError, match='tire_radii_m: got .*list of 4 float'):
        TerrainConfig(tire_radii_m=(0.3, 0.3))
    with pytest.raises(ConfigError, match='tire_radii_m'):
        TerrainConfig(tire_radii_m=(0.3, 0.3, -0.3, 0.3))
    with pytest.raises(ConfigError, match='vehicle_center_source'):
        TerrainConfig(vehicle_center_source='magic')


def test_laser_scan_columns_fall_at_angle_min_plus_i_resolution():
    # The physical model traces the planar rays: angle_min + i res (0 for a full circle).
    for fov, res, start in ((270.0, 0.25, -134.875), (180.0, 1.0, -89.5), (360.0, 0.5, 0.0)):
        cfg = LaserScanConfig(fov_deg=fov, resolution_deg=res)
        az = np.degrees(planar_beams(planar_azimuths_rad(fov, res),
                                     np.zeros(cfg.n_rays)).column_azimuth_rad)
        # bound: float64 angles <= 360 deg, a few ulps (6e-14) << 1e-9
        np.testing.assert_allclose(az, start + res * np.arange(az.size), atol=1e-9)


def test_auto_column_blocks_are_one_per_32768_sub_rays_at_most_8_and_whole_otherwise():
    # VLP-16 grid 16 x 1800: 1 sub-ray 28,800 -> 1 block; 7 sub-rays 201,600 -> ceil(6.15) = 7.
    grid = {'channels': 16, 'horizontal_samples': 1800}
    assert LidarConfig(**grid, sub_rays=1).n_column_blocks == 1
    assert LidarConfig(**grid, sub_rays=7).n_column_blocks == 7
    # 128 x 2048 x 7 would be 56 blocks: at most 8; an explicit value is kept as given.
    big = {'channels': 128, 'horizontal_samples': 2048, 'max_rays_per_scan': 262144}
    assert LidarConfig(**big, sub_rays=7).n_column_blocks == 8
    assert LidarConfig(**big, sub_rays=7, column_blocks=3).n_column_blocks == 3
    # The geometric model's sweeps stay whole.
    assert LidarConfig(**big, sub_rays=7, model='geometric').n_column_blocks == 1
