"""
Issue 42: fog and haze as one medium, continuous in the visibility (fog_microphysics.py).

The clutter share of a preset has no step above 3x between neighbouring visibilities of the
issue's grid where both shares exceed 0.1 %, and none at >= 1 km (round 3's target, which
makes the step to 1 km one from a few per cent to 0: fog is the droplets below 1 km).
"""

import importlib
import math
from pathlib import Path
import sys

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import fog_microphysics as fm
from ubot_lidar_sim.core.physics.weather import Weather

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / 'benchmarks'))
fog_continuity = importlib.import_module('fog_continuity')
wp = importlib.import_module('weather_particles')

CFG = LidarConfig()
GRID_M = (20.0, 30.0, 40.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 400.0, 500.0, 700.0,
          1000.0)


def test_droplet_share_falls_smoothly_to_zero_at_the_fog_limit():
    # d = 1 - (V / 1 km)^2 by hand: 20 m 0.9996, 500 m 0.75, 900 m 0.19, >= 1 km 0.
    # bound: float64 of a two-term formula, a few ulps of 1
    assert fm.droplet_extinction_share(CFG.atmosphere, 20.0) == pytest.approx(0.9996, abs=1e-12)
    assert fm.droplet_extinction_share(CFG.atmosphere, 500.0) == pytest.approx(0.75, abs=1e-12)
    assert fm.droplet_extinction_share(CFG.atmosphere, 900.0) == pytest.approx(0.19, abs=1e-12)
    assert fm.droplet_extinction_share(CFG.atmosphere, 1000.0) == 0.0
    assert fm.droplet_extinction_share(CFG.atmosphere, math.inf) == 0.0
    grid = np.linspace(1.0, 999.0, 500)
    d = np.array([fm.droplet_extinction_share(CFG.atmosphere, v) for v in grid])
    assert np.all(np.diff(d) < 0.0) and np.max(-np.diff(d)) < 0.005


def test_fluctuation_widens_as_the_fog_thins():
    # k = 4 x 12 m / V by hand: 12 m 4, 120 m 0.4, 600 m 0.08; off with shape 0 or clear air.
    # bound: float64 of a product and a quotient, a few ulps
    assert fm.fluctuation_shape(CFG.atmosphere, 12.0) == pytest.approx(4.0, rel=1e-12)
    assert fm.fluctuation_shape(CFG.atmosphere, 120.0) == pytest.approx(0.4, rel=1e-12)
    assert fm.fluctuation_shape(CFG.atmosphere, 600.0) == pytest.approx(0.08, rel=1e-12)
    assert fm.fluctuation_shape(LidarConfig(fog_fluctuation_shape=0.0), 50.0) == 0.0
    assert fm.fluctuation_shape(CFG.atmosphere, math.inf) == 0.0


def test_droplet_backscatter_share_by_hand():
    # 500 m: d = 0.75, f = (0.75 / 18.8) / (0.75 / 18.8 + 0.25 / 60) = 0.905433.
    # bound: the hand value's rounding, half a unit of its 6th decimal
    assert fm.droplet_backscatter_share(CFG.atmosphere, 500.0) == pytest.approx(0.905433, abs=5e-7)
    assert fm.droplet_backscatter_share(CFG.atmosphere, 1500.0) == 0.0


@pytest.fixture(scope='module')
def flat(materials, flat_world):
    return materials, flat_world


@pytest.mark.parametrize('preset', fog_continuity.PRESETS)
def test_fog_clutter_has_no_step_above_3x_on_the_visibility_grid(preset, flat):
    sim = wp._lidar(preset, *flat)
    share = [wp._clutter(sim, Weather(visibility_m=v), 1)[1] for v in GRID_M]
    assert share[-1] == 0.0, share                   # round 3: none at 1 km
    assert share[0] > 0.5, share                     # dense fog: most beams
    assert fog_continuity.largest_step(share) <= 3.0, share
    # Monotone up to the seeded noise of ~20,000+ beams.
    # bound: a dip of 0.2 % is > 3 se of a share <= 0.5 over >= 20,000 beams
    assert np.all(np.diff(share) < 0.002), share
