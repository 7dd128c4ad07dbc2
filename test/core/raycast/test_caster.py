"""The caster seam: a second backend plugged into World traces what the open3d one traces."""

import pickle

import numpy as np
import pytest
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.raycast.backend import CastResult
from ubot_lidar_sim.core.raycast.embree_caster import EmbreeCaster
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.core.world.materials import MaterialTable, PROPERTIES
from ubot_lidar_sim.core.world.world import World

PLAIN = MaterialTable.from_values({p: np.zeros(17) for p in PROPERTIES})
SCENE = {'objects': [
    {'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'material': 'soil'},
    {'name': 'wall', 'type': 'box', 'size_m': [0.2, 10, 3], 'pose': {'xyz': [20, 0, 1.5]},
     'material': 'concrete'},
    {'name': 'crown', 'type': 'sphere', 'radius_m': 1.0, 'pose': {'xyz': [6, 0.5, 1.5]},
     'material': 'tree_foliage'},
    {'name': 'post', 'type': 'cylinder', 'radius_m': 0.4, 'height_m': 2.0,
     'pose': {'xyz': [10, -1.5, 1.0], 'rpy_deg': [0, 10, 30]}, 'material': 'metal_bin'},
]}
# The scene's diagonal: no origin in it is farther from a vertex (the lever arm of every hit).
LEVER_M = float(np.hypot(np.hypot(60.0, 60.0), 3.0))


class BruteForceCaster:
    """Every ray against every triangle (Moller-Trumbore in numpy): slow, obviously right."""

    def __init__(self, geometries):
        tri = [g.vertices[g.triangles] for g in geometries]
        self.tri = np.concatenate(tri)                                     # (T, 3, 3)
        self.obj = np.concatenate([np.full(len(t), i, np.int32) for i, t in enumerate(tri)])
        self.prim = np.concatenate([np.arange(len(t)) for t in tri])

    def cast_rays(self, rays, ignored=frozenset()):
        keep = np.flatnonzero(~np.isin(self.obj, list(ignored)))
        v0, e1, e2 = (self.tri[keep, 0], self.tri[keep, 1] - self.tri[keep, 0],
                      self.tri[keep, 2] - self.tri[keep, 0])
        o, d = rays[:, None, :3].astype(np.float64), rays[:, None, 3:].astype(np.float64)
        p = np.cross(d, e2[None])
        det = np.sum(e1[None] * p, axis=-1)
        inv = 1.0 / np.where(np.abs(det) > 1e-12, det, np.nan)
        s = o - v0[None]
        q = np.cross(s, e1[None])
        u = np.sum(s * p, axis=-1) * inv
        v = np.sum(d * q, axis=-1) * inv
        t = np.sum(e2[None] * q, axis=-1) * inv
        t = np.where((u >= 0) & (v >= 0) & (u + v <= 1) & (t > 0), t, np.inf)
        k = np.argmin(t, axis=1) if keep.size else np.zeros(len(rays), np.int64)
        best = t[np.arange(len(rays)), k] if keep.size else np.full(len(rays), np.inf)
        normal = np.cross(e1, e2)
        normal /= np.linalg.norm(normal, axis=1, keepdims=True)
        hit = np.isfinite(best)
        return CastResult(best, np.where(hit, self.obj[keep][k] if keep.size else -1, -1),
                          self.prim[keep][k] if keep.size else k,
                          normal[k] if keep.size else np.zeros((len(rays), 3)))


def _rays(n=300, seed=4):
    """Rays from a sensor 1.6 m up, spread over the scene (some miss everything)."""
    rng = np.random.default_rng(seed)
    az = rng.uniform(-0.5, 0.5, n)
    el = rng.uniform(-0.35, 0.25, n)
    d = np.stack([np.cos(az) * np.cos(el), np.sin(az) * np.cos(el), np.sin(el)], 1)
    return np.tile([0.0, 0.0, 1.6], (n, 1)), d


def _within_hit_bounds(t_a, t_b, cos_inc):
    """Two float32 casts of the same rays: each within f32_hit_bound_m of the exact range."""
    bound = 2.0 * f32_hit_bound_m(np.maximum(t_a, t_b), cos_inc, LEVER_M)
    assert np.all(np.abs(np.asarray(t_a, np.float64) - t_b) <= bound)


def _same(a, b):
    np.testing.assert_array_equal(a.ray, b.ray)
    np.testing.assert_array_equal(a.obj, b.obj)
    _within_hit_bounds(a.range_m, b.range_m, b.cos_inc)
    # bound: physical: normals within 1e-4 (0.006 deg: no radiometric effect); float32 cross
    # products of the scene's triangles (aspect < 100) are within 8 eps32 x aspect = 1e-4.
    np.testing.assert_allclose(a.normal, b.normal, atol=1e-4)


def test_a_brute_force_caster_gives_the_first_hits_of_open3d():
    o, d = _rays()
    ref = World.from_dict(SCENE, materials=PLAIN)
    brute = World.from_dict(SCENE, materials=PLAIN, caster=BruteForceCaster)
    assert isinstance(ref.caster, Open3dCaster) and isinstance(brute.caster, BruteForceCaster)
    a, b = ref.cast(o, d, 100.0), brute.cast(o, d, 100.0)
    assert 0 < len(a) < len(o) and set(a.obj) == {0, 1, 2, 3}
    _same(a, b)
    _same(ref.cast(o, d, 100.0, ignored=('crown',)), brute.cast(o, d, 100.0, ignored=('crown',)))


def test_a_brute_force_caster_gives_the_multi_hit_trace_of_open3d():
    o, d = _rays(seed=5)
    ref = World.from_dict(SCENE, materials=PLAIN)
    brute = World.from_dict(SCENE, materials=PLAIN, caster=BruteForceCaster)
    a, b = ref.trace(o, d, 100.0), brute.trace(o, d, 100.0)
    assert np.any(a.foliage) and len(a) > len(ref.cast(o, d, 100.0))
    _same(a, b)


def test_a_world_pickles_with_its_caster_factory():
    brute = pickle.loads(pickle.dumps(
        World.from_dict(SCENE, materials=PLAIN, caster=BruteForceCaster)))
    assert isinstance(brute.caster, BruteForceCaster)
    o, d = _rays(50)
    _same(brute.cast(o, d, 100.0), World.from_dict(SCENE, materials=PLAIN).cast(o, d, 100.0))


def test_the_embree_caster_gives_the_first_hits_and_the_trace_of_open3d():
    o, d = _rays(seed=6)
    ref = World.from_dict(SCENE, materials=PLAIN)
    emb = World.from_dict(SCENE, materials=PLAIN, caster=EmbreeCaster)
    assert isinstance(emb.caster, EmbreeCaster)
    rays = np.hstack([o, d]).astype(np.float32)
    a, b = ref.caster.cast_rays(rays), emb.caster.cast_rays(rays)
    hit = a.obj >= 0
    np.testing.assert_array_equal(a.obj, b.obj)
    np.testing.assert_array_equal(a.primitive[hit], b.primitive[hit])
    np.testing.assert_array_equal(np.isinf(b.t), ~hit)
    # Two float32 hit formulas (open3d's Embree and embreex's, each at its run-time ISA).
    d32 = rays[hit, 3:].astype(np.float64)
    _within_hit_bounds(a.t[hit], b.t[hit], np.sum(a.normal[hit] * d32, axis=1))
    # bound: the same float32 vertices, crossed and normalised: <= 4 roundings of eps32 / 2 per
    # component each side (4.8e-7) times the triangle's aspect (< 2 on the faces these rays hit).
    np.testing.assert_allclose(a.normal[hit], b.normal[hit], atol=1e-6)
    _same(ref.cast(o, d, 100.0), emb.cast(o, d, 100.0))
    _same(ref.trace(o, d, 100.0), emb.trace(o, d, 100.0))
    _same(ref.trace(o, d, 100.0, ignored=('wall',)), emb.trace(o, d, 100.0, ignored=('wall',)))


def test_the_embree_caster_splits_a_large_cast_over_threads_with_the_same_result():
    geoms = World.from_dict(SCENE, materials=PLAIN)._tracer.geometries
    o, d = _rays(n=70000, seed=7)
    rays = np.hstack([o, d]).astype(np.float32)
    one, two = EmbreeCaster(geoms, threads=1), EmbreeCaster(geoms, threads=2)
    a, b = one.cast_rays(rays), two.cast_rays(rays)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    c = pickle.loads(pickle.dumps(two)).cast_rays(rays)
    np.testing.assert_array_equal(a.t, c.t)
    assert c.obj[0] == a.obj[0] and one.cast_rays(rays[:0]).t.shape == (0,)


def test_open3d_on_one_thread_casts_what_it_casts_on_every_core():
    # Dataset workers cast on one thread each (dataset/runner.py): the hits are per ray.
    geoms = World.from_dict(SCENE, materials=PLAIN)._tracer.geometries
    o, d = _rays(n=70000, seed=8)
    rays = np.hstack([o, d]).astype(np.float32)
    one, every = Open3dCaster(geoms, threads=1), Open3dCaster(geoms)
    assert (one.threads, every.threads) == (1, 0)
    a, b = one.cast_rays(rays), every.cast_rays(rays)
    assert np.count_nonzero(a.obj >= 0) > 1000
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize('factory', [Open3dCaster, EmbreeCaster])
def test_a_caster_reports_misses_as_inf_and_object_minus_one(factory):
    world = World.from_dict(SCENE, materials=PLAIN, caster=factory)
    rays = np.array([[0, -4, 1.6, 1, 0, 0], [0, -4, 1.6, 0, 0, 1]], np.float32)
    res = world.caster.cast_rays(rays)
    assert abs(res.t[0] - 19.9) <= f32_hit_bound_m(19.9, 1.0, LEVER_M) and np.isinf(res.t[1])
    np.testing.assert_array_equal(res.obj, [1, -1])
    # bound: an axis-aligned face: the cross product's other components are exact zeros.
    np.testing.assert_allclose(res.normal[0], [-1.0, 0.0, 0.0], atol=1e-6)
    assert world.caster.cast_rays(rays, frozenset({1})).obj[0] == -1
