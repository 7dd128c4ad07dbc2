"""The datasheet's range precision by range band (range_noise_bands_m, radiometry.py)."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import from_dict, LaserScanConfig, LidarConfig
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics import radiometry as rad
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.describe import describe_models
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

#: Livox Mid-360: <= 3 cm at 0.2 m, <= 2 cm at 10 m (1 sigma).
MID360_BANDS = (0.2, 0.03, 10.0, 0.02)


def test_floor_interpolates_the_bands_linearly_and_holds_their_ends():
    cfg = LidarConfig(range_noise_std_m=0.05, range_noise_bands_m=MID360_BANDS)
    # By hand: 0.03 + (0.02 - 0.03) (5.1 - 0.2) / (10 - 0.2) = 0.03 - 0.01 x 0.5 = 0.025; below
    # 0.2 m the 0.2 m value, beyond 10 m the 10 m value (range_noise_std_m unused).
    got = rad.range_noise_floor_m(cfg.noise, [0.2, 10.0, 5.1, 0.1, 50.0])
    # bound: np.interp of exact decimals, a few float64 ulps of 0.03
    np.testing.assert_allclose(got, [0.03, 0.02, 0.025, 0.03, 0.02], rtol=0, atol=1e-15)
    assert rad.range_noise_floor_m(cfg.noise, np.zeros((3, 2))).shape == (3, 2)


def test_empty_bands_give_range_noise_std_m_at_every_range():
    cfg = LidarConfig(range_noise_std_m=0.017)
    assert cfg.range_noise_bands_m == ()
    np.testing.assert_array_equal(rad.range_noise_floor_m(cfg.noise, [0.0, 0.2, 5.1, 1e4]),
                                  [0.017] * 4)


def test_the_low_snr_term_still_adds_in_quadrature_to_the_banded_floor():
    cfg = LidarConfig(range_noise_bands_m=MID360_BANDS, range_std_low_snr_m=0.03)
    snr_spec = 100.0 / math.sqrt(120.0)
    # At 5.1 m the floor is 0.025; at SNR = 2 SNR_spec the low-SNR term is 0.015.
    # bound: float64 hypot of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(rad.range_noise_std(cfg.noise, cfg.radiometry, 2 * snr_spec, 5.1),
                               math.hypot(0.025, 0.015))


@pytest.mark.parametrize('bands, why', [
    ((0.2, 0.03, 10.0), 'odd length'),
    ((10.0, 0.02, 0.2, 0.03), 'decreasing ranges'),
    ((0.2, 0.03, 0.2, 0.02), 'repeated range'),
    ((0.2, -0.03, 10.0, 0.02), 'negative std'),
    ((0.2, 11.0, 10.0, 0.02), 'std above 10 m'),
    ((-0.2, 0.03, 10.0, 0.02), 'negative range'),
    ((0.2, math.nan, 10.0, 0.02), 'NaN'),
])
def test_bad_bands_raise_the_config_error_naming_the_parameter(bands, why):
    with pytest.raises(ConfigError, match='range_noise_bands_m') as err:
        LidarConfig(range_noise_bands_m=bands)
    assert err.value.name == 'range_noise_bands_m', why
    if not any(math.isnan(b) for b in bands):      # a NaN item is refused as not a float
        assert 'strictly increasing, std_m in [0, 10]' in str(err.value)
        assert err.value.value == bands


def test_the_2d_scanner_physical_model_carries_the_bands():
    cfg = LaserScanConfig(model='physical', range_noise_bands_m=MID360_BANDS)
    assert cfg.to_lidar_config().range_noise_bands_m == MID360_BANDS
    with pytest.raises(ConfigError, match='range_noise_bands_m'):
        LaserScanConfig(range_noise_bands_m=(1.0,))


def test_livox_mid360_preset_has_the_published_bands():
    cfg = from_dict(LidarConfig, load_preset('livox_mid360'))
    assert cfg.range_noise_bands_m == MID360_BANDS
    assert cfg.range_noise_std_m == 0.02


def test_describe_states_the_bands_or_the_single_floor():
    banded = describe_models(LidarConfig(range_noise_bands_m=MID360_BANDS))['signal']
    assert 'range noise floor by range band (0.03 m at 0.2 m, 0.02 m at 10 m;' in banded
    plain = describe_models(LidarConfig(range_noise_std_m=0.02))['signal']
    assert 'range noise floor 0.02 m plus' in plain


def _wall_scan_residuals(tmp_path, wall_x_m, half_m, frames=4):
    """
    Scan a wall (face at x = wall_x_m, +/- half_m in y and z) with livox_mid360, pencil beams.

    Imperfections (calibration residuals, range walk) and the low-SNR term off, so a point's
    range is the true range along its ray plus floor(range) n1. Returns (true range, residual).
    """
    (tmp_path / 'm.yaml').write_text('other: {reflectivity: 0.5}\n')
    (tmp_path / 'w.yaml').write_text(
        'frame: map\nobjects:\n  - {name: wall, type: box, size_m: '
        f'[0.02, {2 * half_m}, {2 * half_m}], pose: {{xyz: [{wall_x_m + 0.01}, 0, 0]}}, '
        'material: other}\n')
    mats = MaterialTable.load(str(tmp_path / 'm.yaml'))
    world = World.load(str(tmp_path / 'w.yaml'), mats)
    cfg = from_dict(LidarConfig, {**load_preset('livox_mid360'), 'sub_rays': 1,
                                  'imperfections': False, 'range_std_low_snr_m': 0.0})
    sim = LidarSimulator(cfg, world, mats)
    pts = np.concatenate([sim.scan(BodyTwist(np.eye(4)), 0.0, None, scan_index=k).points
                          for k in range(frames)])
    r = pts['range'].astype(np.float64)
    # The ray's direction is the point's: x = r d_x, so the wall is at wall_x_m r / x.
    true_r = wall_x_m * r / pts['x'].astype(np.float64)
    return true_r, r - true_r


@pytest.mark.parametrize('wall_x_m, half_m, floor_m', [
    # ranges 0.5-0.53 m: floor 0.03 - 0.01 (r - 0.2) / 9.8 = 0.02966-0.02969 m (hand);
    (0.5, 0.12, 0.0297),
    # ranges 10-10.6 m: beyond the last point, held at 0.02 m.
    (10.0, 2.4, 0.02),
])
def test_livox_mid360_wall_scatter_follows_the_bands(tmp_path, wall_x_m, half_m, floor_m):
    true_r, resid = _wall_scan_residuals(tmp_path, wall_x_m, half_m)
    n = resid.size
    assert n >= 1000, n                # ~2 % of the 4 x 20,000 shots (1591 when written)
    sigma = 0.03 + (0.02 - 0.03) * (np.clip(true_r, 0.2, 10.0) - 0.2) / 9.8
    assert np.all(np.abs(sigma - floor_m) < 5e-4)
    z = resid / sigma
    # bound: n standard normals: the mean has standard error 1 / sqrt(n), the sample standard
    # deviation 1 / sqrt(2 n); 5 standard errors (p < 1e-6 each). Float32 ranges (ulp < 1e-6 m)
    # and hits (f32_hit_bound_m < 1e-5 m) are < 1e-3 of sigma: well inside.
    assert abs(z.mean()) <= 5.0 / math.sqrt(n)
    assert abs(z.std() - 1.0) <= 5.0 / math.sqrt(2.0 * n)
