"""
Exact hits on spheres and cylinder sides, which are cast as tessellated triangles.

A hit on a facet is moved to the ray-quadric root nearest to it, with the analytic normal, so
ranges are exact to float64 for any radius (48 x 24 sphere, 48-sided cylinder).
"""

import numpy as np

from ubot_lidar_sim.core.raycast.arrays import dot3


def quadric_fix(o, d, t, normal, sph, center, axis, radius):
    """
    Move sphere / cylinder-side hits onto the analytic surface.

    All arguments are rows of the hits to fix only: o, d (K, 3) ray origin and direction, t (K,)
    facet range, normal (K, 3) facet normal, sph (K,) bool sphere (else cylinder side), center,
    axis (K, 3), radius (K,). Returns the fixed (t, normal) float64.
    """
    oc = o - center
    ax = np.where(sph[:, None], 0.0, axis)        # a sphere is a cylinder with no axis term
    oc_p = oc - dot3(oc, ax)[:, None] * ax
    d_p = d - dot3(d, ax)[:, None] * ax
    a = dot3(d_p, d_p)
    b = dot3(oc_p, d_p)
    c = dot3(oc_p, oc_p) - radius ** 2
    disc = b * b - a * c
    good = (disc >= 0.0) & (a > 1e-12)
    sq = np.sqrt(np.maximum(disc, 0.0))
    a_safe = np.where(good, a, 1.0)
    r1, r2 = (-b - sq) / a_safe, (-b + sq) / a_safe
    root = np.where(np.abs(r1 - t) <= np.abs(r2 - t), r1, r2)
    # Keep the facet hit when the quadric root is implausible (grazing the rim, or a ray starting
    # between a facet and the true surface, whose nearest root lies behind it).
    good &= (np.abs(root - t) < 0.1 * radius + 1e-3) & (root >= 0.0)
    t = np.where(good, root, t)
    radial = oc_p + t[:, None] * d_p
    radial /= np.maximum(np.sqrt(dot3(radial, radial)), 1e-12)[:, None]
    return t, np.where(good[:, None], radial, normal)
