"""Beam patterns: the 2D scanner's planar rays and the Livox Risley rosette, by hand values."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.beams.planar_and_rosette import (azimuth_elevation_rad,
                                                          planar_azimuths_rad, planar_ray_count,
                                                          planar_times_s, risley_directions,
                                                          rosette_cone_half_angle_rad,
                                                          rosette_line_elevations_deg,
                                                          rosette_times_s)
from ubot_lidar_sim.core.config import from_dict, LidarConfig
from ubot_lidar_sim.core.config.presets import load_preset

# Livox Avia: six lines stacked 1.36 deg apart (70.4 deg circle, 77.2 deg tall), 240,000
# points/s; prisms at 7294 and -4664 rpm (the Livox Mid-70 Risley pair of HELIOS++,
# data/scanners_tls.xml).
AVIA_LINES_DEG = (-3.4, -2.04, -0.68, 0.68, 2.04, 3.4)
PRISM_HZ = (7294.0 / 60.0, -4664.0 / 60.0)
# Livox counts FOV coverage on a grid of 5 mrad x 5 mrad cells (Livox-SDK issue #57, answer of
# 2020-06-02, citing "Livox point cloud characteristics").
CELL_RAD = 5e-3


def doc003_angles_deg(resolution_deg):
    """Count the 2D scanner's loop literally: for (int32 i = 0; i < 360; i += Resolution)."""
    return list(range(0, 360, resolution_deg))


@pytest.mark.parametrize('res, n, old_n', [(7, 52, 51), (100, 4, 4), (270, 2, 1)])
def test_full_circle_casts_document_003s_ray_set(res, n, old_n):
    az = np.degrees(planar_azimuths_rad(360.0, float(res)))
    assert planar_ray_count(360.0, float(res)) == n == len(az)
    # bound: float64 degrees(k x radians(res)): a few ulps of 360 (6e-14 each) << 1e-12
    np.testing.assert_allclose(az, doc003_angles_deg(res), atol=1e-12)
    # The old rule cast round(360 / res) rays evenly: 51 at 7.06 deg, 4 at 90 deg, 1.
    assert max(1, round(360.0 / res)) == old_n


def test_table_rows_by_hand():
    # bound: float64 degrees of k x radians(res), a few ulps; default rtol 1e-7 and approx's
    np.testing.assert_allclose(np.degrees(planar_azimuths_rad(360.0, 100.0)), [0, 100, 200, 300])
    # bound: rel 1e-6 absorb them (the steps are 7.0 to a few ulps of 357)
    np.testing.assert_allclose(np.degrees(planar_azimuths_rad(360.0, 270.0)), [0, 270])
    az = np.degrees(planar_azimuths_rad(360.0, 7.0))
    assert az[-1] == pytest.approx(357.0) and np.allclose(np.diff(az), 7.0)


def test_single_ray_looks_along_x():
    np.testing.assert_array_equal(planar_azimuths_rad(360.0, 360.0), [0.0])
    np.testing.assert_array_equal(planar_azimuths_rad(0.5, 1.0), [0.0])


def test_partial_fov_is_centred_and_one_resolution_apart():
    # 270.25 deg at 0.25 deg: ceil(1081) rays from -135 to +135 (a Hokuyo UST's 1081 steps).
    az = np.degrees(planar_azimuths_rad(270.25, 0.25))
    assert len(az) == 1081
    # bound: float64 k x radians(0.25) in degrees: a few ulps of 135 (3e-14) << 1e-9
    np.testing.assert_allclose(az[[0, 540, -1]], [-135.0, 0.0, 135.0], atol=1e-9)
    np.testing.assert_allclose(np.diff(az), 0.25, atol=1e-9)
    # 180 deg at 1 deg: ceil(180) = 180 rays, -89.5 .. 89.5 (a half-open window, docs/presets.md).
    az = np.degrees(planar_azimuths_rad(180.0, 1.0))
    # bound: float64 centred angles, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(az[[0, -1]], [-89.5, 89.5])


def test_ray_k_is_angle_min_plus_k_increments_bit_for_bit():
    az = planar_azimuths_rad(270.25, 0.25)
    k = np.arange(len(az))
    assert np.array_equal(az, az[0] + k * math.radians(0.25))


def test_decimal_integer_ratios_do_not_gain_a_ray():
    assert planar_ray_count(270.0, 0.1) == 2700   # 270 / 0.1 = 2700.0000000000005
    assert planar_ray_count(360.0, 0.33) == 1091  # 1090.9 -> 1091


def test_planar_rays_fire_one_time_increment_apart():
    t = planar_times_s(4, 100.0, 0.1)
    # bound: float64 k x dt, a few ulps; default rtol 1e-7 absorbs rounding order
    np.testing.assert_allclose(t, [0.0, 0.1 * 100 / 360, 0.2 * 100 / 360, 0.3 * 100 / 360])


def test_rosette_points_are_one_interval_apart_line_by_line():
    col, line = rosette_times_s(6, 4000, 10.0)
    dt = 1.0 / 240_000.0   # Avia, 240,000 points/s
    # bound: float64 k x dt against the same products, a few ulps (2e-16 rel) << 1e-12
    np.testing.assert_allclose(line, np.arange(6) * dt, rtol=1e-12)
    np.testing.assert_allclose(col[:3], [0.0, 6 * dt, 12 * dt], rtol=1e-12)
    t = (col[None, :] + line[:, None]).T.ravel()   # point order: column-major over lines
    # bound: differences of float64 sums ~0.1 s: ulp(0.1) / dt = 3e-12 rel << 1e-9
    np.testing.assert_allclose(np.diff(t), dt, rtol=1e-9)
    assert t[-1] < 0.1 and t[-1] == pytest.approx(0.1 - dt)  # bound: rel 1e-6 of 0.1 s


def test_cone_half_angles_from_the_datasheet_fovs():
    avia = rosette_cone_half_angle_rad(38.6, 38.6, AVIA_LINES_DEG)
    # bound: float64 trig of datasheet angles, exact to a few ulps; approx rel 1e-6
    assert math.degrees(avia) == pytest.approx(35.2)   # 70.4 deg circle
    mid360 = rosette_line_elevations_deg(4, 52.0, 7.0)
    # bound: float64 midpoints and trig of datasheet angles, exact to a few ulps; default rtol 1e-7
    np.testing.assert_allclose(mid360, 22.5)
    assert math.degrees(rosette_cone_half_angle_rad(52.0, 7.0, mid360)) == pytest.approx(29.5)


def test_both_prisms_aligned_deflect_by_the_full_cone_angle():
    theta = math.radians(35.2)
    d = risley_directions(np.zeros((1, 1)), theta, PRISM_HZ, [0.0])[0, 0]
    # bound: float64 rotations of unit vectors (cos, sin within 1 ulp): a few eps64 = 1e-15
    np.testing.assert_allclose(d, [math.cos(theta), math.sin(theta), 0.0], atol=1e-15)
    # Half a turn of prism 1 later relative to prism 2 they cancel: the beam is on the axis.
    t = 0.5 / (PRISM_HZ[0] - PRISM_HZ[1])
    d = risley_directions(np.full((1, 1), t), theta, PRISM_HZ, [math.radians(10.0)])[0, 0]
    # bound: float64 rotations of unit vectors, a few eps64 << 1e-12
    np.testing.assert_allclose(d, [math.cos(math.radians(10)), 0.0, math.sin(math.radians(10))],
                               atol=1e-12)


def test_every_beam_stays_inside_its_lines_cone():
    theta = math.radians(35.2)
    col, line = rosette_times_s(6, 4000, 10.0)
    d = risley_directions(col[None, :] + line[:, None], theta, PRISM_HZ,
                          np.radians(AVIA_LINES_DEG))
    # bound: float64 unit vectors, a few eps64 << 1e-12; the 1e-12 / 1e-9 slacks below: the same
    np.testing.assert_allclose(np.linalg.norm(d, axis=-1), 1.0, atol=1e-12)
    el = np.radians(AVIA_LINES_DEG)[:, None]
    axis_dot = d[..., 0] * np.cos(el) + d[..., 2] * np.sin(el)
    # bound: float64 dots and arcsin of unit vectors on the cone's edge, a few eps64 (arcsin
    assert np.all(axis_dot >= math.cos(theta) - 1e-12)
    # 70.4 deg wide: no beam leaves the x-z plane by more than 35.2 deg; 77.2 deg tall.
    # bound: conditioning at 35 deg: 1.2) = 1e-13 deg << 1e-9 deg
    assert np.degrees(np.arcsin(np.abs(d[..., 1]))).max() <= 35.2 + 1e-9
    elev = azimuth_elevation_rad(d)[1]
    # bound: as above
    assert np.degrees(elev).max() <= 38.6 + 1e-9 and np.degrees(elev).min() >= -38.6 - 1e-9


def _avia_dirs(seconds, t0=0.0):
    shots = int(round(240_000 * seconds / 6))
    col, line = rosette_times_s(6, shots, 1.0 / seconds)
    return risley_directions(t0 + col[None, :] + line[:, None], math.radians(35.2), PRISM_HZ,
                             np.radians(AVIA_LINES_DEG)).reshape(-1, 3)


def _coverage(dirs, inside, az_lim, el_lim):
    """Fraction (area-weighted) of the FOV's 5 mrad x 5 mrad az/el cells holding a point."""
    az, el = azimuth_elevation_rad(dirs)
    na = int(math.ceil((az_lim[1] - az_lim[0]) / CELL_RAD))
    ne = int(math.ceil((el_lim[1] - el_lim[0]) / CELL_RAD))
    hit = np.zeros((ne, na), dtype=bool)
    hit[np.clip(((el - el_lim[0]) / CELL_RAD).astype(int), 0, ne - 1),
        np.clip(((az - az_lim[0]) / CELL_RAD).astype(int), 0, na - 1)] = True
    ca = az_lim[0] + (np.arange(na) + 0.5) * CELL_RAD
    ce = el_lim[0] + (np.arange(ne) + 0.5) * CELL_RAD
    a, e = np.meshgrid(ca, ce)
    mask = inside(a, e)
    w = np.cos(e) * mask
    return float((hit * w).sum() / w.sum())


def _inside_avia(a, e):
    d = np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], axis=-1)
    theta = math.radians(35.2)
    out = np.zeros(a.shape, dtype=bool)
    for el in np.radians(AVIA_LINES_DEG):
        out |= d @ np.array([math.cos(el), 0.0, math.sin(el)]) >= math.cos(theta)
    return out


def test_avia_rosette_covers_about_a_third_in_0_1_s_and_nearly_all_in_1_s():
    # Livox: non-repetitive scanning covers close to 100 % of the FOV within about 1 s
    # (Livox-SDK issue #57, quoting livoxtech.com); 0.1 s holds 24,000 points for ~47,000 cells.
    lim_a, lim_e = (-0.62, 0.62), (-0.68, 0.68)
    c01 = _coverage(_avia_dirs(0.1), _inside_avia, lim_a, lim_e)
    c1 = _coverage(_avia_dirs(1.0), _inside_avia, lim_a, lim_e)
    assert 0.25 <= c01 <= 0.40
    assert c1 >= 0.95


def test_the_rosette_never_repeats_from_frame_to_frame():
    first = _avia_dirs(0.1)
    second = _avia_dirs(0.1, t0=0.1)
    gap = np.linalg.norm(first - second, axis=1)
    assert np.median(gap) > 0.05   # a spinning LiDAR would repeat: gap 0


def test_mid360_coverage_grows_tenfold_from_0_1_to_1_s():
    theta = math.radians(29.5)

    def dirs(seconds):
        shots = int(round(200_000 * seconds / 4))
        col, line = rosette_times_s(4, shots, 1.0 / seconds)
        return risley_directions(col[None, :] + line[:, None], theta, PRISM_HZ,
                                 np.full(4, math.radians(22.5)), spin_hz=10.0).reshape(-1, 3)

    def inside(a, e):
        return (e >= math.radians(-7.0)) & (e <= math.radians(52.0))

    lim_a, lim_e = (-math.pi, math.pi), (math.radians(-7.0), math.radians(52.0))
    c01 = _coverage(dirs(0.1), inside, lim_a, lim_e)
    c1 = _coverage(dirs(1.0), inside, lim_a, lim_e)
    az, el = azimuth_elevation_rad(dirs(0.1))
    # bound: float64 elevations, 1e-9 deg >> eps64 rounding
    assert np.degrees(el).min() >= -7.0 - 1e-9 and np.degrees(el).max() <= 52.0 + 1e-9
    assert np.ptp(np.degrees(az)) > 350.0   # one 0.1 s frame already sees all around
    assert c01 < 0.10 and c1 > 6 * c01


def test_avia_preset_frames_fill_the_fov_as_livox_states():
    # The preset, frame after frame (sweep k continues at k / rate_hz): one 0.1 s frame, then
    # the ten frames of 1 s, on Livox's 5 mrad cells.
    cfg = from_dict(LidarConfig, load_preset('livox_avia'))
    lim_a, lim_e = (-0.62, 0.62), (-0.68, 0.68)
    c01 = _coverage(build_beams(cfg, 0).dir_sensor, _inside_avia, lim_a, lim_e)
    c1 = _coverage(np.concatenate([build_beams(cfg, k).dir_sensor for k in range(10)]),
                   _inside_avia, lim_a, lim_e)
    assert 0.25 <= c01 <= 0.40 and c1 >= 0.95
