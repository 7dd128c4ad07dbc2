"""Analytic exits of closed foliage volumes (raycast/volumes.py) and the trace that uses them."""

import numpy as np
import pytest
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.raycast import tracer
from ubot_lidar_sim.core.raycast.volumes import ClosedVolumes, segment_meets_box
from ubot_lidar_sim.core.world.materials import MaterialTable, PROPERTIES
from ubot_lidar_sim.core.world.world import World

PLAIN = MaterialTable.from_values({p: np.zeros(17) for p in PROPERTIES})
# The random scene's farthest vertex from its rays' origin (0, 0, 2): the wall's far corner.
LEVER_M = float(np.hypot(np.hypot(25.15, 20.0), 4.0))
FOLIAGE = 'tree_foliage'
SHAPES = {'objects': [
    {'name': 'box', 'type': 'box', 'size_m': [2.0, 1.0, 0.5], 'material': FOLIAGE,
     'pose': {'xyz': [0, 0, 0], 'rpy_deg': [0, 0, 90]}},
    {'name': 'ball', 'type': 'sphere', 'radius_m': 2.0, 'pose': {'xyz': [1, 2, 3]},
     'material': FOLIAGE},
    {'name': 'can', 'type': 'cylinder', 'radius_m': 1.0, 'height_m': 2.0,
     'pose': {'xyz': [10, 0, 0]}, 'material': FOLIAGE},
]}


def _volumes(scene):
    world = World.from_dict(scene, materials=PLAIN)
    return ClosedVolumes(world._tracer.geometries, world._tracer.foliage)


def _unit(v):
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_exit_ranges_of_a_box_a_sphere_and_a_cylinder_are_the_hand_values():
    vol = _volumes(SHAPES)
    assert vol.handled.tolist() == [True, True, True]
    obj = np.array([0, 1, 1, 2, 2, 2])
    o = np.array([[0, 0, 0], [1, 2, 3], [-4, 2, 3], [10, 0, 0], [10, 0, 0], [10, 0, 0]],
                 np.float64)
    d = _unit([[1, 0, 0], [0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 0, -1], [1, 0, 2]])
    # The box is turned 90 deg about z: world x runs along its 1 m side (half 0.5).
    # The sphere: radius 2 from its centre, 3 + 4 through it from 5 m out. The cylinder:
    # radius 1 sideways, half height 1 along its axis, and the cap first along (1, 0, 2).
    # bound: float64 slab and quadric exits of exact inputs, a few ulps << 1e-12 rel
    np.testing.assert_allclose(vol.exit_range(obj, o, d),
                               [0.5, 2.0, 7.0, 1.0, 1.0, np.sqrt(5.0) / 2.0], rtol=1e-12)


def test_a_segment_meets_a_box_only_where_it_crosses_it():
    lo, hi = np.array([[0.0, 0.0, 0.0]] * 4), np.array([[1.0, 1.0, 1.0]] * 4)
    o = np.array([[-1.0, 0.5, 0.5]] * 3 + [[0.5, 0.5, 2.0]])
    d = np.array([[1.0, 0.0, 0.0]] * 3 + [[0.0, 0.0, 1.0]])
    t0, t1 = np.array([0.0, 0.0, 2.5, 0.0]), np.array([0.5, 1.5, 3.0, 5.0])
    assert [segment_meets_box(*o[k], *d[k], t0[k], t1[k], *lo[k], *hi[k]) for k in range(4)] == [
        False, True, False, False]


def test_a_stretch_through_a_crown_is_free_unless_it_meets_the_trunk():
    scene = {'objects': [
        {'name': 'crown', 'type': 'sphere', 'radius_m': 2.0, 'pose': {'xyz': [0, 0, 5]},
         'material': FOLIAGE},
        {'name': 'trunk', 'type': 'cylinder', 'radius_m': 0.2, 'height_m': 6.0,
         'pose': {'xyz': [0, 0, 3]}, 'material': 'bark'},
    ]}
    vol = _volumes(scene)
    assert vol.handled.tolist() == [True, False]
    obj = np.zeros(2, np.int64)
    o = np.array([[-5.0, 0.0, 5.0], [-5.0, 0.0, 6.5]])      # through the trunk top / above it
    d = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    t_exit = vol.exit_range(obj, o, d)
    assert vol.free(obj, o, d, np.array([3.25, 4.0]), t_exit).tolist() == [False, True]


def _scene_rays(n, seed):
    rng = np.random.default_rng(seed)
    scene = {'objects': [
        {'name': 'wall', 'type': 'box', 'size_m': [0.3, 40, 6], 'pose': {'xyz': [25, 0, 3]},
         'material': 'concrete'}]}
    for k in range(12):
        x, y = rng.uniform(4, 20), rng.uniform(-12, 12)
        kind = ('box', 'sphere', 'cylinder')[k % 3]
        obj = {'name': f'f{k}', 'type': kind, 'material': FOLIAGE,
               'pose': {'xyz': [x, y, 2.0], 'rpy_deg': [0, 20 * (k % 2), 15 * k]}}
        obj.update({'box': {'size_m': [1.5, 0.8, 2.0]}, 'sphere': {'radius_m': 1.1},
                    'cylinder': {'radius_m': 0.9, 'height_m': 2.5}}[kind])
        scene['objects'].append(obj)
    scene['objects'].append({'name': 'stem', 'type': 'cylinder', 'radius_m': 0.15,
                             'height_m': 4.0, 'pose': {'xyz': scene['objects'][2]['pose']['xyz']},
                             'material': 'bark'})
    az, el = rng.uniform(-0.8, 0.8, n), rng.uniform(-0.12, 0.12, n)
    d = np.stack([np.cos(az) * np.cos(el), np.sin(az) * np.cos(el), np.sin(el)], 1)
    return scene, np.tile([0.0, 0.0, 2.0], (n, 1)), d


@pytest.mark.parametrize('seed', [1, 2])
def test_the_trace_with_analytic_exits_meets_the_same_surfaces_with_fewer_casts(seed,
                                                                                monkeypatch):
    scene, o, d = _scene_rays(4000, seed)
    casts = {}
    for exits in (False, True):
        monkeypatch.setattr(tracer, 'ANALYTIC_EXITS', exits)
        world = World.from_dict(scene, materials=PLAIN)
        cast = world.caster.cast_rays
        counted = []
        monkeypatch.setattr(world.caster, 'cast_rays',
                            lambda rays, ignored=frozenset(): counted.append(len(rays))
                            or cast(rays, ignored))
        casts[exits] = (world.trace(o, d, 60.0, max_hits=6), sum(counted))
    (a, n_old), (b, n_new) = casts[False], casts[True]
    assert np.any(a.foliage) and n_new < 0.8 * n_old
    np.testing.assert_array_equal(a.ray, b.ray)
    np.testing.assert_array_equal(a.obj, b.obj)
    # bound: a flat-face hit cast from two origins (exit + 1 mm, or the far face): each within
    # f32_hit_bound_m of the exact range; quadric hits are float64 roots (nm)
    bound = 2.0 * f32_hit_bound_m(a.range_m, a.cos_inc, LEVER_M)
    assert np.all(np.abs(a.range_m - b.range_m) <= bound)
    # bound: the same triangle's float32 normal, or a float64 quadric normal (eps64 x r / radius)
    np.testing.assert_allclose(a.normal, b.normal, atol=1e-5)
