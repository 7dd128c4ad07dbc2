"""Ray casting: ranges, multi-hit foliage traces, ignored objects, smoke and ground texture."""

import numpy as np
import pytest
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.class_ids import MATERIAL_CLASS
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.labels import SMOKE_CLASS
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.raycast.ground_texture import ground_albedo
from ubot_lidar_sim.core.world.materials import MaterialTable, PROPERTIES
from ubot_lidar_sim.core.world.world import World

PLAIN = MaterialTable.from_values({p: np.zeros(17) for p in PROPERTIES})
M = {name: i for i, name in enumerate(MATERIAL_NAMES)}
CONCRETE = MATERIAL_CLASS['concrete']   # the class of a concrete object (48 sidewalk)
WALL = {'name': 'wall', 'type': 'box', 'size_m': [0.2, 10, 3], 'pose': {'xyz': [20, 0, 1.5]},
        'material': 'concrete'}
# The wall's far corner seen from any origin here (|y| <= 2, 0 <= z <= 3): the hits' lever arm.
LEVER_M = float(np.hypot(np.hypot(20.1, 7.0), 3.0))
# bound: f32_hit_bound_m of the flat faces (19.9 m wall, 3.8 m hedge) at normal incidence: 39 um
FACE_ATOL_M = float(f32_hit_bound_m(19.9, 1.0, LEVER_M))


def _world(*objects, smoke=()):
    return World.from_dict({'objects': list(objects), 'smoke': list(smoke)}, materials=PLAIN)


def _fan(n, half_angle_deg, origin=(0.0, 0.0, 1.5), elevation_deg=0.0):
    """N rays from one origin spread in azimuth about +x."""
    az = np.radians(np.linspace(-half_angle_deg, half_angle_deg, n))
    el = np.radians(elevation_deg)
    d = np.stack([np.cos(az) * np.cos(el), np.sin(az) * np.cos(el), np.full(n, np.sin(el))], 1)
    return np.tile(origin, (n, 1)).astype(float), d, az


def test_box_wall_is_hit_at_its_distance():
    o, d, az = _fan(21, 10.0)
    hits = _world(WALL).trace(o, d, 100.0)
    np.testing.assert_array_equal(hits.ray, np.arange(21))
    # bound: 1 mm, 25x f32_hit_bound_m(20.3 m, cos 0.98, lever 21.5 m) = 40 um
    np.testing.assert_allclose(hits.range_m, 19.9 / np.cos(az), atol=1e-3)
    np.testing.assert_allclose(hits.point[:, 0], 19.9, atol=1e-3)
    # bound: vertices share one float32 x, so Ng is exact: normal and cos_inc (stored float32)
    # are within a few F32_EPS (1.2e-7) << 1e-6
    np.testing.assert_allclose(hits.normal, np.tile([-1.0, 0.0, 0.0], (21, 1)), atol=1e-6)
    np.testing.assert_allclose(hits.cos_inc, np.cos(az), atol=1e-6)
    assert np.all(hits.material == M['concrete']) and np.all(hits.class_id == CONCRETE)


@pytest.mark.parametrize('radius_m', [0.3, 1.0, 3.0])
def test_sphere_hit_lies_on_the_analytic_surface(radius_m):
    center = np.array([10.0, 0.4, 1.7])
    rng = np.random.default_rng(1)
    target = center + rng.uniform(-0.95, 0.95, (400, 3)) * radius_m / np.sqrt(3)
    o = np.zeros((400, 3))
    d = target / np.linalg.norm(target, axis=1, keepdims=True)
    sphere = {'name': 's', 'type': 'sphere', 'radius_m': radius_m,
              'pose': {'xyz': center.tolist()}, 'material': 'metal_bin'}
    hits = _world(sphere).trace(o, d, 50.0)
    b = d @ center
    expected = b - np.sqrt(b * b - (center @ center - radius_m ** 2))
    np.testing.assert_array_equal(hits.ray, np.arange(400))
    # bound: 1 cm, far below the 2 cm range noise; the quadric root is float64 (nm at 10 m)
    np.testing.assert_allclose(hits.range_m, expected, atol=1e-2)
    np.testing.assert_allclose(np.linalg.norm(hits.point - center, axis=1), radius_m, atol=1e-2)


def test_cylinder_side_hit_lies_on_the_analytic_surface():
    o, d, az = _fan(41, 8.0, origin=(0.0, 0.0, 1.0))
    cyl = {'name': 'c', 'type': 'cylinder', 'radius_m': 3.0, 'height_m': 4.0,
           'pose': {'xyz': [12.0, 0.0, 2.0]}, 'material': 'metal_bin'}
    hits = _world(cyl).trace(o, d, 50.0)
    b = 12.0 * np.cos(az)
    # bound: 1 cm, as above; float64 quadric root
    np.testing.assert_allclose(hits.range_m, b - np.sqrt(b * b - (144.0 - 9.0)), atol=1e-2)


def test_tilted_cylinder_side_and_cap_hits():
    # axis along y (roll 90 deg): rays along +x at height z meet the side at 10 - sqrt(1 - z^2)
    wheel = {'name': 'w', 'type': 'cylinder', 'radius_m': 1.0, 'height_m': 2.0,
             'pose': {'xyz': [10.0, 0.0, 0.0], 'rpy_deg': [90, 0, 0]}, 'material': 'vehicle'}
    z = np.linspace(-0.9, 0.9, 7)
    o = np.c_[np.zeros(7), np.zeros(7), z]
    hits = _world(wheel).trace(o, np.tile([1.0, 0.0, 0.0], (7, 1)), 50.0)
    # bound: float64 quadric root, f64_sqrt_root_bound_m(10 m) = 3e-7 m < 1e-6; normal float64
    np.testing.assert_allclose(hits.range_m, 10.0 - np.sqrt(1.0 - z * z), atol=1e-6)
    np.testing.assert_allclose(hits.normal[:, 1], 0.0, atol=1e-6)
    cap = _world(wheel).cast([[10.2, -5.0, 0.3]], [[0.0, 1.0, 0.0]], 50.0)
    # bound: flat cap, f32_hit_bound_m(4 m, 1, lever 6.2 m) = 9.7e-6 m <= 1e-5; its vertices
    # share one float32 y: Ng exact, the unit normal within a few F32_EPS << 1e-6
    np.testing.assert_allclose(cap.range_m, [4.0], atol=1e-5)
    np.testing.assert_allclose(cap.normal, [[0.0, -1.0, 0.0]], atol=1e-6)


def test_foliage_sphere_before_a_wall_gives_two_hits_in_range_order():
    crown = {'name': 'crown', 'type': 'sphere', 'radius_m': 1.0, 'pose': {'xyz': [6, 0, 1.5]},
             'material': 'tree_foliage'}
    o, d, az = _fan(11, 4.0)
    hits = _world(crown, WALL).trace(o, d, 100.0, max_hits=4)
    np.testing.assert_array_equal(hits.ray, np.repeat(np.arange(11), 2))
    np.testing.assert_array_equal(hits.material, np.tile([M['tree_foliage'], M['concrete']], 11))
    np.testing.assert_array_equal(hits.foliage, np.tile([True, False], 11))
    b = 6.0 * np.cos(az)
    # bound: 1 cm crown (float64 quadric root), 1 mm wall (25x its f32 hit bound)
    np.testing.assert_allclose(hits.range_m[0::2], b - np.sqrt(b * b - 35.0), atol=1e-2)
    np.testing.assert_allclose(hits.range_m[1::2], 19.9 / np.cos(az), atol=1e-3)


def test_ignored_object_is_invisible():
    crown = {'name': 'crown', 'type': 'sphere', 'radius_m': 1.0, 'pose': {'xyz': [6, 0, 1.5]},
             'material': 'tree_foliage'}
    world = _world(crown, WALL)
    o, d, az = _fan(11, 4.0)
    hits = world.trace(o, d, 100.0, ignored=('crown',))
    np.testing.assert_array_equal(hits.ray, np.arange(11))
    assert np.all(hits.material == M['concrete'])
    assert len(world.cast(o, d, 100.0, ignored=('crown', 'wall'))) == 0
    with pytest.raises(ConfigError, match='ignored_objects'):
        world.trace(o, d, 100.0, ignored=('no_such_object',))


def test_max_hits_is_respected():
    sheets = [{'name': f'row_{k}', 'type': 'box', 'size_m': [0.3, 4, 2],
               'pose': {'xyz': [3.0 + 2 * k, 0, 1]}, 'material': 'corn_leaf'} for k in range(5)]
    world = _world(*sheets, WALL)
    o, d, az = _fan(5, 3.0)
    three = world.trace(o, d, 100.0, max_hits=3)
    np.testing.assert_array_equal(np.bincount(three.ray), [3] * 5)
    assert np.all(three.foliage)
    full = world.trace(o, d, 100.0, max_hits=8)
    np.testing.assert_array_equal(np.bincount(full.ray), [6] * 5)
    expected = np.array([2.85, 4.85, 6.85, 8.85, 10.85, 19.9]) / np.cos(az[0])
    # bound: 1 mm, > 20x f32_hit_bound_m of these faces (<= 20 m, lever <= 21.5 m, cos 0.999)
    np.testing.assert_allclose(full.range_m[:6], expected, atol=1e-3)
    assert len(world.cast(o, d, 100.0)) == 5


def test_range_limit_drops_hits_beyond_it():
    o, d, _ = _fan(3, 1.0)
    assert len(_world(WALL).trace(o, d, 19.0)) == 0


def test_smoke_truncates_the_ray_at_its_entry_point():
    world = _world(WALL, smoke=[{'center': [10, 0, 1.5], 'radius_m': 2.0, 'density': 0.6}])
    # closest approach b = 0, 1.8 (edge factor 0.19 -> 0.114 >= 0.05), 1.95 (0.0494 -> 0.0297)
    o = np.array([[0, 0, 1.5], [0, 1.8, 1.5], [0, 1.95, 1.5]], float)
    d = np.tile([1.0, 0.0, 0.0], (3, 1))
    hits = world.trace(o, d, 100.0)
    np.testing.assert_array_equal(hits.ray, [0, 1, 2])
    # bound: FACE_ATOL_M (the float32 wall face; the smoke entries are float64 roots)
    np.testing.assert_allclose(hits.range_m, [8.0, 10.0 - np.sqrt(4 - 3.24), 19.9],
                               atol=FACE_ATOL_M)
    np.testing.assert_array_equal(hits.smoke, [True, True, False])
    np.testing.assert_array_equal(hits.class_id, [SMOKE_CLASS, SMOKE_CLASS, CONCRETE])
    np.testing.assert_array_equal(hits.material, [0, 0, M['concrete']])
    np.testing.assert_array_equal(hits.obj, [-1, -1, 0])
    # a half-size cell no longer reaches the offset rays; disabling smoke removes it entirely
    half = world.trace(o, d, 100.0, smoke_radius_scale=0.5)
    np.testing.assert_allclose(half.range_m, [9.0, 19.9, 19.9], atol=FACE_ATOL_M)
    assert not np.any(world.trace(o, d, 100.0, smoke_enabled=False).smoke)


def test_per_scan_smoke_keeps_foliage_before_it_and_loses_to_a_nearer_wall():
    hedge = {'name': 'hedge', 'type': 'box', 'size_m': [0.4, 4, 3], 'pose': {'xyz': [4, 0, 1.5]},
             'material': 'shrub'}
    world = _world(hedge, WALL)
    o = np.array([[0, 0, 1.5], [0, 0, 1.5]], float)
    d = np.tile([1.0, 0.0, 0.0], (2, 1))
    cells = np.array([[10, 0, 1.5, 1.0, 0.9], [25, 0, 1.5, 1.0, 0.9]])
    hits = world.trace(o[:1], d[:1], 100.0, smoke=cells)
    np.testing.assert_allclose(hits.range_m, [3.8, 9.0], atol=FACE_ATOL_M)
    np.testing.assert_array_equal(hits.smoke, [False, True])
    behind = world.trace(o[:1], d[:1], 100.0, smoke=cells[1:, :4], smoke_density=cells[1:, 4])
    # bound: 1 mm, > 20x f32_hit_bound_m(19.9 m, cos 1, LEVER_M)
    np.testing.assert_allclose(behind.range_m, [3.8, 19.9], atol=1e-3)
    assert not np.any(behind.smoke)


def test_ground_albedo_is_the_same_for_the_same_spot():
    world = _world({'name': 'g', 'type': 'plane', 'size_m': [100, 100], 'material': 'soil'})
    sd = np.full(17, 0.3)
    spots = np.array([[3.05, 1.05, 0.0], [7.33, -2.21, 0.0], [12.03, 5.54, 0.0]])
    from_a = np.array([0.0, 0.0, 2.0])
    from_b = np.array([-4.0, 6.0, 1.0])
    dirs = [(spots - p) / np.linalg.norm(spots - p, axis=1, keepdims=True)
            for p in (from_a, from_b)]
    a = world.trace(np.tile(from_a, (3, 1)), dirs[0], 100.0, reflectivity_sd=sd)
    b = world.trace(np.tile(from_b, (3, 1)), dirs[1], 100.0, reflectivity_sd=sd)
    # bound: plane z = 0 of exact vertices: Ng and v0 - o exact, t errs only by d rounded to
    # float32 and the division, 3 F32_EPS / 2 x 12.2 m = 2.2e-6 m << 1e-4
    np.testing.assert_allclose(a.point, spots, atol=1e-4)
    np.testing.assert_array_equal(a.albedo, b.albedo)
    assert np.all(a.ground) and np.all(np.abs(a.albedo - 1.0) > 1e-6)
    plain = world.trace(np.tile(from_a, (3, 1)), dirs[0], 100.0)
    np.testing.assert_array_equal(plain.albedo, 1.0)


def test_ground_albedo_is_lognormal_with_mean_one():
    # one point per 0.1 m cell over a 100 m x 100 m patch: 10**6 cells
    ix, iy = np.meshgrid(np.arange(-500, 500), np.arange(-500, 500))
    points = np.stack([(ix.ravel() + 0.5) * 0.1, (iy.ravel() + 0.5) * 0.1, np.zeros(ix.size)], 1)
    albedo = ground_albedo(points, 0.3)
    # bound: fixed cells (hash), N = 1e6: std error 3.1e-4, 3e-3 is 10 of them
    np.testing.assert_allclose(albedo.mean(), 1.0, atol=3e-3)
    # bound: std error of the log's std 0.3 / sqrt(2N) = 2.1e-4: 1 % (3e-3) is 14 of them
    np.testing.assert_allclose(np.log(albedo).std(), 0.3, rtol=1e-2)
    # bound: std error of the log's mean 0.3 / sqrt(N) = 3e-4: 1e-3 is 3.3 of them
    np.testing.assert_allclose(np.log(albedo).mean(), -0.045, atol=1e-3)


def test_micro_slope_tilts_ground_normals_by_a_fixed_angle_per_cell():
    world = _world({'name': 'g', 'type': 'plane', 'size_m': [400, 400], 'material': 'gravel'},
                   WALL)
    n = 4000
    rng = np.random.default_rng(3)
    spots = np.c_[rng.uniform(-60, 60, (n, 2)), np.zeros(n)]
    origin = np.array([0.0, 0.0, 30.0])
    d = (spots - origin) / np.linalg.norm(spots - origin, axis=1, keepdims=True)
    slope = np.full(17, 5.0)
    hits = world.trace(np.tile(origin, (n, 1)), d, 200.0, micro_slope_deg=slope)
    assert np.count_nonzero(hits.ground) > 3000
    tilt = np.degrees(np.arccos(np.clip(hits.normal[hits.ground, 2], -1, 1)))
    # bound: tilt = 5 deg x z, z normal per cell, N > 3000 hits (seeded spots): the RMS's
    # relative sd 1/sqrt(2N) = 1.3 %, 5 % is 3.9 sigma
    np.testing.assert_allclose(np.sqrt(np.mean(tilt ** 2)), 5.0, rtol=0.05)
    again = world.trace(np.tile(origin, (n, 1)), d, 200.0, micro_slope_deg=slope)
    np.testing.assert_array_equal(hits.normal, again.normal)
    # bound: cos_inc stored float32 (F32_EPS / 2) from the float32 normal: a few F32_EPS << 1e-6
    np.testing.assert_allclose(hits.cos_inc, np.abs(np.sum(hits.normal * d, axis=1)), atol=1e-6)
    # the wall is not ground: its normal stays the mesh normal
    o, dw, _ = _fan(3, 1.0)
    wall = world.trace(o, dw, 100.0, micro_slope_deg=slope)
    # bound: mesh normal of a face with one float32 x: exact direction, a few F32_EPS << 1e-6
    np.testing.assert_allclose(wall.normal, np.tile([-1.0, 0.0, 0.0], (3, 1)), atol=1e-6)


def test_rays_inside_a_foliage_volume_pass_its_far_face():
    crown = {'name': 'crown', 'type': 'sphere', 'radius_m': 2.0, 'pose': {'xyz': [0, 0, 1.5]},
             'material': 'shrub'}
    o, d, _ = _fan(5, 10.0)
    hits = _world(crown, WALL).trace(o, d, 100.0)
    assert np.all(hits.material == M['concrete'])
    assert len(_world(crown, WALL).cast(o, d, 100.0)) == 5          # cast reports the far face


def test_bad_ray_arguments_raise_config_errors():
    world = _world(WALL)
    o, d, _ = _fan(2, 1.0)
    with pytest.raises(ConfigError, match='max_hits'):
        world.trace(o, d, 100.0, max_hits=9)
    with pytest.raises(ConfigError, match='dirs'):
        world.trace(o, d * 2.0, 100.0)
    with pytest.raises(ConfigError, match='max_range_m'):
        world.trace(o, d, 0.0)
