"""Weather: the one value that carries a scan's weather, and the limits every entrance uses."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import RAIN_MAX_MM_H, scan_weather, Weather, weather_from


@pytest.mark.parametrize('kw, message', [
    ({'rain_mm_h': float('nan')}, 'rain_mm_h: got nan'),
    ({'rain_mm_h': -1.0}, 'rain_mm_h: got -1.0, allowed 0 to 500 mm/h'),
    ({'rain_mm_h': math.inf}, 'rain_mm_h: got inf'),
    ({'rain_mm_h': 1e9}, 'rain_mm_h: got 1000000000.0'),
    ({'visibility_m': 0.0}, 'visibility_m: got 0.0, allowed inf (clear) or >= 1 m'),
    ({'visibility_m': -math.inf}, 'visibility_m: got -inf'),
    ({'surface_wetness': 1.5}, 'surface_wetness: got 1.5'),
    ({'surface_wetness': -math.inf}, 'surface_wetness: got -inf'),
    ({'puddle_depth_m': 2.0}, 'puddle_depth_m: got 2.0, allowed 0 to 1 m'),
    ({'smoke': [[0, 0, 0, 1]], 'smoke_density': []}, 'smoke_density: got 0, allowed 1 values'),
    ({'smoke': [[0, 0, 0, 1]] * 1025, 'smoke_density': [0.5] * 1025},
     "smoke: got '1025 volumes', allowed at most 1024"),
    ({'smoke': [[0, 0, 0, 1], [0, 0, math.nan, 1]], 'smoke_density': [0.5, 0.5]},
     'smoke[1].center: got [0.0, 0.0, nan], allowed finite x, y, z'),
    ({'smoke': [[0, 0, 0, 0.0]], 'smoke_density': [0.5]}, 'smoke[0].radius_m: got 0.0'),
    ({'smoke': [[0, 0, 0, 1], [0, 0, 0, 1]], 'smoke_density': [0.5, 1.5]},
     'smoke[1].density: got 1.5, allowed 0 to 1'),
])
def test_weather_refuses_values_beyond_its_limits_naming_the_field(kw, message):
    with pytest.raises(ConfigError) as err:
        Weather(**kw)
    assert str(err.value).startswith(message)


def test_weather_at_its_limits_is_accepted_and_derives_wetness_from_rain():
    w = Weather(rain_mm_h=RAIN_MAX_MM_H, visibility_m=1.0, surface_wetness=-5.0,
                puddle_depth_m=1.0, smoke=[[1, 2, 3, 1000.0]], smoke_density=[1.0])
    assert (w.rain_mm_h, w.visibility_m, w.smoke.shape) == (500.0, 1.0, (1, 4))
    assert Weather(visibility_m=math.inf).visibility_m == math.inf
    # bound: float64 exp both sides (numpy vs math, each < 4 ulps); default rtol 1e-7
    np.testing.assert_allclose(Weather(rain_mm_h=1.0).wetness, 1 - math.exp(-1.0))
    assert Weather(rain_mm_h=1.0, surface_wetness=0.25).wetness == 0.25


def test_weather_from_names_a_refused_value_as_the_caller_does():
    names = {'rain_mm_h': 'environment.rain_rate_mm_h', 'smoke': 'environment.smoke'}
    with pytest.raises(ConfigError, match=r'^environment\.rain_rate_mm_h: got 600'):
        weather_from(names, rain_mm_h=600)
    with pytest.raises(ConfigError, match=r'^environment\.smoke\[0\]\.radius_m: got -1\.0'):
        weather_from(names, smoke=[[0, 0, 0, -1]], smoke_density=[0.5])
    with pytest.raises(ConfigError, match=r'^visibility_m: got 0'):
        weather_from(names, visibility_m=0)
    assert weather_from(names, rain_mm_h=3).rain_mm_h == 3.0


def test_describe_is_short_text_of_what_is_set():
    assert Weather().describe() == 'clear'
    w = Weather(rain_mm_h=4.0, visibility_m=600.0, surface_wetness=0.4, puddle_depth_m=0.02,
                smoke=[[0, 0, 0, 1], [1, 1, 1, 1]], smoke_density=[0.5, 0.5])
    assert w.describe() == ('rain 4.0 mm/h, visibility 600 m, wetness 0.40, puddles 20 mm, '
                            '2 smoke volumes')


def test_scan_weather_applies_the_config_overrides():
    base = Weather(rain_mm_h=2.0, visibility_m=300.0, puddle_depth_m=0.01)
    assert scan_weather(LidarConfig().atmosphere, base) is base
    assert scan_weather(LidarConfig().atmosphere, None).describe() == 'clear'
    air = LidarConfig(rain_override_mm_h=5.0, visibility_override_m=math.inf).atmosphere
    w = scan_weather(air, base)
    assert (w.rain_mm_h, w.visibility_m, w.puddle_depth_m) == (5.0, math.inf, 0.01)


def test_config_overrides_obey_the_weather_limits():
    with pytest.raises(ConfigError, match='visibility_override_m: got 0.5, allowed inf'):
        LidarConfig(visibility_override_m=0.5)
    with pytest.raises(ConfigError, match='rain_override_mm_h: got 600'):
        LidarConfig(rain_override_mm_h=600.0)
    assert LidarConfig(visibility_override_m=-0.5).visibility_override_m == -0.5
