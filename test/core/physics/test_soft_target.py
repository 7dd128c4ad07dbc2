"""Pulse-integrated soft return of fog and haze (soft_target.py): hand-computed values."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics import soft_target as st


def test_pulse_shape_integrates_to_the_pulse_length():
    # Midpoint samples of sin^2 over one period sum to half their count: sum g h = L.
    g = st.pulse_shape(0.75)
    assert g.size == 2 * st.STEPS_PER_PULSE
    # bound: float64 sum of a few hundred terms, n eps64
    assert g.sum() * 0.75 / st.STEPS_PER_PULSE == pytest.approx(0.75, rel=1e-12)


def test_soft_pulse_length_is_pulse_length_else_echo_separation():
    cfg = LidarConfig(pulse_length_m=0.9)
    assert st.soft_pulse_length_m(cfg.optics, cfg.echoes) == 0.9
    cfg = LidarConfig(min_separation_m=0.5)
    assert st.soft_pulse_length_m(cfg.optics, cfg.echoes) == 0.5


def test_far_homogeneous_volume_equals_hard_target_of_pi_beta_l():
    # Without overlap and extinction, far away: S = counts_per_reflectance(R) pi beta L
    # (Hahner et al.), up to the 1/r^2 change across the pulse (~2 L / R).
    cfg = LidarConfig(overlap_range_m=0.0, min_separation_m=0.75)
    grid, prof = st.soft_profile(cfg.physical_model, 1e-3, 0.0, 300.0)
    r = 240.0
    hand = radiometry.counts_per_reflectance(cfg.radiometry, r) * math.pi * 1e-3 * 0.75
    # bound: linear interpolation of the profile on its grid (0.75 m pulse, 2 steps): its
    # relative curvature error over a step, 2 x 2 x 0.75 m / r
    assert np.interp(r, grid, prof) == pytest.approx(hand, rel=2 * 2 * 0.75 / r)


def test_profile_is_the_discrete_pulse_integral():
    # One grid point by hand: S(R_j) = pi beta h sum_m g_m G((j - m - 0.5) h).
    cfg = LidarConfig(overlap_range_m=8.0, min_separation_m=0.75)
    beta, alpha = 4e-3, 0.08
    grid, prof = st.soft_profile(cfg.physical_model, beta, alpha, 10.0)
    h = 0.75 / st.STEPS_PER_PULSE
    j = 40
    m = np.arange(2 * st.STEPS_PER_PULSE)
    r = (j - m - 0.5) * h
    g = np.sin(math.pi * (m + 0.5) / (2 * st.STEPS_PER_PULSE)) ** 2
    gain = radiometry.counts_per_reflectance(cfg.radiometry, r) * np.exp(-2 * alpha * r)
    # bound: float64 k x h (approx rel 1e-6); the same float64 sum both sides (1e-12 >> n eps64)
    assert grid[j - 1] == pytest.approx(j * h)
    assert prof[j - 1] == pytest.approx(math.pi * beta * h * np.sum(g * gain), rel=1e-12)


def test_volume_starts_at_the_sensor_so_the_profile_rises_over_the_first_two_pulse_lengths():
    cfg = LidarConfig(overlap_range_m=8.0, min_separation_m=0.75)
    grid, prof = st.soft_profile(cfg.physical_model, 4e-3, 0.08, 10.0)
    peak = grid[np.argmax(prof)]
    assert 0.75 < peak < 2.0
    assert np.all(np.diff(prof[grid <= 0.75]) > 0)


def test_peak_is_taken_between_blanking_and_the_nearest_solid_hit():
    cfg = LidarConfig(overlap_range_m=8.0, min_separation_m=0.75, min_range_m=0.1)
    grid, prof = st.soft_profile(cfg.physical_model, 4e-3, 0.08, 10.0)
    free_r, free_s = st.beam_peaks(grid, prof, [np.inf], 0.1)
    # A wall at 0.5 m: the peak is the profile at the last grid point before it.
    wall_r, wall_s = st.beam_peaks(grid, prof, [0.5], 0.1)
    last = np.flatnonzero(grid <= 0.5)[-1]
    assert wall_r[0] == grid[last] and wall_s[0] == prof[last]
    assert free_s[0] == prof.max() and free_r[0] == grid[np.argmax(prof)]
    # Blanked beyond the wall: no soft return at all.
    none_r, none_s = st.beam_peaks(grid, prof, [0.5], 0.8)
    assert none_s[0] == 0.0 and none_r[0] == 0.0
    # Blanking past the free peak moves the peak to the first unblanked grid point.
    late_r, late_s = st.beam_peaks(grid, prof, [np.inf], 3.0)
    first = np.flatnonzero(grid >= 3.0)[0]
    assert late_r[0] == grid[first] and late_s[0] == prof[first]


def test_hopeless_peaks_are_dropped_and_rings_scale_with_r10_squared():
    cfg = LidarConfig(overlap_range_m=8.0, channels=2, range_at_10pct_m=60.0,
                      ring_range_at_10pct_m=(60.0, 30.0))
    beam, r, s = st.soft_returns(cfg.physical_model, cfg.sensor, 4e-3, 0.08, [np.inf, np.inf],
                                 [0, 1], 10.0)
    assert beam.tolist() == [0, 1]
    # bound: float64 ratio of the same formula, exact to ulps; approx rel 1e-6
    assert s[1] == pytest.approx(s[0] / 4.0)
    assert r[0] == r[1]
    # Haze (beta 2.3e-5): a few counts, never detectable.
    beam, _, _ = st.soft_returns(cfg.physical_model, cfg.sensor, 2.3e-5, 1.4e-3, [np.inf], [0],
                                 10.0)
    assert beam.size == 0
    spec = cfg.radiometry
    assert st.hopeless(spec, 1.0) and not st.hopeless(spec, cfg.detection_threshold_counts)


def test_weakest_detectable_signal_is_the_edge_of_hopeless():
    cfg = LidarConfig()
    p = st.weakest_detectable_counts(cfg.radiometry)
    # T = 85.96, ambient 20: sqrt(x) = (-5 + sqrt(25 + 4 x 105.96)) / 2 = 8.093, P = 45.50
    # bound: 4-digit hand value
    assert p == pytest.approx(45.50, abs=0.01)
    assert not st.hopeless(cfg.radiometry, p * 1.001) and st.hopeless(cfg.radiometry, p * 0.999)
