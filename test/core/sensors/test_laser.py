"""2D laser scanner: LaserScan length rule, angles, timing and REP 117 infinities."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LaserScanConfig
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

WORLD = """frame: map
objects:
  - {name: ground, type: plane, size_m: [200, 200], material: asphalt}
  - {name: wall, type: box, size_m: [0.2, 4, 3], pose: {xyz: [5.1, 0, 1.5]}, material: concrete}
  - {name: post, type: box, size_m: [0.1, 0.1, 3], pose: {xyz: [0, 0.35, 1.5]},
     material: metal_bin}
"""


@pytest.fixture(scope='module')
def setup(tmp_path_factory):
    path = tmp_path_factory.mktemp('laser') / 'world.yaml'
    path.write_text(WORLD)
    materials = MaterialTable.load()
    return World.load(str(path), materials), materials


def _pose(yaw=0.0):
    return BodyTwist(pose_matrix_deg([0, 0, 1.0], [0, 0, yaw]))


@pytest.mark.parametrize('fov, res, n', [
    (360.0, 1.0, 360), (360.0, 0.25, 1440), (180.0, 1.0, 180), (270.0, 0.5, 540),
    (90.0, 0.7, 129), (0.5, 1.0, 1)])
@pytest.mark.parametrize('model', ['geometric', 'physical'])
def test_ranges_length_follows_the_laserscan_rule(setup, fov, res, n, model):
    # ceil(fov / res) rays (docs/presets.md); the geometric model has no intensities.
    world, materials = setup
    scan = LaserScanner(LaserScanConfig(fov_deg=fov, resolution_deg=res, model=model), world,
                        materials).scan(_pose(), 0.0)
    assert len(scan.ranges) == n and len(scan.intensities) == (n if model == 'physical' else 0)
    if n > 1:
        assert round((scan.angle_max - scan.angle_min) / scan.angle_increment) + 1 == n
    assert scan.ranges.dtype == np.float32 and scan.intensities.dtype == np.float32


def test_partial_fov_is_centred_on_x_with_resolution_steps(setup):
    # 360 rays 0.5 deg apart, symmetric about +x: -89.75 .. 89.75 deg.
    world, materials = setup
    scan = LaserScanner(LaserScanConfig(fov_deg=180.0, resolution_deg=0.5), world,
                        materials).scan(_pose(), 0.0)
    # bound: float64 angles and times of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose([scan.angle_min, scan.angle_max, scan.angle_increment],
                               np.radians([-89.75, 89.75, 0.5]))
    np.testing.assert_allclose(scan.time_increment, (1 / 30.0) * 0.5 / 360.0)
    np.testing.assert_allclose(scan.scan_time, 1 / 30.0)  # bound: as above


def test_full_circle_starts_ahead_and_does_not_repeat_the_endpoint(setup):
    world, materials = setup
    scan = LaserScanner(LaserScanConfig(resolution_deg=1.0), world, materials).scan(_pose(), 0.0)
    assert scan.angle_min == 0.0   # rays from 0 deg: 0, 1, ... 359
    # bound: float64 angles and times of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(scan.angle_max, 2.0 * math.pi - math.radians(1.0))
    np.testing.assert_allclose(scan.time_increment, scan.scan_time / 360.0)


def test_wall_ahead_reads_its_distance_and_open_sky_reads_plus_inf(setup):
    world, materials = setup
    cfg = LaserScanConfig(resolution_deg=1.0, noise_enabled=False, model='physical',
                          imperfections=False)
    scan = LaserScanner(cfg, world, materials).scan(_pose(), 0.0)
    ahead = np.arange(-5, 6) % 360  # angle_min = 0 deg: index k is k deg
    # bound: 1e-5 rel = 50 um at 5 m, > f32_hit_bound_m(5 m, cos 0.996, lever 10 m) = 15 um
    np.testing.assert_allclose(scan.ranges[ahead],
                               5.0 / np.cos(np.radians(np.arange(-5, 6))), rtol=1e-5)
    assert scan.intensities[0] == 35.0  # concrete 0.35 at normal incidence
    assert scan.ranges[180] == np.inf and scan.intensities[180] == 0.0  # behind: nothing


def test_echo_nearer_than_range_min_reads_minus_inf(setup):
    world, materials = setup
    cfg = LaserScanConfig(resolution_deg=1.0, min_range_m=0.5, noise_enabled=False)
    scan = LaserScanner(cfg, world, materials).scan(_pose(), 0.0)
    left = 90  # +90 deg: the post at 0.3 m
    assert scan.ranges[left] == -np.inf
    cfg_near = LaserScanConfig(resolution_deg=1.0, min_range_m=0.1, noise_enabled=False)
    near = LaserScanner(cfg_near, world, materials).scan(_pose(), 0.0)
    # bound: 0.1 mm, > f32_hit_bound_m of a 0.3 m hit (lever < 10 m): 1e-5 m
    np.testing.assert_allclose(near.ranges[left], 0.3, atol=1e-4)


def test_wall_beyond_range_max_reads_plus_inf(setup):
    world, materials = setup
    cfg = LaserScanConfig(resolution_deg=1.0, max_range_m=4.0, noise_enabled=False)
    scan = LaserScanner(cfg, world, materials).scan(_pose(), 0.0)
    assert scan.ranges[0] == np.inf


def test_each_ray_is_traced_at_its_own_time_when_moving(setup):
    world, materials = setup
    cfg = LaserScanConfig(resolution_deg=1.0, noise_enabled=False, rate_hz=1.0)
    moving = BodyTwist(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]), [1.0, 0, 0, 0, 0, 0])
    scan = LaserScanner(cfg, world, materials).scan(moving, 0.0)
    k = np.r_[356:360, 0:5]   # -4 .. 4 deg: the last rays of the sweep and the first ones
    t = k * scan.time_increment
    angle = scan.angle_min + k * scan.angle_increment
    # bound: 1e-5 rel = 50 um at 5 m, > f32_hit_bound_m(5 m, cos 0.99, lever 10 m) = 15 um
    np.testing.assert_allclose(scan.ranges[k], (5.0 - 1.0 * t) / np.cos(angle), rtol=1e-5)
