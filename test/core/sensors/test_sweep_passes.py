"""
The compiled sweep loops (sensors/sweep_passes.py) against their plain-numpy references.

Stated tolerance: bit for bit (the kernels keep numpy's operation order, + and * only); the
ground-relief kernel's c^-1.5 is 1 / (c sqrt(c)): relative 1e-14 of the range.
"""

import numpy as np
from tolerances import F64_EPS, F64_LIBM_REL

from ubot_lidar_sim.core.raycast.layer_kernel import first_rays
from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE
from ubot_lidar_sim.core.sensors.sweep_passes import (min_per_beam, pack_points, rotate_sub_rays,
                                                      rough_ranges)


def rotate_reference(dx, dy, dz, col):
    """Turn sub-ray planes (R, C, S) by per-column poses as lidar._part_rays did with numpy."""
    dirs = np.empty(dx.shape + (3,))
    tmp = np.empty(dx.shape)
    for i in range(3):
        out = dirs[..., i]
        np.multiply(dx, col[None, :, None, i, 0], out=tmp)
        np.multiply(dy, col[None, :, None, i, 1], out=out)
        out += tmp
        np.multiply(dz, col[None, :, None, i, 2], out=tmp)
        out += tmp
    return dirs.reshape(-1, 3)


def min_reference(n_beams, beam, values, mask):
    """Minimum per beam from inf (np.minimum.at), over the rows of mask."""
    out = np.full(n_beams, np.inf)
    with np.errstate(invalid='ignore'):         # NaN values: their beams read NaN
        np.minimum.at(out, beam[mask], values[mask])
    return out


def test_sub_ray_rotation_kernel_gives_the_bits_of_the_numpy_rotation():
    rng = np.random.default_rng(1)
    planes = rng.normal(size=(3, 5, 40, 7))
    poses = np.zeros((40, 4, 4))
    for c in range(40):
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        poses[c, :3, :3], poses[c, :3, 3], poses[c, 3, 3] = q, rng.normal(size=3), 1.0
    ref = rotate_reference(*planes, poses)
    origins, dirs = rotate_sub_rays(*planes, poses, 0, ref.shape[0])
    np.testing.assert_array_equal(dirs, ref)
    np.testing.assert_array_equal(origins, np.tile(np.repeat(poses[:, :3, 3], 7, axis=0), (5, 1)))
    np.testing.assert_array_equal(rotate_sub_rays(*planes, poses, 37, 901)[1], ref[37:901])


def test_the_rotation_fills_the_first_cast_rays_as_first_rays_would():
    rng = np.random.default_rng(4)
    planes = rng.normal(size=(3, 2, 6, 1))
    poses = np.tile(np.eye(4), (6, 1, 1))
    poses[:, :3, 3] = rng.normal(size=(6, 3))
    poses[2, 1, 3] = -0.0                       # a -0.0 origin turns +0.0, as first_rays does
    rays32 = np.empty((12, 6), np.float32)
    origins, dirs = rotate_sub_rays(*planes, poses, 0, 12, rays32)
    ref_rays, ref_o = first_rays(*rotate_sub_rays(*planes, poses, 0, 12))
    np.testing.assert_array_equal(rays32, ref_rays)
    np.testing.assert_array_equal(origins, ref_o)
    assert not np.signbit(origins[2, 1]) and not np.signbit(rays32[2, 1])
    np.testing.assert_array_equal(dirs, rotate_sub_rays(*planes, poses, 0, 12)[1])


def test_min_per_beam_kernel_equals_minimum_at_with_nan_and_empty_beams():
    rng = np.random.default_rng(2)
    beam = rng.integers(0, 500, 6000)
    values = rng.uniform(0.0, 90.0, 6000)
    values[::997] = np.nan
    mask = rng.random(6000) < 0.7
    np.testing.assert_array_equal(min_per_beam(600, beam, values, mask, beam, 1),
                                  min_reference(600, beam, values, mask))
    np.testing.assert_array_equal(min_per_beam(600, beam, values, np.ones(1, bool), beam, 1),
                                  min_reference(600, beam, values, np.ones(6000, bool)))
    ray = rng.integers(0, 7 * 500, 6000)                # 7 sub-rays: the centre rays only
    np.testing.assert_array_equal(min_per_beam(600, ray // 7, values, np.ones(1, bool), ray, 7),
                                  min_reference(600, ray // 7, values, ray % 7 == 0))


def test_point_packing_kernel_gives_the_records_of_the_numpy_packing():
    rng = np.random.default_rng(3)
    n_b, n_p = 300, 1000
    dir_sensor = rng.normal(size=(n_b, 3))
    ring = rng.integers(0, 16, n_b).astype(np.uint16)
    column = rng.integers(0, 20, n_b)
    col_t, ring_t = rng.uniform(0, 0.1, 20), rng.uniform(0, 1e-5, 16)
    beam = np.sort(rng.integers(0, n_b, n_p))
    cols = {'range': rng.uniform(0.5, 90, n_p), 'intensity': rng.integers(0, 256, n_p),
            'reflectivity': rng.uniform(0, 2, n_p), 'signal': rng.integers(0, 65535, n_p),
            'return_index': rng.integers(1, 3, n_p), 'return_count': rng.integers(1, 3, n_p),
            'return_flags': rng.integers(0, 16, n_p), 'material': rng.integers(0, 18, n_p),
            'class_id': rng.integers(0, 20, n_p), 'instance_id': rng.integers(0, 1025, n_p)}
    cols = {k: v.astype(FULL_DTYPE[k]) if k != 'range' else v for k, v in cols.items()}
    ref = np.empty(n_p, FULL_DTYPE)
    xyz = dir_sensor[beam] * cols['range'][:, None]
    ref['x'], ref['y'], ref['z'] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    ref['ring'] = ring[beam]
    ref['time'] = col_t[column[beam]] + ring_t[ring[beam]]
    for k, v in cols.items():
        ref[k] = v
    got = np.empty(n_p, FULL_DTYPE)
    pack_points(got, dir_sensor, ring, column, col_t, ring_t, beam, cols['range'],
                cols['intensity'], cols['reflectivity'], cols['signal'], cols['return_index'],
                cols['return_count'], cols['return_flags'], cols['material'], cols['class_id'],
                cols['instance_id'])
    assert got.tobytes() == ref.tobytes()
    # A sweep without actors passes one 0 for every point.
    pack_points(got, dir_sensor, ring, column, col_t, ring_t, beam, cols['range'],
                cols['intensity'], cols['reflectivity'], cols['signal'], cols['return_index'],
                cols['return_count'], cols['return_flags'], cols['material'], cols['class_id'],
                np.zeros(1, np.uint16))
    ref['instance_id'] = 0
    assert got.tobytes() == ref.tobytes()


def test_ground_relief_kernel_moves_only_ground_hits_by_the_numpy_sigma():
    rng = np.random.default_rng(3)
    h, n_beams = 50000, 9000
    range_m = rng.uniform(1.0, 60.0, h)
    ground = rng.random(h) < 0.5
    material = rng.integers(0, 17, h).astype(np.uint8)
    cos = rng.uniform(-1.0, 1.0, h).astype(np.float32)
    cos[:10] = 0.0                                           # floored at 0.01
    roughness = rng.uniform(0.0, 0.02, 17)
    z = rng.standard_normal(n_beams)
    beam = rng.integers(0, n_beams, h)
    got = rough_ranges(range_m, ground, material, cos, roughness, z, beam)
    ref = range_m.copy()
    sigma = roughness[material[ground]] * np.maximum(np.abs(cos[ground].astype(np.float64)),
                                                     0.01) ** -1.5     # the numpy rule
    ref[ground] += sigma * z[beam[ground]]
    np.testing.assert_array_equal(got[~ground], range_m[~ground])
    # bound: the pow of each side within F64_LIBM_ULPS, 4 roundings more in sigma z, then the
    # sum rounded once on each side (a near-zero sum would defeat a relative tolerance).
    step = np.abs(ref - range_m)
    bound = (F64_LIBM_REL + 4 * F64_EPS) * step + 2 * F64_EPS * np.abs(ref)
    assert np.all(np.abs(got - ref) <= bound)
    assert np.abs(got - range_m)[ground].max() > 0.01 and got is not range_m
