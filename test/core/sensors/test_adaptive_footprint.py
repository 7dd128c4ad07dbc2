"""footprint adaptive: centre sub-rays first, the others only where the footprint straddles."""

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.worker import ScanProcess
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.core.sensors.adaptive_footprint import plane_points
from ubot_lidar_sim.core.sensors.column_blocks import merge_columns
from ubot_lidar_sim.core.sensors.footprint_rules import (
    first_hits, KEEP, PROBE, probes_agree, REFINE, refine_beams)
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.sensors.sweep_passes import rotate_rows, rotate_sub_rays
from ubot_lidar_sim.core.world.world import World

WALL = """frame: map
objects:
  - {name: wall, type: box, size_m: [0.2, 40, 10], pose: {xyz: [10.1, 0, 5]}, material: concrete}
"""
# A near wall whose edge is at y = 5 mm (0.5 mrad left of the beam along +x at 10 m), before a
# far wall at 15 m: the footprint of the beam along +x straddles the edge.
STEP = """frame: map
objects:
  - {name: near, type: box, size_m: [0.2, 20, 10], pose: {xyz: [10.1, -9.995, 5]},
     material: concrete}
  - {name: far, type: box, size_m: [0.2, 40, 10], pose: {xyz: [15.1, 0, 5]}, material: building}
"""
QUIET = {'noise_enabled': False, 'sub_rays': 7, 'min_range_m': 0.5,
         'return_mode': 'triple_first_strongest_last', 'motion_distortion': False}
STILL = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 0]))
PATH = BodyTwist(pose_matrix_deg([0, -12, 1.6], [0, 0, 10]),
                 twist_from_cli(2.0, 0.0, 0.0, 0.0, 0.0, 15.0))
RAIN = Weather(rain_mm_h=20.0, visibility_m=1500.0)
DEMO_CFG = {'channels': 16, 'horizontal_samples': 360, 'sub_rays': 7, 'seed': 3,
            'return_mode': 'dual_strongest_last', 'max_range_m': 60.0, 'footprint': 'adaptive'}


class CountingCaster(Open3dCaster):
    """The open3d caster, counting the rays it casts (cast_rays is the real one)."""

    def __init__(self, geometries, threads=0):
        super().__init__(geometries, threads)
        self.rays = 0

    def cast_rays(self, rays, ignored=frozenset()):
        self.rays += len(rays)
        return super().cast_rays(rays, ignored)


def _world(tmp_path_factory, text, materials):
    path = tmp_path_factory.mktemp('w') / 'world.yaml'
    path.write_text(text)
    return World.load(str(path), materials, caster=CountingCaster)


def _sweeps(world, materials, **cfg):
    """Return {footprint: (ScanResult, rays cast)} of one still sweep in both modes."""
    out = {}
    for mode in ('exhaustive', 'adaptive'):
        sim = LidarSimulator(LidarConfig(**QUIET, **cfg, footprint=mode), world, materials)
        world.caster.rays = 0
        res = sim.scan(STILL, 0.0)
        out[mode] = (res, world.caster.rays)
    return out


def _beam_points(res, beams):
    return res.points[np.isin(res.beam, beams)]


def test_a_flat_wall_casts_one_ray_per_inner_beam_and_keeps_the_exhaustive_echo(
        tmp_path_factory, materials):
    world = _world(tmp_path_factory, WALL, materials)
    # 5 rings x 9 columns 1 deg apart on the wall at 10 m; the first and last column have no
    # neighbour on one side (the field of view's ends) and are always refined.
    cfg = {'channels': 5, 'vertical_fov_up_deg': 4.0, 'vertical_fov_down_deg': 4.0,
           'horizontal_samples': 9, 'horizontal_fov_deg': 8.0}
    both = _sweeps(world, materials, **cfg)
    assert both['exhaustive'][1] == 45 * 7
    assert both['adaptive'][1] == 45 + 2 * 5 * 6        # centres, then the end columns
    inner = np.array([r * 9 + c for r in range(5) for c in range(1, 8)])
    ex, ad = (_beam_points(both[m][0], inner) for m in ('exhaustive', 'adaptive'))
    assert len(ex) == len(ad) == inner.size              # one echo per beam in both
    # bound: the hexagon's ranges and powers differ from the centre's at second order in the
    # 1.05 mrad sub-ray offset (rho^2 / cos^2 = 1.1e-6 at <= 6 deg incidence: 1.1e-5 m at 10 m),
    # plus 2 f32 hit bounds (3.2e-5 m each, tolerances.f32_hit_bound_m): 1e-4 m.
    np.testing.assert_allclose(ad['range'], ex['range'], atol=1e-4)
    # bound: the same second-order terms on the power (a few x 1.1e-6 relative): rtol 1e-5.
    np.testing.assert_allclose(ad['reflectivity'], ex['reflectivity'], rtol=1e-5)
    np.testing.assert_array_equal(ad['material'], ex['material'])


def test_a_beam_on_an_edge_casts_every_sub_ray_and_gives_the_exhaustive_dual_return(
        tmp_path_factory, materials):
    world = _world(tmp_path_factory, STEP, materials)
    # 3 rings 2 deg apart, 17 columns 0.5 deg apart: column 8 looks along +x, on the edge.
    cfg = {'channels': 3, 'vertical_fov_up_deg': 2.0, 'vertical_fov_down_deg': 2.0,
           'horizontal_samples': 17, 'horizontal_fov_deg': 8.0}
    both = _sweeps(world, materials, **cfg)
    edge = np.array([r * 17 + 8 for r in range(3)])
    ex, ad = (_beam_points(both[m][0], edge) for m in ('exhaustive', 'adaptive'))
    assert np.all(ex['return_count'] == 2)                # near wall and far wall
    assert ex.tobytes() == ad.tobytes()                    # the same sub-rays, the same echoes
    # Columns 8 and 9 (each has the other off its plane) and the two end columns are refined;
    # the others are one cast each.
    assert both['exhaustive'][1] == 51 * 7
    assert both['adaptive'][1] == 51 + 6 * 3 * 4


def test_adaptive_blocks_computed_apart_and_in_any_order_merge_into_the_sweep(
        demo_world, materials):
    world = demo_world
    cfg = LidarConfig(**DEMO_CFG, column_blocks=3)
    sim = LidarSimulator(cfg, world, materials)
    whole = sim.scan(PATH, 0.5, RAIN, 5)
    parts = {j: sim.scan_blocks(PATH(sim.block_pose_times(0.5, j, j + 1)),
                                Sweep(0.5, RAIN, 5), j, j + 1) for j in (2, 0, 1)}
    merged, _ = merge_columns([parts[j] for j in (2, 0, 1)],
                              [sim.block_columns[j] for j in (2, 0, 1)], cfg.channels)
    assert len(whole.points) > 2000
    assert merged.points.tobytes() == whole.points.tobytes()
    again = LidarSimulator(cfg, world, materials).scan(PATH, 0.5, RAIN, 5)
    assert again.points.tobytes() == whole.points.tobytes()


def test_adaptive_blocks_in_two_compute_processes_are_byte_identical_to_in_process(
        demo_world, materials):
    world = demo_world
    cfg = LidarConfig(**DEMO_CFG, column_blocks=4)
    sim = LidarSimulator(cfg, world, materials)
    proc = ScanProcess(cfg, world, materials, workers=2)
    try:
        for k in range(2):
            stamp = 0.1 * k
            here = sim.scan(PATH, stamp, RAIN, k)
            there = proc.scan(PATH(sim.pose_times(stamp)), Sweep(stamp, RAIN, k))
            assert here.points.tobytes() == there.points.tobytes()
            np.testing.assert_array_equal(here.beam, there.beam)
    finally:
        proc.close()


def test_adaptive_keeps_the_echo_counts_and_edge_dual_returns_of_exhaustive(
        demo_world, materials):
    # The smaller fidelity check of benchmarks/footprint_fidelity.py: the demo world from four
    # poses, a VLP-16 grid with 600 columns.
    world = demo_world
    counts = {}
    for mode in ('exhaustive', 'adaptive'):
        total, edge_dual = np.zeros(4), np.zeros(2)
        for seed in range(4):
            rng = np.random.default_rng([29, seed])
            a = rng.uniform(0.0, 2.0 * np.pi)
            pose = BodyTwist(pose_matrix_deg([12 * np.cos(a), 12 * np.sin(a), 1.8],
                                             [0.0, 0.0, rng.uniform(-180.0, 180.0)]))
            cfg = LidarConfig(preset='velodyne_vlp16', channels=16, horizontal_samples=600,
                              vertical_fov_up_deg=15.0, vertical_fov_down_deg=15.0,
                              sub_rays=7, seed=seed, footprint=mode,
                              return_mode='triple_first_strongest_last', column_blocks=1)
            res = LidarSimulator(cfg, world, materials).scan(pose, 0.0)
            per_beam = np.bincount(res.beam, minlength=res.n_beams)
            total += np.bincount(np.minimum(per_beam, 3), minlength=4)
            r = res.hit_range_m.reshape(16, -1)
            with np.errstate(invalid='ignore'):
                step = np.abs(r - np.roll(r, 1, axis=1)) > 1.0
            edge = (step | (np.isfinite(r) != np.isfinite(np.roll(r, 1, axis=1)))).ravel()
            edge_dual += [edge.sum(), (edge & (per_beam >= 2)).sum()]
        counts[mode] = (total / total.sum(), edge_dual[1] / edge_dual[0])
    # bound: the tolerances of benchmarks/footprint_fidelity.py (docs/physics.md, "Adaptive
    # footprint"): half a percentage point of the beams per echo count, 3 points of the
    # dual-return share at edges.
    np.testing.assert_allclose(counts['adaptive'][0], counts['exhaustive'][0], atol=0.005)
    assert abs(counts['adaptive'][1] - counts['exhaustive'][1]) <= 0.03


def test_rotate_rows_gives_the_bits_of_rotate_sub_rays():
    rng = np.random.default_rng(5)
    dx, dy, dz = (np.ascontiguousarray(rng.normal(size=(3, 4, 7))) for _ in range(3))
    poses = rng.normal(size=(4, 4, 4))
    poses[1, 0, 3] = -0.0                          # a -0.0 origin turns +0.0 in both
    full32 = np.empty((3 * 4 * 7, 6), np.float32)
    o_all, d_all = rotate_sub_rays(dx, dy, dz, poses, 0, 3 * 4 * 7, full32)
    beams = np.array([0, 5, 11, 6, 5], np.int64)
    subs = np.array([3, 0, 6, 2, 1], np.int64)               # any (beam, sub-ray) pairs
    pair32 = np.empty((5, 6), np.float32)
    o_pair, d_pair = rotate_rows(dx, dy, dz, poses, beams, subs, pair32)
    rows = beams * 7 + subs
    assert o_pair.tobytes() == o_all[rows].tobytes()
    assert d_pair.tobytes() == d_all[rows].tobytes()
    assert pair32.tobytes() == full32[rows].tobytes()


def _plane_points_numpy(o_sub, d_sub, origins, dirs, beams, r, per_beam):
    z_hit = origins[beams, 2] + dirs[beams, 2] * r
    with np.errstate(divide='ignore', invalid='ignore'):
        t = (z_hit[:, None] - o_sub[:, 2].reshape(-1, per_beam)) / d_sub[:, 2].reshape(
            -1, per_beam)
    t = np.where(np.isfinite(t) & (t > 0.0), t, r[:, None]).reshape(-1)
    centre_pts = origins[beams] + dirs[beams] * r[:, None]
    return np.where(np.isfinite(t)[:, None], o_sub + d_sub * t[:, None],
                    np.repeat(centre_pts, per_beam, axis=0))


def test_plane_points_matches_its_numpy_reference():
    # Sub-rays that meet the plane ahead, run parallel to it (dz 0), meet it behind (t < 0),
    # and a beam whose centre range is not finite: the same bits as the numpy reference.
    rng = np.random.default_rng(11)
    origins, dirs = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    beams = np.array([4, 0, 2, 5], np.int64)
    r = np.array([3.0, 12.5, np.inf, 0.7])
    o_sub = rng.normal(size=(4 * 6, 3))
    d_sub = rng.normal(size=(4 * 6, 3))
    d_sub[1, 2] = 0.0
    d_sub[7, 2] = -d_sub[7, 2]
    got = plane_points(o_sub, d_sub, origins, dirs, beams, r, 6)
    want = _plane_points_numpy(o_sub, d_sub, origins, dirs, beams, r, 6)
    assert got.tobytes() == want.tobytes()
    # By hand: the parallel sub-ray samples its own point at its beam's centre range (3 m);
    # a beam whose centre range is infinite has no plane, its sub-rays no finite point.
    assert np.array_equal(got[1], o_sub[1] + d_sub[1] * 3.0)
    assert not np.isfinite(got[12:18]).any()


def _first_hits_numpy(n_beams, ray, range_m, cos):
    count = np.bincount(ray, minlength=n_beams)
    start = np.zeros(n_beams, np.int64)
    first = np.r_[True, ray[1:] != ray[:-1]] if ray.size else np.zeros(0, bool)
    last = np.r_[ray[1:] != ray[:-1], True] if ray.size else np.zeros(0, bool)
    start[ray[first]] = np.flatnonzero(first)
    r0, r1, c = np.full(n_beams, np.inf), np.full(n_beams, np.inf), np.ones(n_beams)
    r0[ray[first]], c[ray[first]] = range_m[first], np.abs(cos[first])
    r1[ray[last]] = range_m[last]
    return start, count, r0, r1, c


def test_first_hits_matches_its_numpy_reference():
    rng = np.random.default_rng(7)
    ray = np.sort(rng.integers(0, 40, 90))
    range_m, cos = rng.uniform(1, 50, 90), rng.uniform(-1, 1, 90)
    for got, want in zip(first_hits(50, ray, range_m, cos),
                         _first_hits_numpy(50, ray, range_m, cos)):
        assert got.tobytes() == want.astype(got.dtype).tobytes()


def _refine_numpy(start, count, r0, r1, cos, obj, material, nb, coef, residual, edge, dense,
                  step_m, grazing_m, offset_rad, cos_floor):
    """Return refine_beams' verdicts computed with numpy (a beam's layers compared as tuples)."""
    n = len(r0)
    layers = [tuple(zip(obj[s:s + c], material[s:s + c])) for s, c in zip(start, count)]
    hit = count > 0
    ok = nb >= 0
    q = np.where(ok, nb, 0)
    hit_miss = ok & (hit[q] != hit[:, None])
    other = ok & dense & np.array([[layers[b] != layers[q[b, k]] for k in range(4)]
                                   for b in range(n)])
    refine = edge | np.any((dense | (np.arange(4) < 2)) & hit_miss, axis=1) | np.any(
        other, axis=1)
    probe = np.any(~dense[:, 2:] & hit_miss[:, 2:], axis=1)
    with np.errstate(divide='ignore', invalid='ignore'):
        spread = np.where(cos > 0.0, 2.0 * r0 * offset_rad * np.sqrt(np.maximum(
            1.0 - cos * cos, 0.0)) / cos, np.inf)
        tol = np.maximum(step_m, spread) + r0 * np.max(residual, axis=1) \
            / np.maximum(cos, cos_floor)
        off = np.zeros((n, 2), bool)
        for axis in (0, 1):
            a, b = coef[:, 2 * axis], coef[:, 2 * axis + 1]
            p, m = q[:, 2 * axis], q[:, 2 * axis + 1]
            plane = ~np.isnan(a) & ~np.isnan(b) & hit[p] & hit[m]
            for r, same in ((r0, True), (r1, (count > 1) & (count[p] == count)
                                         & (count[m] == count))):
                w = a / r[p] + b / r[m]
                off[:, axis] |= plane & same & (~(w > 0.0) | (np.abs(1.0 / w - r) > tol))
    grazing = hit & (spread >= grazing_m)
    plane_refine = off[:, 0] | (off[:, 1] & dense[:, 2] & dense[:, 3])
    geometry = ~refine & hit
    refine |= geometry & (grazing | plane_refine)
    probe |= geometry & ~grazing & off[:, 1]
    return np.where(refine, REFINE, np.where(probe, PROBE, KEEP)).astype(np.int8)


def test_refine_beams_matches_its_numpy_reference():
    rng = np.random.default_rng(11)
    n, h = 300, 400
    ray = np.sort(np.r_[np.arange(20, n), rng.integers(0, n, h - n + 20)])   # 20 beams miss
    range_m = 5.0 + np.where(rng.random(h) < 0.1, rng.uniform(0, 2, h), 1e-3 * rng.random(h))
    start, count, r0, r1, cos = first_hits(n, ray, range_m, rng.uniform(0.02, 1, h))
    obj = (rng.random(h) < 0.05).astype(np.int32)
    material = np.zeros(h, np.uint8)
    nb = rng.integers(-1, n, (n, 4))
    coef = np.where(rng.random((n, 4)) < 0.1, np.nan, 0.5)
    residual = rng.uniform(0, 1e-4, (n, 2))
    edge = rng.random(n) < 0.05
    dense = rng.random((n, 4)) < 0.5
    args = (start, count, r0, r1, cos, obj, material, nb, coef, residual, edge, dense, 0.0375,
            0.1875, 1.05e-3, 0.05)
    got = refine_beams(*args)
    np.testing.assert_array_equal(got, _refine_numpy(*args))
    assert set(np.unique(got)) == {KEEP, PROBE, REFINE}     # every verdict occurs


def _probes_agree_numpy(n_probe, ray, range_m, obj, material, probe, start, count, r_first,
                        cos, c_obj, c_mat, step_m, offset_rad, per_beam):
    """Return probes_agree's answer computed with numpy, one probe ray at a time."""
    agree = np.ones(n_probe, bool)
    with np.errstate(invalid='ignore'):        # inf x 0 of beams without a surface
        spread = np.where(cos > 0.0, 2.0 * r_first * offset_rad * np.sqrt(np.maximum(
            1.0 - cos * cos, 0.0)) / np.where(cos > 0.0, cos, 1.0), np.inf)
    for j in range(n_probe * per_beam):
        k, rows = j // per_beam, np.flatnonzero(ray == j)
        b = probe[k]
        c_rows = start[b] + np.arange(count[b])
        same = rows.size == count[b] and np.array_equal(obj[rows], c_obj[c_rows]) \
            and np.array_equal(material[rows], c_mat[c_rows])
        if not same or (rows.size and abs(range_m[rows[0]] - r_first[b])
                        > max(step_m, spread[b])):
            agree[k] = False
    return agree


def test_probes_agree_matches_its_numpy_reference():
    rng = np.random.default_rng(13)
    n, h = 60, 90
    c_ray = np.sort(rng.integers(0, n, h))
    start, count, r_first, _, cos = first_hits(n, c_ray, 5.0 + rng.random(h),
                                               rng.uniform(0.1, 1, h))
    c_obj = rng.integers(0, 2, h).astype(np.int32)
    c_mat = np.zeros(h, np.uint8)
    probe = np.flatnonzero(count > 0)[:20]
    # Probe rays copy their centre's layers, then some lose a surface or move or change.
    rows = [(2 * k + j, start[b] + i) for k, b in enumerate(probe) for j in range(2)
            for i in range(count[b]) if rng.random() > 0.05]
    ray = np.array([r for r, _ in rows], np.int64)
    src = np.array([c for _, c in rows], np.int64)
    range_m = r_first[c_ray[src]] + np.where(rng.random(src.size) < 0.1, 0.5, 0.0)
    obj = np.where(rng.random(src.size) < 0.05, 1 - c_obj[src], c_obj[src]).astype(np.int32)
    args = (probe.size, ray, range_m, obj, c_mat[src], probe, start, count, r_first, cos, c_obj,
            c_mat, 0.0375, 1.05e-3, 2)
    got = probes_agree(*args)
    np.testing.assert_array_equal(got, _probes_agree_numpy(*args))
    assert 0 < got.sum() < probe.size                # both outcomes occur


def test_a_sensor_on_the_ground_gets_the_exhaustive_sweep_without_dividing_by_a_zero_range(
        flat_world):
    # The sensor's origin lies on the z = 0 ground: neighbour ranges of 0 give no plane, so
    # those beams are refined (a ZeroDivisionError in the compiled plane test before).
    world = flat_world
    clouds = []
    for footprint in ('adaptive', 'exhaustive'):
        cfg = LidarConfig(channels=16, horizontal_samples=360, footprint=footprint)
        sim = LidarSimulator(cfg, world, world.materials)
        poses = np.broadcast_to(np.eye(4), (len(sim.pose_times(0.1)), 4, 4)).copy()
        clouds.append(sim.scan(lambda t: poses[:len(t)], 0.1, None, 0).points)
    assert clouds[0].size == clouds[1].size
    assert np.array_equal(np.sort(clouds[0]['range']), np.sort(clouds[1]['range']))
