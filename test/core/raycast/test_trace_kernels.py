"""
The compiled trace kernels against their plain-numpy references (stated tolerance: bit for bit).

The kernels keep numpy's operation order and use only +, -, *, / and sqrt, which IEEE 754 rounds
exactly, so they must give the very bits of the numpy code they replaced.
"""

import numpy as np

from ubot_lidar_sim.core.raycast.ground_texture import _tilt, ground_albedo, GroundTexture
from ubot_lidar_sim.core.raycast.quadrics import quadric_hit


def _dot3(a, b):
    out = a[:, 0] * b[:, 0]
    out += 0.0
    out += a[:, 1] * b[:, 1]
    out += a[:, 2] * b[:, 2]
    return out


def quadric_fix_reference(o, d, t, normal, sph, center, axis, radius):
    """Move facet hits onto the quadric: the numpy code the kernel replaced (rows: hits)."""
    oc = o - center
    ax = np.where(sph[:, None], 0.0, axis)
    oc_p = oc - _dot3(oc, ax)[:, None] * ax
    d_p = d - _dot3(d, ax)[:, None] * ax
    a = _dot3(d_p, d_p)
    b = _dot3(oc_p, d_p)
    c = _dot3(oc_p, oc_p) - radius ** 2
    disc = b * b - a * c
    good = (disc >= 0.0) & (a > 1e-12)
    sq = np.sqrt(np.maximum(disc, 0.0))
    a_safe = np.where(good, a, 1.0)
    r1, r2 = (-b - sq) / a_safe, (-b + sq) / a_safe
    root = np.where(np.abs(r1 - t) <= np.abs(r2 - t), r1, r2)
    good &= (np.abs(root - t) < 0.1 * radius + 1e-3) & (root >= 0.0)
    t = np.where(good, root, t)
    radial = oc_p + t[:, None] * d_p
    radial /= np.maximum(np.sqrt(_dot3(radial, radial)), 1e-12)[:, None]
    return t, np.where(good[:, None], radial, normal)


def tilt_reference(normals, dirs, cos_d, sin_d):
    """Tilt normals as the replaced numpy code did; returns them and |cos| against them."""
    dn = _dot3(dirs, normals)
    tangent = dirs - dn[:, None] * normals
    length = np.sqrt(_dot3(tangent, tangent))
    ok = length > 1e-9
    tangent = np.where(ok[:, None], tangent / np.where(ok, length, 1.0)[:, None], 0.0)
    cos_d, sin_d = np.where(ok, cos_d, 1.0), np.where(ok, sin_d, 0.0)
    out = cos_d[:, None] * normals
    out += sin_d[:, None] * tangent
    return out, np.abs(_dot3(out, dirs))


def _unit(v):
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_the_quadric_kernel_gives_the_bits_of_the_numpy_fix():
    rng = np.random.default_rng(3)
    k = 5000
    center = rng.uniform(-5, 5, (k, 3))
    axis = _unit(rng.normal(size=(k, 3)))
    radius = rng.uniform(0.1, 3.0, k)
    sph = rng.random(k) < 0.5
    o = center + _unit(rng.normal(size=(k, 3))) * (radius * rng.uniform(1.5, 8.0, k))[:, None]
    d = _unit(center + rng.normal(size=(k, 3)) * radius[:, None] - o)
    ax = np.where(sph[:, None], 0.0, axis)
    oc = o - center
    oc_p, d_p = oc - _dot3(oc, ax)[:, None] * ax, d - _dot3(d, ax)[:, None] * ax
    a, b = _dot3(d_p, d_p), _dot3(oc_p, d_p)
    with np.errstate(invalid='ignore'):          # a few rays miss: NaN facet ranges stay NaN
        entry = (-b - np.sqrt(b * b - a * (_dot3(oc_p, oc_p) - radius ** 2))) / a
    t = entry + rng.normal(0.0, 0.02, k) * radius           # a facet near the surface
    normal = _unit(rng.normal(size=(k, 3)))
    t_ref, n_ref = quadric_fix_reference(o, d, t, normal, sph, center, axis, radius)
    got = np.array([quadric_hit(*o[i], *d[i], t[i], *normal[i], sph[i], *center[i], *axis[i],
                                radius[i]) for i in range(k)])
    assert np.sum(t_ref != t) > k // 2          # most hits move onto the surface
    np.testing.assert_array_equal(got[:, 0], t_ref)
    np.testing.assert_array_equal(got[:, 1:], n_ref)


def test_the_tilt_kernel_gives_the_bits_of_the_numpy_tilt():
    rng = np.random.default_rng(4)
    k = 4000
    n = _unit(rng.normal(size=(k, 3)))
    d = _unit(rng.normal(size=(k, 3)))
    d[:50] = n[:50]                              # along the normal: no plane of incidence
    delta = np.radians(rng.normal(0.0, 5.0, k))
    out, cos = _tilt(n, d, np.cos(delta), np.sin(delta))
    ref_out, ref_cos = tilt_reference(n, d, np.cos(delta), np.sin(delta))
    np.testing.assert_array_equal(out, ref_out)
    np.testing.assert_array_equal(cos, ref_cos)
    np.testing.assert_array_equal(out[:50], n[:50])


def test_cached_texture_equals_the_hash_inside_and_outside_the_grids():
    class Ground:
        vertices = np.array([[-3.0, -2.0, 0.0], [4.0, 5.0, 0.0]])

    texture = GroundTexture([Ground()], [5], [True])
    table = np.linspace(0.05, 0.4, 17)
    rng = np.random.default_rng(5)
    points = np.c_[rng.uniform(-6, 7, 3000), rng.uniform(-5, 8, 3000), np.zeros(3000)]
    mat = np.where(rng.random(3000) < 0.8, 5, 7).astype(np.uint8)     # 7: no grid, hashed
    cached = texture.albedo(points, mat, table)
    again = texture.albedo(points, mat, table)                         # now from the cache
    direct = ground_albedo(points, table[mat]).astype(np.float32)
    np.testing.assert_array_equal(cached, direct)
    np.testing.assert_array_equal(again, direct)


def test_first_rays_pack_float32_rays_and_turn_negative_zero_origins():
    from ubot_lidar_sim.core.raycast.layer_kernel import first_rays
    rng = np.random.default_rng(6)
    o, d = rng.normal(size=(500, 3)), _unit(rng.normal(size=(500, 3)))
    rays, same = first_rays(o, d)
    np.testing.assert_array_equal(rays, np.hstack([o, d]).astype(np.float32))
    assert same is o
    o[7, 1] = -0.0
    rays, turned = first_rays(o, d)
    np.testing.assert_array_equal(turned, o + 0.0 * d)           # the numpy rule
    assert np.array_equal(np.signbit(turned), np.signbit(o + 0.0 * d))


def test_ground_rows_and_assembly_give_the_numpy_gathers_and_scatter():
    from ubot_lidar_sim.core.raycast.layer_kernel import assemble_hits, ground_rows
    rng = np.random.default_rng(7)
    n, k = 300, 900
    count = rng.integers(0, 6, n)
    ray = np.repeat(np.arange(n), count)
    slot = np.concatenate([np.arange(c) for c in count]).astype(np.int64)
    perm = rng.permutation(ray.size)                    # records in layer order, not ray order
    ray, slot = ray[perm], slot[perm]
    k = ray.size
    rng_m, obj = rng.uniform(1, 50, k), rng.integers(-1, 4, k).astype(np.int32)
    normal, dot = _unit(rng.normal(size=(k, 3))), rng.normal(size=k)
    origins, dirs = rng.normal(size=(n, 3)), _unit(rng.normal(size=(n, 3)))
    ground = np.array([True, False, True, False, False])      # 4 objects + smoke (-1)
    material = np.array([3, 4, 5, 6, 0], np.uint8)
    tables = (material, np.array([9, 8, 7, 6, 5], np.uint8),
              np.array([False, True, False, False, False]), ground)
    out = assemble_hits(count, ray, slot, rng_m, obj, normal, dot, origins, dirs, tables,
                        True, True)
    pos = (np.cumsum(count) - count)[ray] + slot
    facing = np.where((dot > 0.0)[:, None], -normal, normal)
    np.testing.assert_array_equal(out[0], np.repeat(np.arange(n), count))
    np.testing.assert_array_equal(out[11], pos)
    for column, ref in ((1, rng_m), (2, obj), (3, np.abs(dot).astype(np.float32)),
                        (4, facing.astype(np.float32)),
                        (5, origins[ray] + rng_m[:, None] * dirs[ray]), (6, material[obj]),
                        (9, ground[obj]), (10, obj < 0)):
        expect = np.empty_like(ref)
        expect[pos] = ref
        np.testing.assert_array_equal(out[column], expect)
    g, p, d, n_g, m = ground_rows(ray, rng_m, obj, normal, dot, origins, dirs, ground, material)
    ref_g = np.flatnonzero(ground[obj])
    np.testing.assert_array_equal(g, ref_g)
    p_ref = origins[ray[ref_g]]
    p_ref += rng_m[ref_g, None] * dirs[ray[ref_g]]
    np.testing.assert_array_equal(p, p_ref)
    np.testing.assert_array_equal(d, dirs[ray[ref_g]])
    np.testing.assert_array_equal(n_g, facing[ref_g])
    np.testing.assert_array_equal(m, material[obj[ref_g]])


def test_the_unit_direction_check_refuses_what_the_numpy_check_refused():
    from ubot_lidar_sim.core.raycast.tracer import _unit_rows
    d = _unit(np.random.default_rng(8).normal(size=(100, 3)))
    assert _unit_rows(d) and _unit_rows(d[:, ::-1])              # strided rows too
    d[5] *= 1.0001                                               # |d|^2 - 1 = 2e-4 > 1e-4
    assert not _unit_rows(d)
    d[6] = np.nan                                                # NaN passed the numpy max/min
    assert _unit_rows(d)


def finish_layer_reference(t32, obj, normal32, active, start, first, origins, dirs, limit,
                           foliage, fol_closed, count, max_hits, step_m, exit_step_m):
    """One layer of the numpy trace the kernel replaced (no quadrics, no analytic exits)."""
    hidx = np.flatnonzero(obj >= 0)
    t = t32[hidx].astype(np.float64)
    ob = obj[hidx]
    ray = active[hidx]
    normal = normal32[hidx].astype(np.float64)
    rng = t + 0.0 if first else start[hidx] + t
    keep = np.flatnonzero(rng <= limit[ray])
    ray, rng, ob, normal = ray[keep], rng[keep], ob[keep], normal[keep]
    dot = _dot3(normal, dirs[ray])
    leaving = fol_closed[ob] & (dot > 0.0)
    rec = np.flatnonzero(~leaving)
    slot = count[ray[rec]].copy()
    count = count.copy()
    count[ray[rec]] += 1
    f = np.flatnonzero(foliage[ob])
    nxt = rng[f] + np.where(leaving[f], exit_step_m, step_m)
    go = np.flatnonzero((count[ray[f]] < max_hits) & (nxt < limit[ray[f]]))
    nxt_ray, nxt_start = ray[f][go], nxt[go]
    o = origins[nxt_ray] + dirs[nxt_ray] * nxt_start[:, None]
    rays = np.hstack([o, dirs[nxt_ray]]).astype(np.float32)
    return (ray[rec], slot, rng[rec], ob[rec], normal[rec], dot[rec]), (rays, nxt_ray, nxt_start)


def test_the_layer_kernel_gives_the_bits_of_the_numpy_layer():
    from ubot_lidar_sim.core.raycast.layer_kernel import finish_layer
    rng = np.random.default_rng(9)
    n, m = 2000, 1500
    origins, dirs = rng.normal(size=(n, 3)), _unit(rng.normal(size=(n, 3)))
    active = np.sort(rng.choice(n, m, replace=False))
    start = rng.uniform(0.5, 5.0, m)
    t32 = rng.uniform(0.0, 60.0, m).astype(np.float32)
    obj = rng.integers(-1, 5, m).astype(np.int32)
    normal32 = _unit(rng.normal(size=(m, 3))).astype(np.float32)
    limit = rng.uniform(10.0, 70.0, n)
    foliage = np.array([True, True, False, True, False])
    fol_closed = np.array([True, False, False, True, False])
    count = rng.integers(0, 3, n)
    none = np.zeros(5, bool)
    shapes = (foliage, fol_closed, none, np.zeros(5, np.int8), np.zeros(5, np.int64),
              np.zeros((5, 3)), np.zeros((5, 3)), np.zeros(5))
    volumes = (False, none, np.zeros(5, np.int8), np.zeros((5, 3)), np.zeros((5, 3)),
               np.zeros((5, 3, 3)), np.zeros((5, 3)), np.zeros(5), np.zeros(5),
               np.zeros(6, np.int64), np.zeros((0, 3)), np.zeros((0, 3)))
    for first in (False, True):
        act = np.arange(m) if first else active
        st = np.zeros(m) if first else start
        c = count.copy()
        rec = (np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m), np.empty(m, np.int32),
               np.empty((m, 3)), np.empty(m))
        nxt = (np.empty((m, 6), np.float32), np.empty(m, np.int64), np.empty(m))
        k, j = finish_layer(t32, obj, np.zeros(m, np.int64), normal32, act, st, first, origins,
                            origins, dirs, limit, shapes, volumes, c, np.zeros(n, bool), 4, 0.25,
                            1e-3, True, *rec, *nxt)
        ref_rec, ref_nxt = finish_layer_reference(t32, obj, normal32, act, st, first, origins,
                                                  dirs, limit, foliage, fol_closed, count, 4,
                                                  0.25, 1e-3)
        assert 0 < j < k
        for got, ref in zip(rec, ref_rec):
            np.testing.assert_array_equal(got[:k], ref)
        for got, ref in zip(nxt, ref_nxt):
            np.testing.assert_array_equal(got[:j], ref)
