"""laser_scan models: geometric (a line trace) against an analytic trace, physical."""

import math

import numpy as np
import pytest
from tolerances import f32_hit_bound_m, f32_round_bound_m, f64_sqrt_root_bound_m

from ubot_lidar_sim.core.config import from_dict, LaserScanConfig
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

H = 1.0                       # scanner height, m
EAST_X, WALL_HALF = 5.0, 15.0  # inner face of the east wall, its half length
ROT_CENTRE, ROT_DEG = (-7.3, 0.0), 17.0
BALL, BALL_R = (0.4, 6.2, 1.0), 1.3
FAR_X = -60.0                  # a dark wall 60 m behind (south-west quadrant is open)
# Farthest wall vertex from the scanner (|centre| + half diagonal): the lever arm of a hit.
LEVER_M = math.hypot(abs(ROT_CENTRE[0]), 0.5) + math.hypot(0.1, WALL_HALF, 1.5)


@pytest.fixture(scope='module')
def scene(materials):
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'east', 'type': 'box', 'size_m': [0.2, 2 * WALL_HALF, 3.0],
         'pose': {'xyz': [EAST_X + 0.1, 0.0, 1.5]}, 'material': 'concrete'},
        {'name': 'slanted', 'type': 'box', 'size_m': [0.2, 2 * WALL_HALF, 3.0],
         'pose': {'xyz': [*ROT_CENTRE, 1.5], 'rpy_deg': [0, 0, ROT_DEG]}, 'material': 'concrete'},
        {'name': 'ball', 'type': 'sphere', 'radius_m': BALL_R, 'pose': {'xyz': list(BALL)},
         'material': 'metal_bin'},
    ]}, materials=materials)
    return world, materials


def _pose():
    return BodyTwist(pose_matrix_deg([0.0, 0.0, H], [0.0, 0.0, 0.0]))


def analytic_ranges(angles, with_cos=False):
    """
    First hit of each horizontal ray from (0, 0, H) at the given angles, float64 (inf: none).

    Returns (range, sphere range) and with_cos the cosine of incidence on the flat faces.
    """
    d = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    with np.errstate(divide='ignore', invalid='ignore'):
        t_e = np.where(d[:, 0] > 0, EAST_X / d[:, 0], np.inf)
        t_e = np.where(np.abs(t_e * d[:, 1]) <= WALL_HALF, t_e, np.inf)
        n = np.array([math.cos(math.radians(ROT_DEG)), math.sin(math.radians(ROT_DEG))])
        face = np.asarray(ROT_CENTRE) + 0.1 * n          # the face towards the origin
        t_r = (face @ n) / (d @ n)
        along = (t_r[:, None] * d - np.asarray(ROT_CENTRE)) @ np.array([-n[1], n[0]])
        t_r = np.where((t_r > 0) & (np.abs(along) <= WALL_HALF), t_r, np.inf)
    c = np.array([BALL[0], BALL[1], BALL[2] - H])
    d3 = np.column_stack([d, np.zeros(len(d))])
    b = d3 @ c
    disc = b * b - (c @ c - BALL_R ** 2)
    t_s = np.where(disc >= 0, b - np.sqrt(np.maximum(disc, 0.0)), np.inf)
    t_s = np.where(t_s > 0, t_s, np.inf)
    first = np.minimum(np.minimum(t_e, t_r), t_s)
    if not with_cos:
        return first, t_s
    cos_inc = np.where(first == t_e, d[:, 0], np.where(first == t_r, d @ n, 1.0))
    return first, t_s, cos_inc


def _scan(cfg, scene, pose=None, weather=None, scan_index=0):
    world, materials = scene
    return LaserScanner(cfg, world, materials).scan(pose or _pose(), 0.0, weather, scan_index)


def _angles(scan):
    """Ray angles as a LaserScan consumer computes them, float64."""
    return scan.angle_min + scan.angle_increment * np.arange(len(scan.ranges))


def test_geometric_ranges_equal_the_analytic_line_trace(scene):
    scan = _scan(LaserScanConfig(resolution_deg=0.1, max_range_m=100.0), scene)
    want, on_ball, cos_inc = analytic_ranges(_angles(scan), with_cos=True)
    assert len(scan.ranges) == 3600 and scan.intensities.size == 0
    np.testing.assert_array_equal(np.isinf(scan.ranges), np.isinf(want))   # same misses
    hit = np.isfinite(want)                       # misses: inf on both sides, no difference
    err = np.abs(scan.ranges[hit].astype(np.float64) - want[hit])
    ball = (want == on_ball)[hit]
    assert ball.sum() > 100 and (~ball).sum() > 2000
    # bound: sphere hits are float64 roots (f64_sqrt_root_bound_m of the centre's distance)
    # rounded once to float32.
    c = math.hypot(BALL[0], BALL[1], BALL[2] - H)
    assert np.all(err[ball] <= f32_round_bound_m(want[hit][ball]) + f64_sqrt_root_bound_m(c))
    # bound: flat faces are float32 ray/triangle hits (open3d's Embree, any ISA), within
    # f32_hit_bound_m of their range and incidence (~10 um at 5 m, ~0.1 mm grazing at 16 m).
    flat = ~ball
    bound = f32_hit_bound_m(want[hit][flat], cos_inc[hit][flat], LEVER_M)
    assert np.all(err[flat] <= bound + f32_round_bound_m(want[hit][flat]))
    assert np.all(scan.hit == np.isfinite(want))


def test_geometric_mode_is_deterministic_and_ignores_weather_and_seed(scene):
    cfg = LaserScanConfig(resolution_deg=1.0)
    clear = _scan(cfg, scene)
    storm = _scan(LaserScanConfig(resolution_deg=1.0, seed=7), scene,
                  weather=Weather(rain_mm_h=50.0, visibility_m=50.0), scan_index=3)
    np.testing.assert_array_equal(clear.ranges, storm.ranges)


def test_geometric_mode_stops_at_the_first_surface_even_foliage(scene):
    # A crown before the east wall: the line trace stops at its entry, the radiometric
    # model sees partly through foliage.
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'east', 'type': 'box', 'size_m': [0.2, 30, 3], 'pose': {'xyz': [5.1, 0, 1.5]},
         'material': 'concrete'},
        {'name': 'crown', 'type': 'sphere', 'radius_m': 1.0, 'pose': {'xyz': [2.5, 0.0, 1.0]},
         'material': 'tree_foliage'}]}, materials=scene[1])
    scan = LaserScanner(LaserScanConfig(resolution_deg=1.0), world, scene[1]).scan(_pose(), 0.0)
    assert scan.ranges[0] == np.float32(1.5)


def test_geometric_mode_has_no_detection_statistics(scene, tmp_path):
    # A 10 % wall 90 m away: the radiometric defaults (10 % detected at 18 m, p = 0.9) lose it
    # (signal (18 / 90)^2 = 0.04 of the spec one), the line trace reads it inside max_range_m.
    table = tmp_path / 'ten.yaml'
    table.write_text('other: {reflectivity: 0.1, specular: 0.0, reflectivity_sd: 0.0}\n')
    materials = MaterialTable.load(str(table))
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'far', 'type': 'box', 'size_m': [0.2, 60, 6], 'pose': {'xyz': [90.1, 0, 1.5]},
         'material': 'other'}]}, materials=materials)
    geo = LaserScanner(LaserScanConfig(fov_deg=20.0, resolution_deg=1.0), world,
                       materials).scan(_pose(), 0.0)
    phys = LaserScanner(LaserScanConfig(fov_deg=20.0, resolution_deg=1.0, model='physical',
                                        weather=False, overlap_range_m=0.0), world,
                        materials).scan(_pose(), 0.0)
    # bound: face x = 90 of one float32 x, origin and vertices exact: Ng and v0 - o exact, t errs
    # by d in float32, two products and a division, 4 F32_EPS / 2 = 2.4e-7 rel < 1e-6
    np.testing.assert_allclose(geo.ranges, 90.0 / np.cos(_angles(geo)), rtol=1e-6)
    assert np.count_nonzero(np.isfinite(phys.ranges)) <= 4


@pytest.mark.parametrize('res', [7.0, 100.0, 270.0])
def test_the_scan_casts_document_003s_rays(scene, res):
    scan = _scan(LaserScanConfig(resolution_deg=res), scene)
    n = {7.0: 52, 100.0: 4, 270.0: 2}[res]
    assert len(scan.ranges) == n and scan.angle_min == 0.0
    # bound: float64 degrees of k x radians(res): a few ulps of 360 (6e-14) << 1e-9
    np.testing.assert_allclose(np.degrees(_angles(scan)), np.arange(0, 360, res), atol=1e-9)
    assert round((scan.angle_max - scan.angle_min) / scan.angle_increment) + 1 == n
    want = analytic_ranges(_angles(scan))[0]
    # bound: f32_hit_bound_m(range, cos, LEVER_M) / range + F32_EPS / 2 at these angles is at most
    # 7.1e-6 (slanted faces; the sphere's float64 roots far less): rtol 1e-5
    np.testing.assert_allclose(scan.ranges, want, rtol=1e-5)


@pytest.mark.parametrize('model', ['geometric', 'physical'])
def test_a_single_ray_reports_the_angle_it_traces(scene, model):
    # Resolution 360: one ray. The message used to say -180 deg while the ray looked along +x.
    cfg = LaserScanConfig(resolution_deg=360.0, model=model, noise_enabled=False)
    scan = _scan(cfg, scene)
    assert len(scan.ranges) == 1 and scan.angle_min == scan.angle_max == 0.0
    # bound: 1 cm, a pose check (which wall is ahead), >> the f32 hit bound (~10 um at 5 m)
    assert abs(scan.ranges[0] - EAST_X) < 1e-2    # the wall along +x (angle 0)
    turned = _scan(cfg, scene, BodyTwist(pose_matrix_deg([0.0, 0.0, H], [0.0, 0.0, 180.0])))
    assert abs(turned.ranges[0] - analytic_ranges(np.array([math.pi]))[0][0]) < 1e-2


def test_physical_model_with_a_2d_preset_detects_a_10pct_target_at_its_datasheet_range(
        scene, tmp_path):
    # SICK TiM571: 8 m at 10 % remission. A 10 % Lambertian wall at 8 m in front: detected in
    # about detection_at_spec (0.9) of the rays; at 4 m in all of them. Full overlap: the
    # near-range form factor is the weather issue's (its own test).
    table = tmp_path / 'ten.yaml'
    table.write_text('other: {reflectivity: 0.1, specular: 0.0, reflectivity_sd: 0.0}\n')
    materials = MaterialTable.load(str(table))
    params = {**load_preset('sick_tim571', 'laser_scan'), 'fov_deg': 10.0, 'weather': False,
              'overlap_range_m': 0.0}
    cfg = from_dict(LaserScanConfig, params)
    assert (cfg.model, cfg.n_rays, cfg.range_at_10pct_m) == ('physical', 30, 8.0)
    found = {}
    for dist in (4.0, 8.0):
        world = World.from_dict({'frame': 'map', 'objects': [
            {'name': 'w', 'type': 'box', 'size_m': [0.2, 20, 6],
             'pose': {'xyz': [dist + 0.1, 0, 1]}, 'material': 'other'}]}, materials=materials)
        scanner = LaserScanner(cfg, world, materials)
        hits = [np.isfinite(scanner.scan(_pose(), 0.0, None, k).ranges) for k in range(40)]
        found[dist] = float(np.mean(hits))
    assert found[4.0] == 1.0
    assert 0.8 <= found[8.0] <= 0.97
