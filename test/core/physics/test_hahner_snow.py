"""
Hahner et al.'s (2022) snowfall simulation as benchmarks/hahner_snow.py implements its equations.

The comparison rows of the CADC snow table (benchmarks/snow_counts.py) rest on these.
"""

import importlib
import math
from pathlib import Path
import sys

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / 'benchmarks'))
hahner = importlib.import_module('hahner_snow')


def test_the_papers_rain_rate_of_1_mm_h_of_snow_is_17_9_mm_h():
    # r_s = 487 rho_s D_s v_s r_r^(2/3): 487 x 0.1 x 0.003 x 1 = 0.1461, r_r = (1 / 0.1461)^1.5
    # = 17.907 mm/h.
    # bound: the hand value's rounding, half a unit of its 5th significant digit
    assert hahner.rain_rate(1.0) == pytest.approx(17.907, abs=5e-4)


def test_discs_per_square_metre_of_a_line_follow_the_occupancy_and_the_mean_disc():
    # phi = 1 / (3.6e6 x 0.1 x 1) = 2.7778e-6; Lambda = 2.55 x 17.907^-0.48 = 0.63839 /mm;
    # E[D^2] = 2 / Lambda^2 = 4.9075 mm^2 (the 2 cm cap removes exp(-12.8)); a sphere cut at a
    # uniform height: pi E[D^2] / 6 = 2.5695e-6 m^2; 2.7778e-6 / 2.5695e-6 = 1.0811 per m^2.
    n, lam = hahner.discs_per_m2(1.0)
    # bound: the hand values' rounding (5 significant digits) and the trapezoid rule on 4001
    # points of the exponential (relative error ~ (h Lambda)^2 / 12 = 8e-7)
    assert lam == pytest.approx(0.63839, rel=1e-4)
    assert n == pytest.approx(1.0811, rel=5e-4)


def test_a_flake_covers_the_share_of_the_wedge_its_angle_overlaps():
    theta = 4e-3
    # centred, half-width theta / 4: half the wedge; wider than the wedge: all of it; centred on
    # the wedge's edge with half-width theta / 4: a quarter; outside: nothing.
    got = hahner.wedge_share(np.array([0.0, 0.0, theta / 2, 2 * theta]),
                             np.array([theta / 4, theta, theta / 4, theta / 4]), theta)
    # bound: float64 sums of a few terms of size theta, relative 1e-12
    np.testing.assert_allclose(got, [0.5, 1.0, 0.25, 0.0], atol=1e-12)
    assert math.isclose(float(hahner.wedge_share(0.0, 0.0, theta)), 0.0)
