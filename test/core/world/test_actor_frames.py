"""The actors' spheres of a sweep: posed once per column block, grown over the firing window."""

import numba
import numpy as np

from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.poses import pose_matrix_deg, WorldTwist
from ubot_lidar_sim.core.raycast.actor_casting import place_sphere, reach_spheres
from ubot_lidar_sim.core.raycast.actor_scene import in_box
from ubot_lidar_sim.core.raycast.ray_times import firing_window, RayTimes
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

V_M_S = 10.0


def _world():
    """Return a far floor and a box driving at V_M_S along +y, 10 m ahead."""
    return World.from_dict({'objects': [
        {'name': 'floor', 'type': 'plane', 'size_m': [1, 1], 'pose': {'xyz': [0, 0, -50]}}],
        'actors': [{'name': 'box', 'type': 'box', 'size_m': [0.2, 1.0, 1.0],
                    'motion': {'pose': [10, 0, 1, 0, 0, 0], 'twist': [0, V_M_S, 0, 0, 0, 0]}}]},
        materials=MaterialTable.load())


def _blocks(world, n):
    """Return the VLP-16's column-block simulators (n blocks) in world."""
    cfg = effective_config('lidar_3d', overrides={'preset': 'velodyne_vlp16', 'sub_rays': 7,
                                                  'column_blocks': n})
    return LidarSimulator(cfg, world, world.materials).blocks


def test_a_sweeps_window_is_what_its_rays_give_and_no_cast_scans_them_for_it():
    block = _blocks(_world(), 2)[0]
    every = block.ray_times(3.0)
    lo, hi = firing_window(every)
    # The VLP-16 fires its 16 lasers 2.304 us apart (User Manual 63-9243 Rev D, p. 62; the
    # preset velodyne_vlp16.yaml): 0 to 34.56 us after their column.
    assert lo == 0.0 and abs(hi - 15 * 2.304e-6) < 1e-9
    assert firing_window(every._replace(window_s=None)) == (lo, hi)
    # A cast of a few beams carries the sweep's window (its rays need not be scanned).
    assert firing_window(block.ray_times(3.0, np.array([0, 5]))) == (lo, hi)


def test_a_given_window_grows_the_spheres_by_the_actors_motion_over_it():
    world = _world()
    n = 4
    still = RayTimes(np.zeros(n), np.zeros(n, np.int64), np.zeros(1))
    wide = still._replace(window_s=(0.0, 0.01))
    r0 = np.sqrt(world.actor_frame(n, still).spheres[0, 3, 0])
    r1 = np.sqrt(world.actor_frame(n, wide).spheres[0, 3, 0])
    # bound: V_M_S x 0.01 s = 0.1 m, the radii of float64 squares within 1e-12 m
    assert abs(r1 - r0 - V_M_S * 0.01) < 1e-12


def test_every_column_block_of_a_sweep_keeps_its_posed_spheres():
    world = _world()
    blocks = _blocks(world, 4)
    times = [b.ray_times(1.0) for b in blocks]
    first = [world.actor_frame(t.time_s.size, t).spheres for t in times]
    assert all(f.shape == (b.beams.columns, 4, 1) for f, b in zip(first, blocks))
    # Block by block again (the probes and refinements after the centres): no block re-posed.
    again = [world.actor_frame(t.time_s.size, t).spheres for t in times]
    assert all(a is f for a, f in zip(again, first))
    # The next sweep's columns are other times: posed anew, the box 0.1 s further along +y.
    later = blocks[0].ray_times(1.1)
    moved = world.actor_frame(later.time_s.size, later).spheres
    assert moved is not first[0]
    # bound: float64 poses of a 10 m/s twist over 0.1 s, within 1e-9 m
    assert np.allclose(moved[:, 1] - first[0][:, 1], V_M_S * 0.1, rtol=0, atol=1e-9)


def test_a_ray_enters_a_box_unless_it_passes_beside_or_the_box_is_behind_it():
    o = np.array([[-5.0, 0, 0], [-5, 2, 0], [5, 0, 0], [0, 0, 0], [-5, 0.5, 0], [-5, 1.5, 1.5]])
    d = np.array([[1.0, 0, 0], [1, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0], [1, -1, 0]])
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    lo, hi = np.full((6, 3), -1.0), np.full((6, 3), 1.0)
    # through; beside (y = 2, parallel); behind; from inside; on a face plane within its
    # bounds (y = 0.5 < 1); diagonal passing above (z = 1.5 > 1)
    assert list(enters_box(o, d, lo, hi)) == [True, False, False, True, True, False]


@numba.njit(error_model='numpy')       # in_box divides by a direction's 0 (inf)
def enters_box(o, d, lo, hi):
    """Return (n,) actor_scene.in_box of each ray o, d (n, 3) and box lo, hi (n, 3)."""
    out = np.empty(o.shape[0], np.bool_)
    for i in range(o.shape[0]):
        out[i] = in_box(o[i], d[i], lo[i], hi[i])
    return out


def _enters_box_numpy(o, d, lo, hi):
    """Return the plain-numpy slab test of actor_scene.in_box: (n,) bool."""
    with np.errstate(divide='ignore', invalid='ignore'):
        inv = 1.0 / d
        s1, s2 = (lo - o) * inv, (hi - o) * inv
    near = np.fmin(s1, s2).max(axis=1)
    far = np.fmax(s1, s2).min(axis=1)
    return (far >= near) & (far >= 0.0)


def test_the_box_kernel_matches_its_numpy_form_with_flat_rays_and_faces():
    rng = np.random.default_rng(8)
    o = rng.uniform(-3, 3, (6000, 3)).round(0)          # many origins on the faces' planes
    d = rng.normal(size=(6000, 3))
    d[::5, rng.integers(0, 3)] = 0.0                    # parallel to a pair of faces
    d[1::5, :2] = 0.0
    d[2::5, 0] = -0.0
    lo, hi = np.full((6000, 3), -1.0), np.full((6000, 3), 1.0)
    lo[::7, 2] = hi[::7, 2] = 0.0                       # a flat box
    got = enters_box(o, d, lo, hi)
    # bound: exact, the same float64 divisions, products and comparisons in both forms
    np.testing.assert_array_equal(got, _enters_box_numpy(o, d, lo, hi))
    assert 500 < got.sum() < 5500


def test_the_sphere_kernel_places_what_numpy_places():
    rng = np.random.default_rng(3)
    n_t, n_c = 40, 15
    pose = WorldTwist(pose_matrix_deg([3, -2, 1], [10, 20, 30]), [1, 2, 3, 0.5, 0.2, 0.1])(
        rng.uniform(0, 2, n_t))
    back = rng.integers(0, n_t, (3, n_c))               # offsets -1, 0, +1 of each column
    centre, radius = np.array([0.5, -0.2, 0.75]), 1.5
    got = np.empty((n_c, 4))
    place_sphere(np.ascontiguousarray(pose), centre, radius, back, 1, got)
    at = (pose[:, :3, :3] @ centre + pose[:, :3, 3])[back]           # (3, C, 3)
    grow = np.linalg.norm(at - at[1], axis=2).max(axis=0)
    # bound: float64 sums of a few terms of metres, within 1e-12 m (squares: 1e-11 m^2)
    np.testing.assert_allclose(got[:, :3], at[1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[:, 3], (radius + grow) ** 2, rtol=0, atol=1e-11)
    assert np.all(grow > 0)


def test_a_ray_going_on_along_its_line_meets_the_spheres_its_first_cast_kept():
    rng = np.random.default_rng(6)
    m, cols, n_a = 5000, 20, 5
    d = rng.normal(size=(m, 3))
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    o = rng.uniform(-1, 1, (m, 3))
    column = rng.integers(0, cols, m)
    centre = rng.uniform(-5, 5, (cols, 3, n_a))
    spheres = np.ascontiguousarray(np.concatenate(
        [centre, rng.uniform(0.25, 4.0, (cols, 1, n_a))], axis=1))
    live, rows = np.ones(n_a, bool), np.arange(m)
    lines = np.zeros(m, np.uint64)
    # The first cast stops at a hit 2 m ahead: the pairs before it, and the bits of every line.
    first = np.c_[o, d].astype(np.float32)
    reach_spheres(first, rows, column, spheres, np.full(m, 2.0), live, lines, True)
    assert 0 < np.count_nonzero(lines) < m
    # The rays going on from there (every other one), with no hit ahead.
    on = rows[::2]
    later = np.c_[o[on] + 2.0 * d[on], d[on]].astype(np.float32)
    limit = np.full(on.size, np.inf)
    none = np.zeros(0, np.uint64)
    kept = reach_spheres(later, on, column, spheres, limit, live, lines, False)
    every = reach_spheres(later, on, column, spheres, limit, live, none, True)
    assert kept[0].size > 100
    assert np.array_equal(kept[0], every[0]) and np.array_equal(kept[1], every[1])
