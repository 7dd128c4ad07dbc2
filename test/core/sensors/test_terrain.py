"""Terrain sensor (docs/physics.md): distances from the centres, misses, disabled rays, pitch."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import TerrainConfig
from ubot_lidar_sim.core.poses import pose_matrix_deg
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.core.world.world import World

TIRES = (1.0, 0.6, 0.0, 1.0, -0.6, 0.0, -1.0, 0.6, 0.0, -1.0, -0.6, 0.0)
# Flat-face bound (FLAT below): the ground z = 0 and the wall face x = 4 have exact float32
# vertices, so Ng and v0 - o are exact and a hit errs only by rounding d to float32 and one
# division: 3 F32_EPS / 2 of a <= 6 m range, 1e-6 m. 1e-5 m is 10x that (0.1 mm at worst, far
# below the 1 mm a range is reported to); 1e-6 on x, y of a vertical ray: the poses' float64.


@pytest.fixture(scope='module')
def world(tmp_path_factory):
    path = tmp_path_factory.mktemp('terrain') / 'world.yaml'
    path.write_text(
        'frame: map\n'
        'objects:\n'
        '  - {name: ground, type: plane, size_m: [100, 100], material: asphalt}\n'
        '  - {name: wall, type: box, size_m: [0.2, 10, 3], pose: {xyz: [4.1, 0, 1.5]},'
        ' material: concrete}\n')
    return World.load(str(path))


def _cfg(**kw):
    base = {'tire_positions_m': TIRES, 'tire_radii_m': (0.3,) * 4,
            'vehicle_center_to_front_m': 1.5}
    base.update(kw)
    return TerrainConfig(**base)


def test_tires_over_flat_ground_report_height_minus_radius_and_hit_at_z0(world):
    h = 0.5
    res = TerrainSensor(_cfg(), world).sample(pose_matrix_deg([-20, 20, h], [0, 0, 0]))
    np.testing.assert_array_equal(res.hit_flg[1:], 1)
    # bound: FLAT (module note): 1e-5 m >= 10x a hit's error here
    np.testing.assert_allclose(res.tire_hit_dist, h - 0.3, atol=1e-5)
    np.testing.assert_allclose(res.hit_loc[1:, 2], 0.0, atol=1e-5)
    # bound: x, y of vertical rays: float64 pose sums (1e-6 >> eps64 x 20 m); start_loc: rtol 1e-7
    np.testing.assert_allclose(res.hit_loc[1:, :2], np.reshape(TIRES, (4, 3))[:, :2] + [-20, 20],
                               atol=1e-6)
    np.testing.assert_allclose(res.start_loc[1:, 2], h)


def test_wall_ahead_gives_distance_minus_vehicle_centre_to_front(world):
    res = TerrainSensor(_cfg(), world).sample(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]))
    assert res.hit_flg[0] == 1
    # bound: FLAT (module note): the wall face x = 4 of exact float32 vertices, 1e-5 m
    np.testing.assert_allclose(res.hit_loc[0], [4.0, 0.0, 1.0], atol=1e-5)
    np.testing.assert_allclose(res.veh_hit_dist, 4.0 - 1.5, atol=1e-5)


def test_offset_moves_the_start_back_but_distance_is_from_the_centre(world):
    cfg = _cfg(trace_offsets_m=(1.0, 0.2, 0.2, 0.2, 0.2))
    res = TerrainSensor(cfg, world).sample(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]))
    # bound: float64 pose offsets, default rtol 1e-7; distances FLAT (module note), 1e-5 m
    np.testing.assert_allclose(res.start_loc[0], [-1.0, 0.0, 1.0])
    np.testing.assert_allclose(res.veh_hit_dist, 2.5, atol=1e-5)
    np.testing.assert_allclose(res.start_loc[1, 2], 1.2)
    np.testing.assert_allclose(res.tire_hit_dist, 1.0 - 0.3, atol=1e-5)  # bound: FLAT, 1e-5 m


def test_short_trace_misses_with_end_location_and_infinite_distance(world):
    cfg = _cfg(trace_lengths_m=(2.0, 0.3, 5.0, 5.0, 5.0))
    res = TerrainSensor(cfg, world).sample(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]))
    assert res.hit_flg[0] == 0 and res.hit_flg[1] == 0 and res.hit_flg[2] == 1
    # bound: a miss's end = start + length x d in float64; default rtol 1e-7 absorbs rounding
    np.testing.assert_allclose(res.hit_loc[0], [2.0, 0.0, 1.0])
    np.testing.assert_allclose(res.hit_loc[1], [1.0, 0.6, 0.7])
    assert res.veh_hit_dist == math.inf and res.tire_hit_dist[0] == math.inf


def test_disabled_ray_reports_nan_and_enabled_zero(world):
    cfg = _cfg(trace_enabled=(False, True, True, True, False))
    res = TerrainSensor(cfg, world).sample(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]))
    np.testing.assert_array_equal(res.enabled, [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(res.hit_flg, [0, 1, 1, 1, 0])
    assert np.isnan(res.veh_hit_dist) and np.isnan(res.tire_hit_dist[3])
    assert np.all(np.isnan(res.hit_loc[[0, 4]])) and np.all(np.isnan(res.start_loc[[0, 4]]))


def test_external_inputs_replace_the_constants(world):
    res = TerrainSensor(_cfg(), world).sample(pose_matrix_deg([0, 0, 1.0], [0, 0, 0]),
                                              vehicle_center_to_front_m=0.5,
                                              tire_radii_m=[0.1, 0.2, 0.3, 0.4])
    # bound: FLAT (module note), 1e-5 m
    np.testing.assert_allclose(res.veh_hit_dist, 3.5, atol=1e-5)
    np.testing.assert_allclose(res.tire_hit_dist, [0.9, 0.8, 0.7, 0.6], atol=1e-5)


def test_pitched_vehicle_tilts_both_rays(world):
    # Nose down 10 deg (positive pitch about y tilts +x towards -z).
    p = math.radians(10.0)
    h = 1.0
    cfg = _cfg(tire_positions_m=(0.0,) * 12, trace_lengths_m=(10.0, 5.0, 5.0, 5.0, 5.0))
    res = TerrainSensor(cfg, world).sample(
        pose_matrix_deg([-20, 0, h], [0, 10, 0]))
    # Body ray from z = 1 falling at 10 deg reaches the ground after h / sin(p).
    # bound: pitched rays: d rounded to float32 errs 3 F32_EPS / 2 x 5.8 m = 1e-6 m << 1e-4
    np.testing.assert_allclose(res.hit_loc[0], [-20 + h / math.tan(p), 0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(res.veh_hit_dist, h / math.sin(p) - 1.5, atol=1e-4)
    # Tire rays along -z of the base run 10 deg off vertical, towards -x: h / cos(p).
    # bound: FLAT (module note), 1e-5 m; 3 F32_EPS / 2 x 1 m = 1.8e-7 m
    np.testing.assert_allclose(res.tire_hit_dist, h / math.cos(p) - 0.3, atol=1e-5)
    np.testing.assert_allclose(res.hit_loc[1], [-20 - h * math.tan(p), 0.0, 0.0], atol=1e-5)


@pytest.mark.parametrize('fallback', [False, True])
def test_unknown_tire_centre_is_disabled_or_falls_back_to_its_position(world, fallback):
    # Base 1 m above the ground; FR's centre unknown (NaN), FL's given 0.2 m lower.
    centres = np.reshape(TIRES, (4, 3)).copy()
    centres[0, 2] = -0.2
    centres[1] = np.nan
    res = TerrainSensor(_cfg(tire_frames_fallback=fallback), world).sample(
        pose_matrix_deg([0, 0, 1.0], [0, 0, 0]), tire_centres_base=centres)
    if fallback:   # FR at tire_positions_m (1, -0.6, 0): 1 m - 0.3 m radius
        np.testing.assert_array_equal(res.enabled, [1, 1, 1, 1, 1])
        np.testing.assert_array_equal(res.hit_flg, [1, 1, 1, 1, 1])
        # bound: FLAT (module note), 1e-5 m; start_loc float64 pose, default rtol 1e-7
        np.testing.assert_allclose(res.tire_hit_dist, [0.5, 0.7, 0.7, 0.7], atol=1e-5)
        np.testing.assert_allclose(res.start_loc[2], [1.0, -0.6, 1.0])
    else:
        np.testing.assert_array_equal(res.enabled, [1, 1, 0, 1, 1])
        np.testing.assert_array_equal(res.hit_flg, [1, 1, 0, 1, 1])
        # bound: FLAT (module note), 1e-5 m
        np.testing.assert_allclose(res.tire_hit_dist[[0, 2, 3]], [0.5, 0.7, 0.7], atol=1e-5)
        assert np.isnan(res.tire_hit_dist[1])
        assert np.all(np.isnan(res.hit_loc[2])) and np.all(np.isnan(res.start_loc[2]))
        assert np.all(np.isnan(res.end_loc[2]))
    # bound: float64 pose arithmetic, default rtol 1e-7 absorbs rounding
    np.testing.assert_allclose(res.start_loc[1], [1.0, 0.6, 0.8])
