"""
Exact hits on spheres and cylinder sides, which are cast as tessellated triangles.

A hit on a facet is moved to the ray-quadric root nearest to it, with the analytic normal, so
ranges are exact to float64 for any radius (48 x 24 sphere, 48-sided cylinder). Compiled
(numba): the trace's layer kernel (raycast/layer_kernel.py) calls it once per hit.
"""

import math

import numba

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)


@numba.njit(cache=True, nogil=True, inline='always')
def _dot(a0, a1, a2, b0, b1, b2):
    """Row dot product in numpy's reduction order ((0 + p0) + p1) + p2 (arrays.dot3)."""
    return ((a0 * b0 + 0.0) + a1 * b1) + a2 * b2


@numba.njit(cache=True, nogil=True, inline='always')
def quadric_hit(o0: float, o1: float, o2: float, d0: float, d1: float, d2: float, t: float,
                n0: float, n1: float, n2: float, sphere: bool, c0: float, c1: float, c2: float,
                a0: float, a1: float, a2: float, radius: float
                ) -> tuple[float, float, float, float]:
    """
    Move one sphere / cylinder-side hit onto the analytic surface; returns (t, n0, n1, n2).

    o the cast origin, d the unit direction, t the facet range, n the facet normal; sphere True
    for a sphere (else a cylinder side of unit axis a); centre c, radius: all floats (arrays
    would cost an atomic reference count per call).
    """
    oc0, oc1, oc2 = o0 - c0, o1 - c1, o2 - c2
    if sphere:
        a0, a1, a2 = 0.0, 0.0, 0.0
    s = _dot(oc0, oc1, oc2, a0, a1, a2)             # a sphere is a cylinder with no axis term
    p0, p1, p2 = oc0 - s * a0, oc1 - s * a1, oc2 - s * a2
    s = _dot(d0, d1, d2, a0, a1, a2)
    q0, q1, q2 = d0 - s * a0, d1 - s * a1, d2 - s * a2
    a = _dot(q0, q1, q2, q0, q1, q2)
    b = _dot(p0, p1, p2, q0, q1, q2)
    c = _dot(p0, p1, p2, p0, p1, p2) - radius * radius
    disc = b * b - a * c
    good = disc >= 0.0 and a > 1e-12
    sq = math.sqrt(disc) if disc > 0.0 else 0.0
    a_safe = a if good else 1.0
    r1, r2 = (-b - sq) / a_safe, (-b + sq) / a_safe
    root = r1 if abs(r1 - t) <= abs(r2 - t) else r2
    # Keep the facet hit when the quadric root is implausible (grazing the rim, or a ray starting
    # between a facet and the true surface, whose nearest root lies behind it).
    if not (good and abs(root - t) < 0.1 * radius + 1e-3 and root >= 0.0):
        return t, n0, n1, n2
    r0, r1_, r2_ = p0 + root * q0, p1 + root * q1, p2 + root * q2
    length = max(math.sqrt(_dot(r0, r1_, r2_, r0, r1_, r2_)), 1e-12)
    return root, r0 / length, r1_ / length, r2_ / length
