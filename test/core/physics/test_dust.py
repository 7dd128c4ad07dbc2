"""Airborne dust (physics/dust.py): extinction, backscatter and its share of the visibility."""

import math

import pytest
from tolerances import F64_EPS, F64_LIBM_REL

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere

# libm's exp, then a few roundings of products and differences of numbers near 1e-3 (the
# fog's 2e-3 - 6e-4 loses under a bit to cancellation)
REL = F64_LIBM_REL + 16 * F64_EPS


def test_1000_ug_m3_of_dust_attenuate_0_6_per_km_and_backscatter_at_55_sr():
    dust = atmosphere(LidarConfig().physical_model, Weather(dust_ug_m3=1000.0)).medium('dust')
    # 0.6 m^2/g x 1000e-6 g/m^3 = 6e-4 /m; beta = 6e-4 / 55 sr = 1.0909e-5 /(m sr).
    assert dust.alpha_per_m == pytest.approx(6e-4, rel=REL)
    assert dust.beta_per_m_sr == pytest.approx(6e-4 / 55.0, rel=REL)
    assert not dust.granular and dust.fluctuating_share == 0.0


def test_a_target_at_100_m_behind_1000_ug_m3_of_dust_keeps_exp_minus_0_12_of_its_signal():
    air = atmosphere(LidarConfig().physical_model, Weather(dust_ug_m3=1000.0))
    # two-way exp(-2 x 6e-4 /m x 100 m) = exp(-0.12) = 0.88692
    assert float(air.two_way_transmission(100.0)) == pytest.approx(math.exp(-0.12), rel=REL)
    # bound: half a unit of the last printed digit
    assert float(air.two_way_transmission(100.0)) == pytest.approx(0.88692, abs=5e-6)


def test_dust_attenuates_alike_at_905_and_1550_nm():
    at = [atmosphere(LidarConfig(wavelength_nm=nm).physical_model,
                     Weather(dust_ug_m3=300.0)).medium('dust') for nm in (905.0, 1550.0)]
    assert at[0].alpha_per_m == at[1].alpha_per_m == pytest.approx(1.8e-4, rel=REL)


def test_the_visibility_the_dust_explains_leaves_the_fog():
    # 3.912 / 1956 m = 2e-3 /m in all, 1000 ug/m^3 of dust explain 6e-4 /m; at 550 nm Kim et
    # al.'s scaling is 1, so the fog keeps 1.4e-3 /m.
    air = atmosphere(LidarConfig(wavelength_nm=550.0).physical_model,
                     Weather(dust_ug_m3=1000.0, visibility_m=1956.0))
    assert air.medium('fog').alpha_per_m == pytest.approx(1.4e-3, rel=REL)
    assert air.alpha == pytest.approx(2e-3, rel=REL)


def test_no_dust_leaves_clear_air_clear():
    assert not atmosphere(LidarConfig().physical_model, Weather()).active
    assert atmosphere(LidarConfig().physical_model, Weather()).medium('dust').alpha_per_m == 0.0


@pytest.mark.parametrize('value', [-1.0, 2e5, 'thick'])
def test_weather_refuses_dust_outside_0_to_1e5_ug_m3_naming_the_field(value):
    with pytest.raises(ConfigError) as err:
        Weather(dust_ug_m3=value)
    assert err.value.name == 'dust_ug_m3' and '0 to 100000 ug/m^3' in str(err.value)


def test_weather_describes_its_dust():
    assert Weather(dust_ug_m3=1000.0).describe() == 'dust 1000 ug/m^3'
