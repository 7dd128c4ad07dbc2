import logging
import math

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import atmosphere as atm_mod
from ubot_lidar_sim.core.physics.atmosphere import (
    atmosphere, clutter, drop_density, fog_extinction, fog_lidar_ratio, kim_q,
    marshall_palmer_drops, rain_extinction, rain_part_550)

CFG = LidarConfig()


def test_rain_extinction_matches_carbonneau_vectors_in_db_per_km():
    db = [rain_extinction(CFG, r) * 1000.0 * 10.0 * math.log10(math.e) for r in (1, 5, 10, 25, 50)]
    np.testing.assert_allclose(db, [1.08, 3.16, 5.03, 9.30, 14.8], rtol=4e-3)
    assert rain_extinction(CFG, 0.0) == 0.0 and rain_extinction(CFG, -3.0) == 0.0


def test_two_way_transmission_over_100m_at_25mm_h():
    atm = atmosphere(CFG, 25.0)
    np.testing.assert_allclose(atm.two_way_transmission(100.0), 0.65, atol=0.005)


def test_drop_density_is_marshall_palmer_n0_over_lambda():
    for r in (1.0, 5.0, 25.0):
        np.testing.assert_allclose(drop_density(CFG, r), 8000.0 / (4.1 * r ** -0.21), rtol=1e-4)
        np.testing.assert_allclose(marshall_palmer_drops(r), 8000.0 / (4.1 * r ** -0.21))
    assert drop_density(CFG, 0.0) == 0.0


def test_marshall_palmer_counts_with_005mm_cut():
    got = [marshall_palmer_drops(r, 0.05) for r in (1, 5, 10, 25)]
    np.testing.assert_allclose(got, [1590, 2364, 2789, 3456], rtol=1e-3)


def test_kim_wavelength_factors_at_905nm():
    factors = [(905.0 / 550.0) ** -kim_q(v) for v in (10.0, 3.0, 0.4)]
    np.testing.assert_allclose(factors, [0.52, 0.66, 1.0], atol=0.006)
    assert (kim_q(60.0), kim_q(20.0), kim_q(0.75)) == (1.6, 1.3, 0.25)


def test_fog_only_extinction_by_hand():
    q = 0.16 * 2.0 + 0.34
    np.testing.assert_allclose(fog_extinction(CFG, 2000.0, 0.0),
                               3.912 / 2000.0 * (905 / 550) ** -q)
    assert fog_extinction(CFG, math.inf, 0.0) == 0.0


def test_clear_air_plus_rain_gives_rain_extinction_alone():
    a_rain = rain_extinction(CFG, 10.0)
    for vis in (3.912 / a_rain, math.inf):
        atm = atmosphere(CFG, 10.0, vis)
        assert atm.alpha_fog_per_m == 0.0
        np.testing.assert_allclose(atm.alpha, a_rain, rtol=1e-12)


def test_residual_fog_is_clamped_and_logged_once(caplog, monkeypatch):
    monkeypatch.setattr(atm_mod, '_clamp_warned', False)
    with caplog.at_level(logging.WARNING, logger='ubot_lidar_sim.core.physics.atmosphere'):
        assert fog_extinction(CFG, 50000.0, 25.0) == 0.0
        assert fog_extinction(CFG, 40000.0, 25.0) == 0.0
    assert sum('clamped' in r.getMessage() for r in caplog.records) == 1


def test_acres_rain_visibility_model_removes_document_001_value():
    cfg = LidarConfig(rain_visibility_model='acres')
    np.testing.assert_allclose(rain_part_550(cfg, 10.0), 1.50e-3, rtol=3e-3)
    np.testing.assert_allclose(rain_part_550(CFG, 10.0), 1.16e-3, rtol=3e-3)


def test_lidar_ratio_blends_droplets_and_aerosol():
    assert fog_lidar_ratio(CFG, 400.0) == 18.8
    assert fog_lidar_ratio(CFG, 2000.0) == 60.0
    np.testing.assert_allclose(fog_lidar_ratio(CFG, 750.0), 1 / (0.5 / 18.8 + 0.5 / 60.0))


def test_weather_off_and_overrides():
    assert not atmosphere(LidarConfig(weather=False), 25.0, 500.0).active
    assert not atmosphere(CFG).active
    atm = atmosphere(LidarConfig(rain_override_mm_h=5.0), 0.0, math.inf)
    np.testing.assert_allclose(atm.alpha_rain_per_m, rain_extinction(CFG, 5.0))
    atm = atmosphere(LidarConfig(visibility_override_m=math.inf), 0.0, 300.0)
    assert not atm.active
    np.testing.assert_allclose(atmosphere(CFG, 25.0).beta_rain_per_m_sr,
                               rain_extinction(CFG, 25.0) / CFG.rain_lidar_ratio_sr)


def test_fog_clutter_is_continuous_pi_beta_dr_with_two_way_loss():
    cfg = LidarConfig(min_range_m=1.0, clutter_max_range_m=2.5, range_at_10pct_m=1000.0)
    atm = atmosphere(cfg, 0.0, 200.0)
    c = clutter(cfg, atm, 2, np.array([np.inf, 1.5]), np.zeros(2, int), np.random.default_rng(0))
    np.testing.assert_array_equal(c.beam, [0, 0, 1])
    np.testing.assert_allclose(c.range_m, [1.375, 2.125, 1.375])
    rho = math.pi * atm.beta_fog_per_m_sr * 0.75
    gain = 100 / 0.1 * (1000 / c.range_m) ** 2 * -np.expm1(-c.range_m ** 2)
    np.testing.assert_allclose(c.power_counts, rho * gain * np.exp(-2 * atm.alpha * c.range_m))
    assert np.all(c.material == 0) and np.all(c.class_id == 20)


def test_rain_clutter_brightness_x_has_mean_one():
    cfg = LidarConfig(min_range_m=1.0, clutter_max_range_m=1.75, range_at_10pct_m=1000.0)
    atm = atmosphere(cfg, 25.0)
    n = 100000
    c = clutter(cfg, atm, n, np.full(n, np.inf), np.zeros(n, int), np.random.default_rng(1))
    t2 = atm.two_way_transmission(1.375)
    mean_rho = c.rho_app.sum() / t2 / n
    np.testing.assert_allclose(mean_rho / (math.pi * atm.beta_rain_per_m_sr * 0.75), 1.0,
                               atol=0.05)
    e = np.random.default_rng(2).exponential(size=200000)
    np.testing.assert_allclose(np.mean(e * e / 2), 1.0, atol=0.03)


def test_faint_clutter_slabs_are_skipped_and_draws_are_reproducible():
    atm = atmosphere(CFG, 0.5)
    far = LidarConfig(min_range_m=30.0, max_range_m=100.0, clutter_max_range_m=40.0)
    assert len(clutter(far, atm, 4, np.full(4, np.inf), np.zeros(4, int),
                       np.random.default_rng(0))) == 0
    heavy = atmosphere(CFG, 25.0)
    a = clutter(CFG, heavy, 50, np.full(50, 3.0), np.zeros(50, int), np.random.default_rng(7))
    b = clutter(CFG, heavy, 50, np.full(50, 3.0), np.zeros(50, int), np.random.default_rng(7))
    np.testing.assert_array_equal(a.power_counts, b.power_counts)
    assert np.all(a.range_m < 3.0)
