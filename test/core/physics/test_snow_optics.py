"""
Issue 42: snow flakes with optics that do not depend on the snowfall rate (snow_optics.py).

Each flake's optical area is Mitchell's (1996) aggregate law of its maximum diameter; the
ITU-R law gives only the medium's mean extinction.
"""

import importlib
from pathlib import Path
import sys

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import particles
from ubot_lidar_sim.core.physics import snow_optics
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / 'benchmarks'))
snow_counts = importlib.import_module('snow_counts')
wp = importlib.import_module('weather_particles')


def test_aggregate_area_law_by_hand():
    # A = 0.2285 D^1.88 cm^2 (D cm): D = 1 mm = 0.1 cm: 0.2285 x 0.1^1.88 = 3.0122e-3 cm^2
    # = 0.30122 mm^2 (area ratio 0.3835 of its disc); D = 5 mm: 0.30122 x 5^1.88 = 6.2080 mm^2.
    # bound: the hand values' rounding, half a unit of their 5th significant digit
    assert snow_optics.aggregate_area_m2(1.0) * 1e6 == pytest.approx(0.30122, abs=5e-6)
    assert snow_optics.aggregate_area_m2(5.0) * 1e6 == pytest.approx(6.2080, abs=5e-5)
    d = np.geomspace(1e-4, 30.0, 200)
    # bound: pow and its inverse in float64, a few ulps relative
    np.testing.assert_allclose(snow_optics.aggregate_diameter_mm(
        snow_optics.aggregate_area_m2(d)), d, rtol=1e-12)


def test_a_falling_flake_seen_from_the_side_shows_0_6_of_its_area_from_above():
    # Hogan et al. (2012): horizontally aligned oblate spheroids of axial ratio 0.6. D = 1 mm:
    # 0.6 x 0.30122 = 0.180732 mm^2; D = 5 mm: 0.6 x 6.2080 = 3.72480 mm^2.
    # bound: the hand values' rounding, half a unit of their 5th significant digit
    assert snow_optics.side_area_m2(1.0) * 1e6 == pytest.approx(0.18073, abs=5e-6)
    assert snow_optics.side_area_m2(5.0) * 1e6 == pytest.approx(3.7248, abs=5e-5)
    d = np.geomspace(1e-4, 30.0, 200)
    # bound: pow and its inverse in float64, a few ulps relative
    np.testing.assert_allclose(snow_optics.side_diameter_mm(snow_optics.side_area_m2(d)), d,
                               rtol=1e-12)


@pytest.mark.parametrize('optics, same', [('area_law', True), ('itu_matched', False)])
def test_the_detectable_flake_size_depends_on_the_rate_only_through_the_itu_matched_ratio(
        optics, same):
    # At the same two-way extinction and lidar ratio the smallest detectable flake is one
    # geometric size under the area law, whatever the rate; round 3's ratio made it depend on
    # the rate (its area ratio rises with the rate).
    cfg = LidarConfig(min_range_m=0.9, snow_flake_optics=optics)
    cuts = []
    for rate in (0.5, 5.0):
        medium = atmosphere(cfg.physical_model, Weather(snowfall_rate_mm_h=rate)).medium('snow')
        cut = particles.detectable_cut_mm(cfg.physical_model, cfg.sensor, medium, 0.0,
                                          cfg.range_at_10pct_m)
        cuts.append(float(particles.geometric_diameter_mm('dry', cut)))
    # bound: the same float64 computation on both sides but for the rate
    assert (abs(cuts[0] / cuts[1] - 1.0) < 1e-12) == same, cuts


@pytest.fixture(scope='module')
def cadc_dry(materials, flat_world):
    sim = wp._lidar('velodyne_vlp32c', materials, flat_world, snow_type='dry')
    return [snow_counts.cadc_counts(sim, r, 1) for r in snow_counts.RATES]


def test_dry_snow_counts_rise_with_the_rate_without_a_step_above_3x(cadc_dry):
    n = np.array(cadc_dry)
    assert np.all(np.diff(n) > 0), n
    assert np.all(n[1:] / n[:-1] <= 3.0), n
    # CADC's 26-1,443 at 0.5 and 1 mm/h (round 3); 2 mm/h (1,356 in 3 sweeps) is inside it but
    # near its edge, not asserted; 2.5 mm/h is above it (docs/physics-weather.md)
    lo, hi = 26, 1443
    rates = list(snow_counts.RATES)
    assert lo <= n[rates.index(0.5)] <= hi and lo <= n[rates.index(1.0)] <= hi, n


@pytest.mark.xfail(strict=True, reason='blocked (issue 42): 2.5 mm/h dry snow gives ~1,670 '
                   "points in CADC's box (2 mm/h 1,356 is inside 26-1,443) at the VLP-32C's "
                   'estimated near field (Rov 11.8 m); the published Velodyne bounds bracket it '
                   '(docs/physics-weather.md, "Why 2.5 mm/h is above CADC" and "The HDL-64E '
                   'focal distance against the form factor")')
def test_dry_snow_counts_stay_in_cadcs_range_up_to_2_5_mm_h(cadc_dry):
    n = np.array(cadc_dry)
    rates = np.array(snow_counts.RATES)
    band = n[(rates >= 0.5) & (rates <= 2.5)]
    assert np.all((band >= 26) & (band <= 1443)), n
