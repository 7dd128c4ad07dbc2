"""3D LiDAR orchestration: ranges, echoes through foliage, motion skew, seeds and layouts."""

from dataclasses import replace
import math

import numpy as np
import pytest
from tolerances import assert_wall_ranges

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics.return_selection import FLAG_FIRST, FLAG_LAST, FLAG_STRONGEST
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.world import World

WORLD = """frame: map
objects:
  - {name: ground, type: plane, size_m: [200, 200], material: grass}
  - {name: wall, type: box, size_m: [0.2, 40, 10], pose: {xyz: [10.1, 0, 5]}, material: concrete}
"""
FOLIAGE = """frame: map
objects:
  - {name: crown, type: sphere, radius_m: 1.0, pose: {xyz: [5, 0, 3]}, material: tree_foliage}
  - {name: wall, type: box, size_m: [0.2, 10, 6], pose: {xyz: [15.1, 0, 3]}, material: concrete}
"""
QUIET = {'noise_enabled': False, 'sub_rays': 1, 'min_range_m': 0.5, 'imperfections': False}


def _world(tmp_path_factory, text, materials):
    path = tmp_path_factory.mktemp('w') / 'world.yaml'
    path.write_text(text)
    return World.load(str(path), materials)


@pytest.fixture(scope='module')
def wall_world(tmp_path_factory, materials):
    return _world(tmp_path_factory, WORLD, materials)


@pytest.fixture(scope='module')
def foliage_world(tmp_path_factory, materials):
    return _world(tmp_path_factory, FOLIAGE, materials)


def _still(z=1.5):
    return BodyTwist(pose_matrix_deg([0, 0, z], [0, 0, 0]))


def test_wall_at_known_distance_without_noise_gives_that_distance(wall_world, materials):
    cfg = LidarConfig(channels=3, vertical_fov_up_deg=5, vertical_fov_down_deg=5,
                      horizontal_samples=9, horizontal_fov_deg=40.0, **QUIET)
    res = LidarSimulator(cfg, wall_world, materials).scan(_still(), 0.0)
    pts = res.points
    assert len(pts) == 27
    az = np.arctan2(pts['y'], pts['x'])
    el = np.radians([-5.0, 0.0, 5.0])[pts['ring']]
    assert_wall_ranges(pts, az, el)
    # bound: f32_hit_bound_m(10.6 m, cos 0.92, WALL_LEVER_M) = 3.6e-5 m, x <= range.
    # bound: pts['x'] atol 5e-5 >= 1.4 x the f32 hit bound (3.6e-5, tolerances.f32_hit_bound_m)
    np.testing.assert_allclose(pts['x'], 10.0, atol=5e-5)
    np.testing.assert_array_equal(pts['material'], 5)
    np.testing.assert_array_equal(pts['return_count'], 1)


def test_seven_sub_rays_on_a_wall_keep_the_centre_range(wall_world, materials):
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0, vertical_fov_down_deg=0,
                      horizontal_samples=1, horizontal_fov_deg=1.0, noise_enabled=False,
                      imperfections=False)
    res = LidarSimulator(cfg, wall_world, materials).scan(_still(), 0.0)
    # bound: f32_hit_bound_m(10 m, 1, WALL_LEVER_M 24 m) = 3.2e-5 m < 1e-4
    np.testing.assert_allclose(res.points['range'], [10.0], atol=1e-4)


def test_flat_ground_below_is_at_height_over_sine_of_depression(wall_world, materials):
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0, vertical_fov_down_deg=20,
                      horizontal_samples=1, horizontal_fov_deg=1.0, **QUIET)
    pose = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 180]))  # facing away from the wall
    res = LidarSimulator(cfg, wall_world, materials).scan(pose, 0.0)
    # bound: ground z = 0 of exact vertices: t errs by d in float32 (3 F32_EPS / 2 = 1.8e-7 rel)
    np.testing.assert_allclose(res.points['range'], [1.5 / math.sin(math.radians(10))],
                               rtol=1e-5)
    np.testing.assert_allclose(res.points['z'], [-1.5], atol=1e-5)


@pytest.mark.parametrize('mode, ranks, flags', [
    ('strongest', None, None),
    ('first', [4.0], [FLAG_FIRST]),
    ('last', [15.0], [FLAG_LAST]),
    ('dual_first_last', [4.0, 15.0], [FLAG_FIRST, FLAG_LAST]),
    ('dual_strongest_last', [4.0, 15.0], None),
    ('triple_first_strongest_last', [4.0, 15.0], None),
])
def test_foliage_before_a_wall_gives_two_echoes_flagged_per_return_mode(
        foliage_world, materials, mode, ranks, flags):
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0, vertical_fov_down_deg=0,
                      horizontal_samples=3, horizontal_fov_deg=2.0, return_mode=mode, **QUIET)
    res = LidarSimulator(cfg, foliage_world, materials).scan(_still(3.0), 0.0)
    centre = res.points[res.beam == 1]
    both = centre['return_flags']
    if ranks is None and mode == 'strongest':
        assert len(centre) == 1 and centre['return_flags'][0] & FLAG_STRONGEST
        return
    # bound: 1 mm, far below the 2 cm range noise and > 20x the f32 hit bound
    np.testing.assert_allclose(centre['range'], ranks, atol=1e-3)
    np.testing.assert_array_equal(centre['return_index'], np.arange(1, len(ranks) + 1))
    np.testing.assert_array_equal(centre['return_count'], len(ranks))
    if flags is not None:
        np.testing.assert_array_equal(both & (FLAG_FIRST | FLAG_LAST), flags)
    np.testing.assert_array_equal(centre['material'],
                                  np.where(np.asarray(ranks) < 10.0, 9, 5))
    # Exactly one of the two echoes carries the strongest bit.
    if len(ranks) == 2:
        assert np.count_nonzero(both & FLAG_STRONGEST) == 1


def test_constant_twist_skews_the_wall_as_the_column_times_predict(wall_world, materials):
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0, vertical_fov_down_deg=0,
                      horizontal_samples=360, **QUIET)
    moving = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 0]), [10.0, 0, 0, 0, 0, 0])
    res = LidarSimulator(cfg, wall_world, materials).scan(moving, 0.0)
    wall = res.points[res.points['material'] == 5]
    assert len(wall) > 40
    # Clockwise from behind: the wall (ahead) is seen half a sweep in, around t = 0.05 s.
    # bound: float32 x at 10 m: f32 hit bound 3.2e-5 m + motion at float32 time (7.5e-8 m) < 1e-4
    np.testing.assert_allclose(wall['x'], 10.0 - 10.0 * wall['time'], atol=1e-4)
    assert wall['time'].min() > 0.03 and wall['time'].max() < 0.07
    # Columns to the left (positive y) fire before the front in a clockwise sweep.
    assert np.all(np.diff(wall['time'][np.argsort(-wall['y'])]) > 0)


def test_without_motion_distortion_the_moving_wall_is_not_skewed(wall_world, materials):
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0, vertical_fov_down_deg=0,
                      horizontal_samples=360, motion_distortion=False, **QUIET)
    moving = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 0]), [10.0, 0, 0, 0, 0, 0])
    res = LidarSimulator(cfg, wall_world, materials).scan(moving, 0.05)
    wall = res.points[res.points['material'] == 5]
    # bound: float32 x at 10 m: f32 hit bound 3.2e-5 m < 1e-4
    np.testing.assert_allclose(wall['x'], 10.0 - 0.5, atol=1e-4)
    np.testing.assert_array_equal(wall['time'], 0.0)


def test_without_motion_distortion_the_pose_is_looked_up_once_for_every_column(
        wall_world, materials):
    cfg = LidarConfig(channels=2, horizontal_samples=90, motion_distortion=False, **QUIET)
    moving = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 20]), [3.0, 0, 0, 0, 0, 0.5])
    asked = []

    def once(times):
        asked.append(np.asarray(times).shape)
        return moving(times)

    def per_time(times):       # a pose function that cannot batch: one time at a time
        return np.stack([moving([t])[0] for t in times])

    sim = LidarSimulator(cfg, wall_world, materials)
    res = sim.scan(once, 0.25)
    assert asked == [(1,)]
    assert res.points.tobytes() == sim.scan(per_time, 0.25).points.tobytes()
    moved = LidarSimulator(replace(cfg, motion_distortion=True), wall_world, materials)
    asked.clear()
    moved.scan(once, 0.25)
    assert asked == [(91,)]                  # the stamp and each of the 90 columns


def _noisy(world, materials, seed, index=0):
    cfg = LidarConfig(channels=4, horizontal_samples=90, range_noise_std_m=0.02, seed=seed)
    weather = Weather(rain_mm_h=10.0, visibility_m=1000.0)
    return LidarSimulator(cfg, world, materials).scan(_still(), 0.0, weather, index).points


def test_same_seed_gives_identical_points_and_another_seed_differs(wall_world, materials):
    a = _noisy(wall_world, materials, 7)
    b = _noisy(wall_world, materials, 7)
    assert a.tobytes() == b.tobytes()
    assert a.tobytes() != _noisy(wall_world, materials, 8).tobytes()
    assert a.tobytes() != _noisy(wall_world, materials, 7, index=1).tobytes()


def test_constant_twist_follows_the_circle_of_its_exp_map():
    traj = BodyTwist(np.eye(4), [1.0, 0, 0, 0, 0, 1.0])
    poses = traj([0.0, math.pi / 2, math.pi])
    # bound: float64 pose integration of exact inputs, a few eps64 x 3 m << 1e-12
    np.testing.assert_allclose(poses[1][:3, 3], [1.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(poses[2][:3, 3], [0.0, 2.0, 0.0], atol=1e-12)
    # bound: float64 rotations (sin, cos of pi / 2 within an ulp), a few eps64 << 1e-12
    np.testing.assert_allclose(poses[1][:3, :3], pose_matrix_deg([0, 0, 0], [0, 0, 90])[:3, :3],
                               atol=1e-12)
    straight = BodyTwist(pose_matrix_deg([1, 2, 3], [0, 0, 90]), [2.0, 0, 0, 0, 0, 0])
    # bound: float64 pose integration of exact inputs, a few eps64 x 3 m << 1e-12
    np.testing.assert_allclose(straight([0.5])[0][:3, 3], [1.0, 3.0, 3.0], atol=1e-12)
