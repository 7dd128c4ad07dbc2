"""Clutter: the air's own backscatter as echoes, continuous (fog) and granular (rain)."""

import math

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics import soft_target
from ubot_lidar_sim.core.physics.atmosphere import Atmosphere, Medium
from ubot_lidar_sim.core.physics.clutter import clutter
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere

CFG = LidarConfig()


def air(cfg, rain_mm_h=0.0, visibility_m=math.inf):
    """Return the Atmosphere of a scan in this rain and visibility."""
    return atmosphere(cfg.physical_model, Weather(rain_mm_h=rain_mm_h, visibility_m=visibility_m))


def test_fog_clutter_is_one_soft_return_per_beam_at_its_peak_before_the_solid_hit():
    cfg = LidarConfig(min_range_m=1.0, clutter_max_range_m=2.5, range_at_10pct_m=1000.0,
                      fog_fluctuation_shape=0.0)
    atm = air(cfg, 0.0, 200.0)
    c = clutter(cfg.physical_model, cfg.sensor, atm, 2, np.array([np.inf, 1.2]), np.zeros(2, int),
                np.random.default_rng(0))
    fog = atm.medium('fog')
    grid, prof = soft_target.soft_profile(cfg.physical_model, fog.beta_per_m_sr, atm.alpha, 2.5)
    free = np.argmax(np.where(grid >= 1.0, prof, -1.0))
    wall = np.flatnonzero(grid <= 1.2)[-1]     # before the free peak: the profile still rises
    assert grid[wall] < grid[free]
    np.testing.assert_array_equal(c.beam, [0, 1])
    # bound: values copied from the float64 profile and divided by the same gain; default rtol 1e-7
    np.testing.assert_allclose(c.range_m, grid[[free, wall]])
    np.testing.assert_allclose(c.power_counts, prof[[free, wall]])
    gain = 100 / 0.1 * (1000 / c.range_m) ** 2 * -np.expm1(-(c.range_m / cfg.overlap_range_m) ** 2)
    np.testing.assert_allclose(c.rho_app, c.power_counts / gain)  # bound: same division
    assert np.all(c.material == 0) and np.all(c.class_id == PRECIPITATION_CLASS)


def test_undetectable_drops_are_not_drawn_and_draws_are_reproducible():
    atm = air(CFG, 0.5)
    far = LidarConfig(min_range_m=30.0, max_range_m=100.0, clutter_max_range_m=40.0)
    assert len(clutter(far.physical_model, far.sensor, atm, 4, np.full(4, np.inf),
                       np.zeros(4, int), np.random.default_rng(0))) == 0
    heavy = air(CFG, 25.0)
    a, b = (clutter(CFG.physical_model, CFG.sensor, heavy, 50, np.full(50, 3.0), np.zeros(50, int),
                    np.random.default_rng(7)) for _ in range(2))
    np.testing.assert_array_equal(a.power_counts, b.power_counts)
    assert np.all(a.range_m < 3.0)


def test_a_second_granular_medium_adds_clutter_from_the_same_stream():
    cfg = LidarConfig(min_range_m=1.0, clutter_max_range_m=4.0, range_at_10pct_m=1000.0)
    rain = air(cfg, 25.0)
    flakes = Medium('flakes', 29.0 * 2e-4, 2e-4, True, 500.0, 0.0, 2.0, 'dry')
    both = Atmosphere(rain.media + (flakes,))
    n = 300
    limit = np.where(np.arange(n) % 7 == 0, 2.0, np.inf)
    a, b = (clutter(cfg.physical_model, cfg.sensor, both, n, limit, np.zeros(n, int),
                    np.random.default_rng(3)) for _ in range(2))
    np.testing.assert_array_equal(a.power_counts, b.power_counts)
    assert len(a) > len(clutter(cfg.physical_model, cfg.sensor, rain, n, limit, np.zeros(n, int),
                                np.random.default_rng(3)))
