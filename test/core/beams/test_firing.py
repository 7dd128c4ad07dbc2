"""Scan pattern: ring/column geometry, column firing times, ray budget and sub-rays."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.beams.firing import (build_beams, column_azimuths_rad, column_times_s,
                                              ring_elevations_deg)
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ScanError
from ubot_lidar_sim.core.physics.footprint import (perpendicular_basis, sub_ray_directions,
                                                   sub_ray_pattern)


def test_sixteen_channels_span_minus_15_to_15_in_2_degree_steps():
    beams = build_beams(LidarConfig(channels=16, horizontal_samples=8))
    # bound: float64 degrees of a float64 radians table: a few ulps of 15 deg (2e-15) << 1e-12
    np.testing.assert_allclose(np.degrees(beams.ring_elevation_rad), np.arange(-15, 16, 2),
                               atol=1e-12)
    assert beams.n_beams == 128
    np.testing.assert_array_equal(beams.ring[:8], 0)
    np.testing.assert_array_equal(beams.column[:8], np.arange(8))
    np.testing.assert_array_equal(beams.ring[8:16], 1)


def test_beam_directions_are_unit_and_match_azimuth_and_elevation_by_hand():
    beams = build_beams(LidarConfig(channels=16, horizontal_samples=4))
    # bound: float64 trig of unit vectors, a few eps64 (2.2e-16) per component << 1e-12
    np.testing.assert_allclose(np.linalg.norm(beams.dir_sensor, axis=1), 1.0, atol=1e-12)
    # ring 15 (+15 deg), column 2 (azimuth 0 of -180, -90, 0, 90): straight ahead, tilted up.
    b = 15 * 4 + 2
    c, s = math.cos(math.radians(15)), math.sin(math.radians(15))
    # bound: same float64 cos/sin of the same angles, a few eps64 << 1e-12
    np.testing.assert_allclose(beams.dir_sensor[b], [c, 0.0, s], atol=1e-12)
    # ring 0 (-15 deg), column 3 (+90 deg): to the left, tilted down.
    np.testing.assert_allclose(beams.dir_sensor[3], [0.0, c, -s], atol=1e-12)


def test_full_circle_does_not_repeat_its_first_column():
    az = np.degrees(column_azimuths_rad(360, 360.0))
    # bound: float64 arange of 1-deg steps, few ulps of 180; default rtol 1e-7 absorbs them
    np.testing.assert_allclose(az[:3], [-180.0, -179.0, -178.0])
    np.testing.assert_allclose(az[-1], 179.0)
    assert np.unique(np.round(np.mod(az, 360.0), 9)).size == 360


def test_partial_fov_includes_both_ends_centred_on_x():
    # bound: float64 linspace vs exact decimals, a few ulps; default rtol 1e-7 absorbs rounding
    np.testing.assert_allclose(np.degrees(column_azimuths_rad(5, 90.0)),
                               [-45.0, -22.5, 0.0, 22.5, 45.0])
    np.testing.assert_allclose(column_azimuths_rad(1, 90.0), [0.0])


def test_single_channel_sits_at_the_vertical_midpoint():
    # bound: float64 midpoint of two decimals, exact or 1 ulp; default rtol 1e-7 absorbs it
    np.testing.assert_allclose(ring_elevations_deg(1, 0.0, 0.0), [0.0])
    np.testing.assert_allclose(ring_elevations_deg(1, 10.0, 30.0), [-10.0])


def test_elevation_table_overrides_the_uniform_spread():
    cfg = LidarConfig(channels=3, horizontal_samples=2, elevations_deg=(-30.0, -1.0, 2.0))
    # bound: float64 degrees(radians(x)) round trip, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(np.degrees(build_beams(cfg).ring_elevation_rad), [-30, -1, 2])


def test_clockwise_sweep_starts_behind_and_passes_left_front_right():
    az = np.radians([179.0, 90.0, 0.0, -90.0, -180.0])
    t = column_times_s(az, 0.1, 'cw', 180.0, 'start')
    # bound: float64 times <= 0.1 s (ulp 1.4e-17): 1e-15 s = 70 ulps of a few roundings
    np.testing.assert_allclose(t, [0.1 / 360.0, 0.025, 0.05, 0.075, 0.0], atol=1e-15)


def test_counter_clockwise_sweep_runs_the_other_way():
    az = np.radians([-179.0, -90.0, 0.0, 90.0, 180.0])
    t = column_times_s(az, 0.1, 'ccw', 180.0, 'start')
    # bound: float64 times <= 0.1 s (ulp 1.4e-17): 1e-15 s = 70 ulps of a few roundings
    np.testing.assert_allclose(t, [0.1 / 360.0, 0.025, 0.05, 0.075, 0.0], atol=1e-15)


def test_stamp_at_end_shifts_offsets_into_minus_period_to_zero():
    beams = build_beams(LidarConfig(horizontal_samples=360, stamp_at='end'))
    t = beams.column_time_s
    assert t.min() >= -0.1 and t.max() < 0.0
    # bound: float64 -0.1 s from one subtraction, 1 ulp; default rtol 1e-7 absorbs it
    np.testing.assert_allclose(t.min(), -0.1)
    start = build_beams(LidarConfig(horizontal_samples=360)).column_time_s
    assert start.min() == 0.0 and start.max() < 0.1
    # bound: float64 shift of 0.1 s, 1 ulp (1.4e-17) << 1e-15
    np.testing.assert_allclose(start - t, 0.1, atol=1e-15)


def test_seam_at_180_puts_the_first_and_last_columns_behind():
    beams = build_beams(LidarConfig(horizontal_samples=360))
    order = np.argsort(beams.column_time_s)
    az = np.degrees(beams.column_azimuth_rad[order])
    # bound: float64 degrees of column azimuths, few ulps of 180; default rtol 1e-7
    np.testing.assert_allclose([az[0], az[1], az[-1]], [-180.0, 179.0, -179.0])


def test_no_motion_distortion_gives_zero_column_times():
    beams = build_beams(LidarConfig(motion_distortion=False))
    np.testing.assert_array_equal(beams.column_time_s, 0.0)


def test_more_rays_than_the_budget_is_an_error_naming_both_numbers():
    with pytest.raises(ScanError, match=r'128 x 2048 = 262144.*65536'):
        LidarConfig(channels=128, horizontal_samples=2048)


def test_seven_sub_rays_are_a_weighted_hexagon_at_035_divergence():
    off, w = sub_ray_pattern(7, 3.0)
    # bound: float64 weights and radii of exact decimals, a few ulps; default rtol 1e-7 absorbs
    np.testing.assert_allclose(w, [0.25] + [0.125] * 6)
    np.testing.assert_allclose(w.sum(), 1.0)
    np.testing.assert_allclose(np.linalg.norm(off[1:], axis=1), 0.35 * 3e-3)
    # bound: exact zeros / ones (the centre ray); default rtol 1e-7 on float64
    np.testing.assert_allclose(off[0], [0.0, 0.0])
    off1, w1 = sub_ray_pattern(1, 3.0)
    # bound: exact zeros / ones (one sub-ray); default rtol 1e-7 on float64
    np.testing.assert_allclose(off1, [[0.0, 0.0]])
    np.testing.assert_allclose(w1, [1.0])


def test_sub_rays_tilt_by_their_offset_angle_in_the_perpendicular_plane():
    dirs = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
    off, _ = sub_ray_pattern(7, 10.0)
    out = sub_ray_directions(dirs, off).reshape(3, 7, 3)
    # bound: float64 rotations of unit vectors, a few eps64 << 1e-12
    np.testing.assert_allclose(np.linalg.norm(out, axis=2), 1.0, atol=1e-12)
    ang = np.arccos(np.clip(np.einsum('bj,bsj->bs', dirs, out), -1, 1))
    # bound: arccos(1 - k eps64) = sqrt(2 k eps64) = 2.1e-8 sqrt(k): 1e-7 covers k <= 22 roundings
    np.testing.assert_allclose(ang[:, 0], 0.0, atol=1e-7)
    # bound: arccos at 3.5 mrad, k eps64 / sin = 1e-13 rel << 1e-6
    np.testing.assert_allclose(ang[:, 1:], 0.35 * 10e-3, rtol=1e-6)
    # offset (a, 0) on the +x beam turns it towards +y (u = z x d).
    # bound: float64 rotation vs math.cos/sin of the same angle, a few eps64 << 1e-12
    np.testing.assert_allclose(out[0, 1], [math.cos(3.5e-3), math.sin(3.5e-3), 0.0], atol=1e-12)


def test_perpendicular_basis_is_orthonormal_even_straight_up():
    d = np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0]])
    u, v = perpendicular_basis(d)
    for a, b in ((u, v), (u, d), (v, d)):
        # bound: float64 dots of unit vectors, a few eps64 << 1e-12; norms: default rtol 1e-7
        np.testing.assert_allclose(np.sum(a * b, axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0)
