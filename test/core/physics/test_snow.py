"""Snow laws (snow.py): the test vectors of docs/physics-weather.md."""

import math

import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import snow


@pytest.mark.parametrize('snow_type,rate,db_km', [
    ('dry', 1.0, 5.5449), ('dry', 5.0, 51.11), ('dry', 10.0, 133.01),
    ('wet', 1.0, 3.8781), ('wet', 5.0, 12.36), ('wet', 10.0, 20.35)])
def test_itu_snow_law_at_905_nm(snow_type, rate, db_km):
    # bound: the published figures' rounding (3 to 4 significant digits): rel 1e-3 covers it
    assert snow.snow_db_per_km(snow_type, 905.0, rate) == pytest.approx(db_km, rel=1e-3)


def test_snow_extinction_in_per_metre_and_none_without_snow():
    cfg = LidarConfig(wavelength_nm=905.0, snow_type='dry')
    air, optics = cfg.atmosphere, cfg.optics
    # bound: the published 51.11 dB/km and 4.3429: rel 1e-3 >= their rounding; 0.095: half a unit
    assert snow.snow_extinction(air, optics, 5.0) == pytest.approx(51.11 / 4.3429 / 1000, rel=1e-3)
    assert snow.snow_extinction(air, optics, 0.0) == 0.0
    # Two-way transmission over 100 m in 5 mm/h dry snow: 0.095.
    # bound: 0.095 printed to 3 decimals: abs 1e-3 covers half a unit
    alpha = snow.snow_extinction(air, optics, 5.0)
    assert math.exp(-2 * 100 * alpha) == pytest.approx(0.095, abs=1e-3)


@pytest.mark.parametrize('rate,n', [(1.0, 1490.2), (5.0, 795.5), (10.0, 607.1)])
def test_gunn_marshall_flake_density(rate, n):
    # bound: the published flake density, rounded at 1e-4 relative
    assert snow.flakes_per_m3(rate) == pytest.approx(n, rel=1e-4)
    assert snow.flakes_per_m3(0.0) == 0.0


def test_gunn_marshall_mean_melted_diameter():
    # bound: published slopes printed to 3 decimals: abs 1e-3 covers half a unit (5e-4)
    assert 1.0 / snow.flake_slope_per_mm(1.0) == pytest.approx(0.392, abs=1e-3)
    assert 1.0 / snow.flake_slope_per_mm(10.0) == pytest.approx(1.184, abs=1e-3)
