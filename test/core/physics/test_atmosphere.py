import logging
import math

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import atmosphere as atm_mod
from ubot_lidar_sim.core.physics.atmosphere import (Atmosphere, drop_density,
                                                    fog_extinction, fog_lidar_ratio, kim_q,
                                                    Medium, rain_extinction,
                                                    rain_part_550)
from ubot_lidar_sim.core.physics.weather import scan_weather, Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere

CFG = LidarConfig()


def air(cfg, rain_mm_h=0.0, visibility_m=math.inf):
    """Return the Atmosphere a scan of cfg sees in this rain and visibility."""
    weather = Weather(rain_mm_h=rain_mm_h, visibility_m=visibility_m)
    return atmosphere(cfg.physical_model, scan_weather(cfg.atmosphere, weather))


def test_rain_extinction_matches_carbonneau_vectors_in_db_per_km():
    db = [rain_extinction(CFG.atmosphere, r) * 1000.0 * 10.0 * math.log10(math.e)
          for r in (1, 5, 10, 25, 50)]
    # bound: the published figures' rounding, half a unit of their last printed digit
    np.testing.assert_allclose(db[:4], [1.08, 3.16, 5.03, 9.30], atol=5e-3)
    np.testing.assert_allclose(db[4], 14.8, atol=5e-2)
    assert rain_extinction(CFG.atmosphere, 0.0) == 0.0
    assert rain_extinction(CFG.atmosphere, -3.0) == 0.0


def test_two_way_transmission_over_100m_at_25mm_h():
    atm = air(CFG, 25.0)
    # bound: 0.65 is printed to 2 digits, +-0.005
    np.testing.assert_allclose(atm.two_way_transmission(100.0), 0.65, atol=0.005)


def test_drop_density_is_marshall_palmer_n0_over_lambda():
    for r in (1.0, 5.0, 25.0):
        # bound: rain_drops_per_m3 = 1951.2 is 8000 / 4.1 to 5 digits (1.1e-5 rel) < 1e-4
        np.testing.assert_allclose(drop_density(CFG.atmosphere, r), 8000.0 / (4.1 * r ** -0.21),
                                   rtol=1e-4)
    assert drop_density(CFG.atmosphere, 0.0) == 0.0


def test_kim_wavelength_factors_at_905nm():
    factors = [(905.0 / 550.0) ** -kim_q(v) for v in (10.0, 3.0, 0.4)]
    # bound: the published factors' rounding, half a unit of the 2nd decimal
    np.testing.assert_allclose(factors, [0.52, 0.66, 1.0], atol=0.005)
    assert (kim_q(60.0), kim_q(20.0), kim_q(0.75)) == (1.6, 1.3, 0.25)


def test_fog_only_extinction_by_hand():
    q = 0.16 * 2.0 + 0.34
    # bound: same float64 formula both sides (pow within ulps); default rtol 1e-7
    np.testing.assert_allclose(fog_extinction(CFG.optics, 2000.0, 0.0),
                               3.912 / 2000.0 * (905 / 550) ** -q)
    assert fog_extinction(CFG.optics, math.inf, 0.0) == 0.0


def test_clear_air_plus_rain_gives_rain_extinction_alone():
    a_rain = rain_extinction(CFG.atmosphere, 10.0)
    for vis in (3.912 / a_rain, math.inf):
        atm = air(CFG, 10.0, vis)
        assert atm.medium('fog').alpha_per_m == 0.0
        # bound: same float64 extinction, ulps only
        np.testing.assert_allclose(atm.alpha, a_rain, rtol=1e-12)


def test_residual_fog_is_clamped_and_logged_once(caplog, monkeypatch):
    monkeypatch.setattr(atm_mod, '_clamp_warned', False)
    with caplog.at_level(logging.WARNING, logger='ubot_lidar_sim.core.physics.atmosphere'):
        assert fog_extinction(CFG.optics, 50000.0, rain_part_550(CFG.atmosphere, 25.0)) == 0.0
        assert fog_extinction(CFG.optics, 40000.0, rain_part_550(CFG.atmosphere, 25.0)) == 0.0
    assert sum('clamped' in r.getMessage() for r in caplog.records) == 1


def test_acres_rain_visibility_model_removes_document_001_value():
    cfg = LidarConfig(rain_visibility_model='acres')
    # bound: the published figures' rounding, half a unit of their last printed digit
    np.testing.assert_allclose(rain_part_550(cfg.atmosphere, 10.0), 1.50e-3, atol=5e-6)
    np.testing.assert_allclose(rain_part_550(CFG.atmosphere, 10.0), 1.16e-3, atol=5e-6)


def test_lidar_ratio_blends_droplets_and_aerosol():
    # Issue 42: droplet share of the extinction d = 1 - (V / 1 km)^2, backscatter
    # alpha (d / 18.8 + (1 - d) / 60): by hand, 400 m: d = 0.84, 1 / (0.84 / 18.8 + 0.16 / 60)
    # = 21.1204 sr; 750 m: d = 0.4375, 30.6314 sr; >= 1 km: haze alone, 60 sr.
    assert fog_lidar_ratio(CFG.atmosphere, 2000.0) == 60.0
    assert fog_lidar_ratio(CFG.atmosphere, 1000.0) == 60.0
    # bound: the hand values' rounding, half a unit of their 4th decimal
    np.testing.assert_allclose(fog_lidar_ratio(CFG.atmosphere, 400.0), 21.1204, atol=5e-5)
    np.testing.assert_allclose(fog_lidar_ratio(CFG.atmosphere, 750.0), 30.6314, atol=5e-5)
    # Dense fog tends to the droplets' 18.8 sr; the ratio rises steadily with the visibility.
    # bound: d = 1 - 1e-8 at V = 0.1 m: 18.8 to 1e-7 relative
    np.testing.assert_allclose(fog_lidar_ratio(CFG.atmosphere, 0.1), 18.8, rtol=1e-7)
    grid = np.geomspace(5.0, 1000.0, 200)
    assert np.all(np.diff([fog_lidar_ratio(CFG.atmosphere, v) for v in grid]) > 0.0)


def test_weather_off_and_overrides():
    assert not air(LidarConfig(weather=False), 25.0, 500.0).active
    assert not air(CFG).active
    atm = air(LidarConfig(rain_override_mm_h=5.0), 0.0, math.inf)
    # bound: same float64 functions both sides; default rtol 1e-7 absorbs rounding order
    np.testing.assert_allclose(atm.medium('rain').alpha_per_m,
                               rain_extinction(CFG.atmosphere, 5.0))
    atm = air(LidarConfig(visibility_override_m=math.inf), 0.0, 300.0)
    assert not atm.active
    # bound: same float64 functions both sides; default rtol 1e-7
    np.testing.assert_allclose(air(CFG, 25.0).medium('rain').beta_per_m_sr,
                               rain_extinction(CFG.atmosphere, 25.0) / CFG.rain_lidar_ratio_sr)


def test_media_add_up_and_fog_is_the_visibility_beyond_the_precipitation():
    atm = air(CFG, 10.0, 800.0)
    rain, snow, fog = (atm.medium(name) for name in ('rain', 'snow', 'fog'))
    assert (rain.name, rain.granular, fog.name, fog.granular) == ('rain', True, 'fog', False)
    assert (snow.name, snow.granular, snow.alpha_per_m) == ('snow', True, 0.0)
    assert rain.particles_per_m3 == drop_density(CFG.atmosphere, 10.0)
    assert atm.alpha == rain.alpha_per_m + fog.alpha_per_m
    assert atm.beta == rain.beta_per_m_sr + fog.beta_per_m_sr
    # bound: same float64 functions both sides; default rtol 1e-7 absorbs rounding order
    rain_550 = rain_part_550(CFG.atmosphere, 10.0)
    np.testing.assert_allclose(fog.alpha_per_m, fog_extinction(CFG.optics, 800.0, rain_550))
    assert atm.medium('hail') == Medium('hail')
    assert not Atmosphere().active and Atmosphere().alpha == 0.0
