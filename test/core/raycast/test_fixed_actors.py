"""Actors that hold one pose (a robot's body offline): raycast/fixed_actors.py and its kernels."""

import numpy as np
import pytest
import trimesh

from ubot_lidar_sim.core.poses import FixedPose, pose_matrix, SampledPath
from ubot_lidar_sim.core.raycast.actor_casting import ActorCasting, rays_to_local
from ubot_lidar_sim.core.raycast.actor_scene import ActorScene
from ubot_lidar_sim.core.raycast.backend import CastResult
from ubot_lidar_sim.core.raycast.casters import CASTERS
from ubot_lidar_sim.core.raycast.fixed_actors import meet_boxes
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.raycast.ray_times import one_instant

FIRST_OBJ = 5       # the actors come after five static objects


def _geometries():
    """Three bodies: a 2,000-triangle cylinder, a box and a sphere (frame origin off-centre)."""
    shapes = (trimesh.creation.cylinder(0.4, 0.5, sections=500),
              trimesh.creation.box((0.6, 1.2, 0.3)), trimesh.creation.icosphere(2, 0.25))
    return [Geometry(np.asarray(m.vertices, np.float64) + off, np.asarray(m.faces, np.int64))
            for m, off in zip(shapes, ((0.0, 0.0, 0.3), (0.2, 0.0, 0.0), (0.0, 0.5, 0.0)))]


class CountingCaster:
    """A real open3d caster that counts its casts (how often the body is cast)."""

    casts = 0

    def __init__(self, geometries):
        self._caster = CASTERS['open3d'](geometries)

    def cast_rays(self, rays, ignored=frozenset()):
        CountingCaster.casts += 1
        return self._caster.cast_rays(rays, ignored)


def _rays(rng, n, poses):
    """Return n rays (n, 6) float32: half aimed near a body's origin, half anywhere."""
    o = rng.uniform(-2.0, 2.0, (n, 3))
    target = poses[rng.integers(0, len(poses), n), :3, 3] + rng.normal(0.0, 0.3, (n, 3))
    d = np.where(np.arange(n)[:, None] % 2 == 0, target - o, rng.normal(size=(n, 3)))
    d /= np.linalg.norm(d, axis=1)[:, None]
    return np.hstack([o, d]).astype(np.float32)


def _random_poses(rng, a):
    """Return a random poses (a, 4, 4) within a metre of the origin."""
    return np.stack([pose_matrix(rng.uniform(-1.0, 1.0, 3), rng.uniform(-np.pi, np.pi, 3))
                     for _ in range(a)])


def _static(rng, n, nearer=0.0):
    """Return a static CastResult of n rays: misses, a share nearer of them at 0-3 m."""
    t = np.where(rng.random(n) < nearer, rng.uniform(0.0, 3.0, n), np.inf).astype(np.float32)
    return CastResult(t, np.where(np.isfinite(t), 0, -1).astype(np.int32),
                      np.zeros(n, np.int64), np.tile(np.float32([0, 0, 1]), (n, 1)))


def _cast(casting, rays, res, pose_at):
    """Return casting.cast of rays with actor k posed by pose_at[k], all at t = 0 s."""
    n = rays.shape[0]
    frame = casting.frame(list(enumerate(pose_at)), one_instant(n, 0.0))
    return casting.cast(rays, res, np.arange(n), frame, frozenset())


def _all_rays_cast(scene, rays, poses):
    """Return (t (n, A), obj (n, A)): every ray cast at every actor, no preselection."""
    n = rays.shape[0]
    t, obj = np.empty((n, len(poses))), np.empty((n, len(poses)), np.int64)
    for k, pose in enumerate(poses):        # a few actors; the rays go in one cast each
        local = np.empty((n, 6), np.float32)
        rays_to_local(rays, np.arange(n), np.ascontiguousarray(np.broadcast_to(pose, (n, 4, 4))),
                      local)
        hit = scene.cast_rays(k, local)
        t[:, k], obj[:, k] = hit.t, hit.obj
    return t, obj


@pytest.mark.parametrize('seed, n_actors', [(0, 1), (1, 1), (2, 3), (3, 3)])
def test_the_ray_preselection_never_drops_a_ray_that_hits_the_body(seed, n_actors):
    rng = np.random.default_rng(seed)
    geoms = _geometries()[:n_actors]
    poses = _random_poses(rng, len(geoms))
    rays = _rays(rng, 3000, poses)
    casting = ActorCasting(geoms, CASTERS['open3d'], FIRST_OBJ)
    res = _cast(casting, rays, _static(rng, rays.shape[0]), [FixedPose(p) for p in poses])
    t_all, obj_all = _all_rays_cast(ActorScene(geoms, CASTERS['open3d']), rays, poses)
    hit_all = (obj_all >= 0).any(axis=1)
    assert hit_all.sum() > 300          # the rays aimed at the bodies meet them
    # The same set of rays hits, each at the distance of its nearest actor, exactly (in the
    # static result's float32, as the general path writes it).
    np.testing.assert_array_equal(np.asarray(res.obj) >= 0, hit_all)
    np.testing.assert_array_equal(np.asarray(res.t)[hit_all],
                                  t_all[hit_all].min(axis=1).astype(np.float32))
    nearest = np.argmin(np.where(obj_all >= 0, t_all, np.inf), axis=1)
    np.testing.assert_array_equal(np.asarray(res.obj)[hit_all], FIRST_OBJ + nearest[hit_all])


def _assert_general_path_gives(got, geoms, rays, static, poses):
    """Assert that got (> 200 actor hits) is the general path's cast, bit for bit."""
    # A pose_at without ``fixed``: ActorCasting's general path (spheres per column).
    general = _cast(ActorCasting(geoms, CASTERS['open3d'], FIRST_OBJ), rays, static,
                    [lambda times, p=p: np.broadcast_to(p, (np.size(times), 4, 4))
                     for p in poses])
    assert (np.asarray(got.obj) >= FIRST_OBJ).sum() > 200
    for a, b in zip(got, general):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize('seed, n_actors', [(0, 1), (1, 3), (2, 3)])
def test_a_fixed_pose_gives_the_hits_of_the_per_ray_pose_path(seed, n_actors):
    rng = np.random.default_rng(10 + seed)
    geoms = _geometries()[:n_actors]
    poses = _random_poses(rng, len(geoms))
    rays = _rays(rng, 3000, poses)
    static = _static(rng, rays.shape[0], nearer=0.3)
    fixed = _cast(ActorCasting(geoms, CASTERS['open3d'], FIRST_OBJ), rays, static,
                  [FixedPose(p) for p in poses])
    _assert_general_path_gives(fixed, geoms, rays, static, poses)


def test_a_nodes_one_instant_tf_path_takes_the_fixed_path_with_the_same_hits():
    # A node's frame actor over a sweep at one instant: /tf looked up at one time.
    rng = np.random.default_rng(15)
    geoms = _geometries()
    poses = _random_poses(rng, len(geoms))
    rays = _rays(rng, 2000, poses)
    static = _static(rng, rays.shape[0], nearer=0.3)
    paths = [SampledPath([4.0], p) for p in poses]
    assert all(np.array_equal(path.fixed, p) for path, p in zip(paths, poses))
    assert SampledPath([4.0, 4.1], [poses[0], poses[1]]).fixed is None
    got = _cast(ActorCasting(geoms, CASTERS['open3d'], FIRST_OBJ), rays, static, paths)
    _assert_general_path_gives(got, geoms, rays, static, poses)


def test_a_standing_body_is_cast_once_and_a_moved_one_again():
    rng = np.random.default_rng(20)
    geoms = _geometries()
    poses = _random_poses(rng, len(geoms))
    rays = _rays(rng, 2000, poses)
    casting = ActorCasting(geoms, CountingCaster, FIRST_OBJ)
    CountingCaster.casts = 0
    first = _cast(casting, rays, _static(rng, rays.shape[0]), [FixedPose(p) for p in poses])
    again_static = _static(rng, rays.shape[0], nearer=0.5)
    again = _cast(casting, rays.copy(), again_static, [FixedPose(p) for p in poses])
    assert CountingCaster.casts == 1
    fresh = _cast(ActorCasting(geoms, CASTERS['open3d'], FIRST_OBJ), rays, again_static,
                  [FixedPose(p) for p in poses])
    for a, b in zip(again, fresh):      # the reused hits against this cast's static ones
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert (np.asarray(again.obj) >= FIRST_OBJ).sum() < (np.asarray(first.obj) >= FIRST_OBJ).sum()
    moved = poses.copy()
    moved[0, 0, 3] += 1e-3
    _cast(casting, rays, again_static, [FixedPose(p) for p in moved])
    assert CountingCaster.casts == 2


def _into_slots_numpy(scene, k, local):
    """Return ActorScene.cast_rays' sphere step without its box test: (moved rays, t0 or NaN)."""
    k = np.broadcast_to(np.asarray(k, np.int64), (local.shape[0],))
    o = np.asarray(local[:, :3], np.float64) - np.asarray(scene.centre)[k]
    d = np.asarray(local[:, 3:6], np.float64)
    b = np.einsum('ij,ij->i', o, d)
    disc = b * b - (np.einsum('ij,ij->i', o, o) - np.asarray(scene.radius)[k] ** 2)
    meets = disc >= 0.0
    root = np.sqrt(np.where(meets, disc, 0.0))
    meets &= -b + root >= 0.0
    t0 = np.maximum(-b - root, 0.0)
    moved = np.empty_like(local, dtype=np.float32)
    moved[:, :3] = o + t0[:, None] * d + scene._slot[k]
    moved[:, 3:6] = local[:, 3:6]
    return moved, np.where(meets, t0, np.nan)


def test_the_slot_kernels_match_their_numpy_form_and_the_box_test_loses_no_hit():
    rng = np.random.default_rng(30)
    geoms = _geometries()
    scene = ActorScene(geoms, CASTERS['open3d'])
    local = _rays(rng, 5000, np.tile(np.eye(4), (3, 1, 1)))
    k = rng.integers(0, len(geoms), local.shape[0])
    moved, t0 = _into_slots_numpy(scene, k, local)
    hit = scene._caster.cast_rays(moved)
    mine = np.isfinite(t0) & (hit.obj == k)
    got = scene.cast_rays(k, local)
    assert mine.sum() > 1000
    np.testing.assert_array_equal(got.obj, np.where(mine, k, -1))
    # A ray that misses the box cannot meet the actor: the box test leaves every hit. The
    # kernels sum as numpy's einsum does on x86-64 (equal there). bound: elsewhere three
    # float64 products summed in another order move a ray's start within its float32 rounding,
    # at <= 8 m from the scene origin <= 1e-6 m (float32 ulp at 8 m): 1e-5 m is ten of those.
    np.testing.assert_allclose(got.t[mine], (t0 + hit.t)[mine], rtol=0, atol=1e-5)
    assert np.all(np.isinf(got.t[~mine]))


def _meet_boxes_numpy(local, k, lower, upper):
    """Return the plain-numpy slab test of fixed_actors.meet_boxes: (n,) bool."""
    o, d = local[:, :3].astype(np.float64), local[:, 3:].astype(np.float64)
    lo, hi = lower[k], upper[k]
    with np.errstate(divide='ignore', invalid='ignore'):
        t0, t1 = (lo - o) / d, (hi - o) / d
    flat = d == 0.0
    inside = (o >= lo) & (o <= hi)
    t_in = np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t0, t1))
    t_out = np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t0, t1))
    return np.maximum(t_in.max(axis=1), 0.0) <= t_out.min(axis=1)


def test_the_box_kernel_matches_its_numpy_form_and_axis_parallel_rays():
    rng = np.random.default_rng(40)
    lower = np.array([[-0.4, -0.4, 0.05], [0.0, 0.0, 0.0]])
    upper = np.array([[0.4, 0.4, 0.55], [1.0, 2.0, 0.5]])
    local = _rays(rng, 4000, np.tile(np.eye(4), (2, 1, 1)))
    local[::7, 3:] = np.float32([0.0, 0.0, 1.0])     # parallel to two slabs' planes
    local[1::7, 3:] = np.float32([-1.0, 0.0, 0.0])
    k = rng.integers(0, 2, local.shape[0])
    got = np.empty(local.shape[0], bool)
    meet_boxes(local, k, lower, upper, got)
    want = _meet_boxes_numpy(local, k, lower, upper)
    # bound: exact, the same float64 divisions and comparisons in both forms
    np.testing.assert_array_equal(got, want)
    assert 500 < got.sum() < local.shape[0] - 500
    # By hand: from (2, 0, 0.3) along -x the ray meets box 0 (x in -0.4..0.4); along +x or
    # straight up it does not; from inside along any direction it does.
    by_hand = np.float32([[2, 0, 0.3, -1, 0, 0], [2, 0, 0.3, 1, 0, 0], [2, 0, 0.3, 0, 0, 1],
                          [0, 0, 0.3, 0, 0, 1]])
    meet_boxes(by_hand, np.zeros(4, np.int64), lower, upper, out := np.empty(4, bool))
    assert out.tolist() == [True, False, False, True]
