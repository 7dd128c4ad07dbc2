"""
The compiled trace kernels against their plain-numpy references (stated tolerance: bit for bit).

The kernels keep numpy's operation order and use only +, -, *, / and sqrt, which IEEE 754 rounds
exactly, so they must give the very bits of the numpy code they replaced.
"""

import numpy as np

from ubot_lidar_sim.core.raycast.quadrics import quadric_hit
from ubot_lidar_sim.core.world.texture import _tilt, ground_albedo, GroundTexture


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
    got = np.array([quadric_hit(*o[i], *d[i], t[i], *normal[i], sph[i], center[i], axis[i],
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
