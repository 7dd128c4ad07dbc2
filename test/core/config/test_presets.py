"""Presets: listing, loading, datasheet geometry and merge order."""

import numpy as np
import pytest

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config import from_dict, LidarConfig
from ubot_lidar_sim.core.config.presets import (list_presets, load_preset, merge_params,
                                                preset_summary)
from ubot_lidar_sim.core.errors import ConfigError

PRESETS = ('custom', 'leishen_c16', 'velodyne_vlp16', 'robosense_helios32', 'ouster_os1_64',
           'ouster_os1_128')


def test_every_contract_preset_is_listed_with_a_summary():
    names = list_presets()
    assert names[0] == 'custom'
    assert set(PRESETS) <= set(names)
    for name in names:
        assert preset_summary(name)


@pytest.mark.parametrize('name', PRESETS)
def test_every_preset_builds_a_valid_config_and_scan(name):
    cfg = from_dict(LidarConfig, load_preset(name))
    assert cfg.preset == name
    beams = build_beams(cfg)
    assert beams.n_beams == cfg.channels * cfg.horizontal_samples


def test_vlp16_preset_has_the_datasheet_geometry():
    cfg = from_dict(LidarConfig, load_preset('velodyne_vlp16'))
    assert (cfg.channels, cfg.horizontal_samples, cfg.rate_hz) == (16, 1800, 10.0)
    # bound: float64 tables of exact decimals, ulps only; default rtol 1e-7
    np.testing.assert_allclose(cfg.elevations_deg, np.arange(-15, 16, 2))
    assert cfg.max_range_m == 100.0 and cfg.point_layout == 'velodyne'


def test_ouster_presets_have_their_channel_counts_and_fov():
    c64 = from_dict(LidarConfig, load_preset('ouster_os1_64'))
    c128 = from_dict(LidarConfig, load_preset('ouster_os1_128'))
    assert (c64.channels, c128.channels) == (64, 128)
    assert c128.horizontal_samples == 1024 and c128.wavelength_nm == 865.0
    # bound: float64 degrees(radians(x)), a few ulps; default rtol 1e-7
    np.testing.assert_allclose(np.degrees(build_beams(c128).ring_elevation_rad[[0, -1]]),
                               [-22.5, 22.5])


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ConfigError, match='velodyne_vlp16'):
        load_preset('hdl64')


def test_merge_order_is_preset_then_file_then_overrides():
    merged = merge_params({'preset': 'velodyne_vlp16', 'max_range_m': 80.0, 'channels': 16},
                          {'max_range_m': 50.0})
    assert merged['max_range_m'] == 50.0
    assert merged['horizontal_samples'] == 1800
    assert merged['preset'] == 'velodyne_vlp16'
    assert merge_params({}, {})['preset'] == 'custom'
