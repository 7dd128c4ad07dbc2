"""The weather-effect registry: what each effect reads, the order of the media, the streams."""

from dataclasses import fields
import math

import pytest

from ubot_lidar_sim.core.config import flat_fields, LidarConfig, PhysicalModel
from ubot_lidar_sim.core.physics import weather_effects
from ubot_lidar_sim.core.physics.atmosphere import KOSCHMIEDER, Medium
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import (atmosphere, clutter_streams, effects,
                                                         register_effect)


def test_every_effect_reads_weather_fields_and_config_parameters_that_exist():
    weather_names = {f.name for f in fields(Weather)}
    config_names = {f.name for f in flat_fields(LidarConfig)}
    for effect in effects():
        assert set(effect.weather_fields) <= weather_names, effect.name
        assert set(effect.parameters) <= config_names, effect.name


def test_every_effect_takes_parts_of_the_physical_model():
    parts = {f.name for f in fields(PhysicalModel)}
    for effect in effects():
        assert set(effect.parts) <= parts, effect.name
    assert {e.name: e.parts for e in effects()} == {
        'rain': ('atmosphere',), 'snow': ('atmosphere', 'optics'), 'dust': (),
        'fog': ('atmosphere', 'optics')}


def test_media_follow_the_registry_with_the_residual_fog_last():
    air = atmosphere(LidarConfig().physical_model, Weather(rain_mm_h=2.0))
    names = [m.name for m in air.media]
    assert names == [e.name for e in effects()]
    assert names[-1] == 'fog' and names[:2] == ['rain', 'snow']


def test_snow_and_fog_draw_from_their_own_streams():
    assert clutter_streams(lambda stream: stream) == {'snow': 'snow', 'fog': 'fog'}


def test_an_effect_registered_twice_is_refused():
    with pytest.raises(ValueError, match="'rain' is registered already"):
        register_effect('rain', lambda cfg, weather: Medium('rain'), (), ())


def test_a_registered_effect_enters_the_air_and_the_visibility_it_explains_leaves_the_fog(
        monkeypatch):
    # A grey test medium: alpha 1e-3 /m at every wavelength, all of it in the visibility.
    monkeypatch.setattr(weather_effects, 'EFFECTS', list(weather_effects.EFFECTS))
    register_effect('grey', lambda cfg, weather: Medium('grey', 1e-3, 1e-5,
                                                        alpha_550_per_m=1e-3), (), ())
    cfg = LidarConfig(wavelength_nm=550.0)      # Kim et al.'s scaling is 1 at 550 nm
    air = atmosphere(cfg.physical_model, Weather(visibility_m=1956.0))
    assert [m.name for m in air.media][-2:] == ['grey', 'fog']
    # 3.912 / 1956 m = 2e-3 /m in all, the grey medium explains 1e-3 /m: fog keeps the rest.
    # bound: a few float64 roundings of numbers near 1e-3 (rel 1e-12 is 4500 ulps)
    assert air.medium('fog').alpha_per_m == pytest.approx(KOSCHMIEDER / 1956.0 - 1e-3,
                                                          rel=1e-12)
    assert air.alpha == pytest.approx(2e-3, rel=1e-12)   # bound: float rounding of three sums
    # bound: as above
    assert math.isclose(air.beta, 1e-5 + air.medium('fog').beta_per_m_sr, rel_tol=1e-12)
