"""A body rigid with the sensor, cast once in the sensor frame: raycast/sensor_mount.py."""

import numpy as np
import pytest
from tolerances import f32_hit_bound_m, f32_round_bound_m
import trimesh

from ubot_lidar_sim.core.poses import FixedPose, pose_matrix
from ubot_lidar_sim.core.raycast.actor_casting import ActorCasting
from ubot_lidar_sim.core.raycast.backend import CastResult
from ubot_lidar_sim.core.raycast.casters import CASTERS
from ubot_lidar_sim.core.raycast.fixed_actors import _merge, BodyHits
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.raycast.ray_times import one_instant
from ubot_lidar_sim.core.raycast.sensor_mount import (DIRECTION_TOL, merge_at_pose,
                                                      MountedPose, pattern_at, pattern_rays,
                                                      PATTERN_SAMPLES, SensorFrame)

FIRST_OBJ = 5       # the actors come after five static objects
F32_HALF_ULP_1 = 2.0 ** -24     # float32 rounding of a unit vector's component, at most


class CountingCaster:
    """A real open3d caster that counts its casts (how often the body is cast)."""

    def __init__(self, geometries):
        self._caster = CASTERS['open3d'](geometries)
        self.casts = 0

    def cast_rays(self, rays, ignored=frozenset()):
        self.casts += 1
        return self._caster.cast_rays(rays, ignored)


def _casting():
    """Return (ActorCasting, its counting caster) of a deck box and a mast box (flat faces)."""
    boxes = (trimesh.creation.box((0.8, 0.6, 0.3)), trimesh.creation.box((0.1, 0.1, 1.0)))
    geoms = [Geometry(np.asarray(m.vertices, np.float64), np.asarray(m.faces, np.int64))
             for m in boxes]
    made = []

    def factory(g):
        made.append(CountingCaster(g))
        return made[-1]
    return ActorCasting(geoms, factory, FIRST_OBJ), made[0]


def _pattern():
    """Return the pattern (N, 6) float32: 360 azimuths x 9 elevations (-40..40 deg), offset."""
    az = np.radians(0.37 + np.arange(360.0))
    el = np.radians(np.linspace(-40.0, 40.0, 9) + 0.21)
    a, e = np.meshgrid(az, el)
    return pattern_rays(np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)],
                                 axis=-1).reshape(-1, 3))


def _world_rays(pattern, world_from_sensor):
    """Return the pattern's rays (N, 6) float32 world frame, as a sensor's first cast makes."""
    d = pattern[:, 3:].astype(np.float64) @ world_from_sensor[:3, :3].T
    o = np.broadcast_to(world_from_sensor[:3, 3] + 0.0, d.shape)
    return np.hstack([o, d]).astype(np.float32)


def _static(n):
    """Return a static CastResult: every third ray a wall at 0.5 m, the others miss."""
    t = np.where(np.arange(n) % 3 == 0, 0.5, np.inf).astype(np.float32)
    return CastResult(t, np.where(np.isfinite(t), 0, -1).astype(np.int32),
                      np.zeros(n, np.int64), np.tile(np.float32([0, 0, 1]), (n, 1)))


def _cast(casting, rays, pose_at, first=True):
    """Return casting.cast of rays (a first cast or a later layer), actor k posed by pose_at[k]."""
    n = rays.shape[0]
    frame = casting.frame(list(enumerate(pose_at)), one_instant(n, 0.0))
    return casting.cast(rays, _static(n), np.arange(n), frame, frozenset(), first=first)


def _deck_and_mast(turn_rad):
    """Return the sensor-from-actor mounts (2, 4, 4): deck below, mast 0.5 m out at turn_rad."""
    mast = pose_matrix([0.5 * np.cos(turn_rad), 0.5 * np.sin(turn_rad), 0.2], [0, 0, turn_rad])
    return np.stack([pose_matrix([0.1, 0.0, -0.4], [0.0, 0.0, 0.0]), mast])


def _assert_same_hits(got, want, rays, world_from_sensor):
    """
    Assert the mounted path's hits are the world path's within the float32 bound.

    The two casts trace the same lines but for the world rays' float32 rounding: the origin
    by <= sqrt(3) half-spacings of the sensor's coordinates, each unit direction by
    <= sqrt(3) 2^-24; a hit moves by (that origin shift + range x direction shift) / |cos| of
    the incidence, beside each cast's own f32_hit_bound_m (the boxes' vertices < 2 m away).
    """
    assert np.array_equal(got.obj, want.obj)
    assert np.array_equal(got.primitive, want.primitive)
    hit = np.flatnonzero(np.asarray(want.obj) >= FIRST_OBJ)
    assert hit.size > 300       # the deck and the mast meet many rays
    t = np.asarray(want.t, np.float64)[hit]
    d = rays[hit, 3:].astype(np.float64)
    cos = np.abs(np.einsum('ij,ij->i', np.asarray(want.normal, np.float64)[hit], d))
    shift = np.sqrt(3) * (f32_round_bound_m(np.abs(world_from_sensor[:3, 3]).max())
                          + t * F32_HALF_ULP_1)
    bound = 2.0 * f32_hit_bound_m(t, cos, 2.0) + shift / cos
    assert np.all(np.abs(np.asarray(got.t, np.float64)[hit] - t) <= bound)
    assert np.array_equal(np.asarray(got.t)[~np.isin(np.arange(len(rays)), hit)],
                          np.asarray(want.t)[~np.isin(np.arange(len(rays)), hit)])
    # bound: the same triangle's normal, turned by the same rotation composed in another order
    # (float64, a few ulps of 1), rounded to float32: one float32 spacing of a unit component
    assert np.allclose(got.normal, want.normal, rtol=0, atol=2.0 ** -23)


# A standing robot, one moving 40 m away and turning, and a mast joint that turns.
STANDING = [(pose_matrix([1.0, 2.0, 0.5], [0, 0, 0.3]), 0.0)] * 3
MOVING = [(pose_matrix([40.0 + 0.013 * k, -3.0 + 0.007 * k, 0.5], [0.01 * k, 0, 0.3 + 0.2 * k]),
           0.0) for k in range(4)]
TURNING_MAST = [(pose_matrix([1.0, 2.0, 0.5], [0, 0, 0.3]), turn)
                for turn in (0.0, 0.0, 0.7, 0.7, 0.0)]


@pytest.mark.parametrize('sweeps, body_casts', [(STANDING, 1), (MOVING, 1),
                                                (TURNING_MAST, 3)])
def test_a_body_rigid_with_the_sensor_gives_the_world_paths_hits(sweeps, body_casts):
    pattern = _pattern()
    mounted, counter = _casting()
    world, _ = _casting()
    mounts = {}
    for world_from_sensor, turn in sweeps:
        # the scanner's mounts: the same arrays while the joint holds (body.py's sensor_from_link)
        mount = mounts.setdefault(turn, _deck_and_mast(turn))
        sensor = SensorFrame(world_from_sensor, pattern)
        rays = _world_rays(pattern, world_from_sensor)
        got = _cast(mounted, rays, [MountedPose(sensor, m) for m in mount])
        want = _cast(world, rays, [FixedPose(world_from_sensor @ m) for m in mount])
        _assert_same_hits(got, want, rays, world_from_sensor)
    # one cast of the body per distinct mast position taken up (0, 0.7, then 0 again)
    assert counter.casts == body_casts


@pytest.mark.parametrize('shift_m, first', [(0.25, True), (0.0, False)])
def test_rays_other_than_the_pattern_take_the_world_path(shift_m, first):
    # a first cast of as many rays from elsewhere (a ghost's), or a later layer of a trace
    # (its rays go on from hits): the sensor frame's hits do not hold for them, so they are
    # cast in the world frame, with the same bits as FixedPose actors get
    pattern = _pattern()
    world_from_sensor = pose_matrix([1.0, 2.0, 0.5], [0, 0, 0.3])
    sensor = SensorFrame(world_from_sensor, pattern)
    rays = _world_rays(pattern, world_from_sensor)
    rays[:, 0] += np.float32(shift_m)
    mount = _deck_and_mast(0.0)
    mounted, counter = _casting()
    world, _ = _casting()
    got = _cast(mounted, rays, [MountedPose(sensor, m) for m in mount], first)
    want = _cast(world, rays, [FixedPose(world_from_sensor @ m) for m in mount], first)
    assert counter.casts == 1 and np.count_nonzero(np.asarray(want.obj) >= FIRST_OBJ) > 300
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


def _pattern_at_numpy(rays, pattern, pose, tol):
    """pattern_at in numpy: its rows, the float32 sensor position, R @ the pattern's directions."""
    n = len(rays)
    step = max(1, n // PATTERN_SAMPLES)
    rows = np.unique(np.minimum(np.arange(0, n + step - 1, step), n - 1))
    origin = (pose[:3, 3] + 0.0).astype(np.float32)
    world = pattern[rows, 3:].astype(np.float64) @ pose[:3, :3].T
    return bool((rays[rows, :3] == origin).all()
                and (np.abs(rays[rows, 3:].astype(np.float64) - world) <= tol).all())


def test_the_pattern_kernel_matches_its_numpy_form():
    pattern = _pattern()
    pose = pose_matrix([40.3, -3.1, 0.5], [0.1, -0.05, 2.0])
    rays = _world_rays(pattern, pose)
    step = len(rays) // PATTERN_SAMPLES         # 3,240 rays: every 12th is compared, and the last
    one_ulp = rays.copy()
    one_ulp[8 * step, 1] = np.nextafter(one_ulp[8 * step, 1], np.float32(np.inf))
    off = rays.copy()
    off[166 * step, 4] += np.float32(2 * DIRECTION_TOL)
    last = rays.copy()
    last[-1, 5] += np.float32(2 * DIRECTION_TOL)
    near = rays.copy()
    near[166 * step, 4] += np.float32(0.25 * DIRECTION_TOL)
    for case, expected in ((rays, True), (one_ulp, False), (off, False), (last, False),
                           (near, True)):
        assert pattern_at(case, pattern, pose, DIRECTION_TOL) is expected
        assert _pattern_at_numpy(case, pattern, pose, DIRECTION_TOL) is expected


def test_the_merge_kernel_matches_the_world_paths_numpy_merge():
    # fixed_actors._merge (numpy) on hits whose normals are turned to the world first: the
    # kernel's reference; ties (a body hit at the static range) stay static in both
    rng = np.random.default_rng(4)
    pattern = _pattern()
    pose = pose_matrix([40.3, -3.1, 0.5], [0.1, -0.05, 2.0])
    rays = _world_rays(pattern, pose)
    n = len(rays)
    static = _static(n)
    ray = np.sort(rng.choice(n, 400, replace=False))
    t = rng.uniform(0.1, 1.0, 400)
    t[:20] = 0.5                                    # ties with the static wall at 0.5 m
    obj = rng.integers(FIRST_OBJ, FIRST_OBJ + 2, 400)
    prim = rng.integers(0, 12, 400)
    normal = rng.normal(size=(400, 3))
    normal /= np.linalg.norm(normal, axis=1)[:, None]
    hits = BodyHits(pattern, np.eye(4)[None], (), ray, t, obj, prim, normal)
    want = _merge(CastResult(*(np.array(x) for x in static)),   # it writes in place
                  hits._replace(normal=normal @ pose[:3, :3].T))
    out = [np.array(x) for x in static]
    taken = merge_at_pose(rays, pattern, pose, DIRECTION_TOL, ray, t, obj, prim, normal, *out)
    assert taken == np.count_nonzero(t < np.asarray(static.t)[ray]) > 200
    for got, expected in zip(out[:3], want[:3]):
        assert np.array_equal(got, expected)
    # bound: the same float64 products summed in another order, then rounded to float32: one
    # float32 spacing of a unit component (2^-23)
    assert np.allclose(out[3], want[3], rtol=0, atol=2.0 ** -23)
    # other rays than the pattern's: nothing written
    moved = rays.copy()
    moved[:, 0] += np.float32(0.25)
    untouched = [np.array(x) for x in static]
    assert merge_at_pose(moved, pattern, pose, DIRECTION_TOL, ray, t, obj, prim, normal,
                         *untouched) == -1
    assert all(np.array_equal(u, np.asarray(x)) for u, x in zip(untouched, static))
