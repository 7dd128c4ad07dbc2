"""The sensor's own imperfections (imperfections.py): calibration residuals and range walk."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig, replace
from ubot_lidar_sim.core.physics import imperfections
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator, scan_rng, STREAM_CALIBRATION
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

WALL = """frame: map
objects:
  - {name: wall, type: box, size_m: [0.2, 40, 40], pose: {xyz: [10.1, 0, 0]}, material: other}
"""
#: One ring at elevation 0, 21 pencil beams over +/-1 deg, no noise: the wall at 10 m.
BASE = {'channels': 1, 'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
        'horizontal_samples': 21, 'horizontal_fov_deg': 2.0, 'sub_rays': 1,
        'noise_enabled': False, 'motion_distortion': False, 'return_mode': 'strongest',
        'calibration_elevation_std_deg': 0.0, 'calibration_azimuth_std_deg': 0.0,
        'range_walk_m': 0.0}


@pytest.fixture(scope='module')
def wall(tmp_path_factory):
    tmp = tmp_path_factory.mktemp('imp')
    (tmp / 'w.yaml').write_text(WALL)
    (tmp / 'm.yaml').write_text('other: {reflectivity: 0.5}\n')
    materials = MaterialTable.load(str(tmp / 'm.yaml'))
    return World.load(str(tmp / 'w.yaml'), materials), materials


def _scan(wall, scan_index=0, **over):
    world, materials = wall
    sim = LidarSimulator(LidarConfig(**dict(BASE, **over)), world, materials)
    return sim.scan(BodyTwist(np.eye(4)), 0.0, None, scan_index=scan_index)


def _draws(serial, n=1):
    return scan_rng(serial, 'lidar_3d', 0, STREAM_CALIBRATION).standard_normal((3, n))


def test_on_by_default_in_the_physical_model_and_off_in_the_geometric_one():
    # The laws take the physical model's parameters, None with model geometric (cfg.physical).
    assert imperfections.active(LidarConfig().physical)
    assert not imperfections.active(LidarConfig(model='geometric',
                                                calibration_range_std_m=0.1).physical)
    assert not imperfections.active(LidarConfig(calibration_elevation_std_deg=0.0,
                                                calibration_azimuth_std_deg=0.0).physical)
    assert not imperfections.physical(LidarConfig(model='geometric').physical)
    on, off = LidarConfig(), LidarConfig(imperfections=False)
    assert imperfections.range_walk_m(on.sensor_imperfections, on.radiometry, [100.0])[0] > 0.0
    assert imperfections.range_walk_m(off.sensor_imperfections, off.radiometry, [100.0])[0] == 0.0


def test_range_residual_moves_every_point_of_its_laser_by_the_drawn_offset(wall):
    # d_range = 0.05 m x the instance's third normal; the beams at azimuth a see the wall at
    # 10 / cos(a): each point's range is that plus d_range.
    plain = _scan(wall)
    off = _scan(wall, calibration_range_std_m=0.05, calibration_serial=7)
    d_range = 0.05 * _draws(7)[2, 0]
    assert abs(d_range) > 1e-3
    # bound: float32 ranges of ~10 m, 2 ulps (1.9e-6 m)
    np.testing.assert_allclose(off.points['range'] - plain.points['range'], d_range, atol=4e-6)


def test_elevation_residual_fires_off_axis_but_reports_along_the_nominal_direction(wall):
    # d_el = 0.5 deg x the first normal: the ray meets the wall at 10 / (cos(a) cos(d_el)); the
    # point keeps z = 0 (the nominal elevation) at that range.
    off = _scan(wall, calibration_elevation_std_deg=0.5, calibration_serial=3)
    plain = _scan(wall)
    d_el = math.radians(0.5) * _draws(3)[0, 0]
    assert abs(d_el) > 1e-3
    # bound: float32 ranges of ~10 m, 2 ulps, and the float32 hit (f32 rounding of ~1e-6 m)
    np.testing.assert_allclose(off.points['range'], plain.points['range'] / math.cos(d_el),
                               atol=1e-5)
    assert np.all(off.points['z'] == 0.0)


def test_residuals_are_fixed_per_serial_for_every_sweep_and_seed(wall):
    over = {'calibration_range_std_m': 0.05, 'calibration_elevation_std_deg': 0.3}
    a = _scan(wall, 0, calibration_serial=11, seed=1, **over).points['range']
    b = _scan(wall, 5, calibration_serial=11, seed=9, **over).points['range']
    c = _scan(wall, 0, calibration_serial=12, seed=1, **over).points['range']
    assert np.array_equal(a, b)
    # bound: another serial's range residuals differ by ~calibration_range_std_m (5 cm) per
    # ring, 500 times the 0.1 mm tolerance
    assert not np.allclose(a, c, atol=1e-4)


def test_residual_sizes_follow_their_standard_deviations():
    cfg = replace(LidarConfig(), calibration_elevation_std_deg=0.1,
                  calibration_azimuth_std_deg=0.2, calibration_range_std_m=0.02)
    d_el, d_az, d_r = imperfections.residuals(cfg.sensor_imperfections, 20000,
                                              np.random.default_rng(0))
    # bound: se of a std over 20,000 normals is 0.5 %: 3 % is 6 se
    assert np.std(d_el) == pytest.approx(math.radians(0.1), rel=0.03)
    assert np.std(d_az) == pytest.approx(math.radians(0.2), rel=0.03)
    assert np.std(d_r) == pytest.approx(0.02, rel=0.03)


def test_range_walk_of_hand_signals():
    # T = 100 - 1.2816 sqrt(120) = 85.961 counts; walk = 11 mm (1 - sqrt(ln(S / T) / ln 1280)):
    # at T 11 mm, at 1280 T and above 0, at S = e T (ln = 1) 11 mm (1 - sqrt(1 / 7.1546)).
    cfg = LidarConfig()
    t = cfg.detection_threshold_counts
    walk = imperfections.range_walk_m(cfg.sensor_imperfections, cfg.radiometry,
                                      [t, math.e * t, 1280.0 * t, 1e9])
    expected = [0.011, 0.011 * (1.0 - math.sqrt(1.0 / math.log(1280.0))), 0.0, 0.0]
    # bound: float64 logs and square roots, a few ulps of 1e-2 m
    np.testing.assert_allclose(walk, expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize('rho', [0.05, 0.5])
def test_a_dark_wall_reads_longer_than_a_bright_one_by_the_walk_of_its_signal(tmp_path, rho):
    # One pencil beam at a wall 10 m ahead, noise off: S = S10 (rho / 0.1) (R10 / 10)^2
    # (1 - exp(-(10 / Rov)^2)) = 100 x (rho / 0.1) x 36 x 0.7658 (Rov 8.3 m): 1378 counts at 5 %
    # (walk 4.15 mm), 13784 at 50 % (walk 1.73 mm); the range is 10 m plus the walk.
    (tmp_path / 'w.yaml').write_text(WALL)
    (tmp_path / 'm.yaml').write_text(
        f'other: {{reflectivity: {rho}, incidence_exponent: 1.0, specular: 0.0}}\n')
    mats = MaterialTable.load(str(tmp_path / 'm.yaml'))
    wall_world = World.load(str(tmp_path / 'w.yaml'), mats)
    cfg = LidarConfig(**dict(BASE, horizontal_samples=1, horizontal_fov_deg=0.01,
                             range_walk_m=0.011))
    pts = LidarSimulator(cfg, wall_world, mats).scan(BodyTwist(np.eye(4)), 0.0, None).points
    assert pts.size == 1
    # The beam's azimuth a (within 0.01 deg of 0) meets the wall at R = 10 / cos(a), incidence a.
    c = math.cos(math.atan2(float(pts['y'][0]), float(pts['x'][0])))
    r = 10.0 / c
    s = 100.0 * (rho * c / 0.1) * (60.0 / r) ** 2 * (1.0 - math.exp(-(r / 8.3) ** 2))
    t = cfg.detection_threshold_counts
    walk = 0.011 * (1.0 - math.sqrt(math.log(s / t) / math.log(1280.0)))
    # bound: float32 range of 10 m (ulp 9.5e-7 m) and the float32 hit (~1e-6 m)
    assert float(pts['range'][0]) == pytest.approx(r + walk, abs=4e-6)
    # bound: the hand values above rounded to 10 um
    assert walk == pytest.approx({0.05: 0.00415, 0.5: 0.00173}[rho], abs=1e-5)


def test_an_echo_walked_past_max_range_is_not_returned(tmp_path):
    # The 5 % wall 10 m ahead walks 4.15 mm (test above). The receiver gates the walked time:
    # with max_range_m 2 mm beyond the wall the echo is dropped, with 10 mm beyond it is kept.
    (tmp_path / 'w.yaml').write_text(WALL)
    (tmp_path / 'm.yaml').write_text(
        'other: {reflectivity: 0.05, incidence_exponent: 1.0, specular: 0.0}\n')
    mats = MaterialTable.load(str(tmp_path / 'm.yaml'))
    wall_world = World.load(str(tmp_path / 'w.yaml'), mats)
    counts = []
    for beyond_m in (0.002, 0.010):
        cfg = LidarConfig(**dict(BASE, horizontal_samples=1, horizontal_fov_deg=0.01,
                                 range_walk_m=0.011, max_range_m=10.0 + beyond_m))
        pts = LidarSimulator(cfg, wall_world, mats).scan(BodyTwist(np.eye(4)), 0.0, None).points
        assert np.all(pts['range'] <= np.float32(cfg.max_range_m))
        counts.append(pts.size)
    assert counts == [0, 1]


def test_describe_states_the_imperfections_or_that_they_are_off():
    from ubot_lidar_sim.core.sensors.describe import describe_models
    text = describe_models(LidarConfig())['imperfections']
    assert 'N(0, 0.005 deg) elevation' in text and 'range walk 0.011 m' in text
    off = describe_models(LidarConfig(imperfections=False))['imperfections']
    assert off.startswith('off')
    assert 'imperfections' not in describe_models(LidarConfig(model='geometric'))
