"""
Numeric tolerances of the suite, each derived from a bound that holds on every x86-64 CPU.

Imported by name (``from tolerances import ...``): pytest puts test/ on sys.path for its
conftest. No figure here is read off one machine. open3d's and embreex's Embree pick SSE, AVX2
or AVX-512 kernels at run time and numba compiles for the host CPU (or NUMBA_CPU_NAME), so the
last bits of a float32 intersection or of a libm call may differ between machines; a test
compares with the bound, not with the bits one CPU gives. `make test-generic-cpu` runs the
numeric tests with numba compiled for a generic x86-64 (scripts/test_generic_cpu.sh).

Where a test needs no bound: numpy's float64 + - * / sqrt are IEEE correctly rounded on every
CPU, and numba does not contract a * b + c into an FMA without fastmath (the package sets none),
so the same float64 formula in numpy and in a kernel, in the same order, gives the same bits:
such tests compare exactly.
"""

import numpy as np

F32_EPS = float(np.finfo(np.float32).eps)    # 2**-23: spacing of float32 at 1
F64_EPS = float(np.finfo(np.float64).eps)    # 2**-52

F32_HIT_ROUNDINGS = 16
"""
Float32 roundings on the path of one ray/triangle hit, each at most F32_EPS / 2 relative.

Any correct float32 intersector (Moller-Trumbore, Embree's Pluecker / watertight test, with or
without FMA, a division or rcp plus one Newton step) computes t = Ng . (v0 - o) / Ng . d from
float32 inputs: rounding o, d and v0 to float32 (3), the differences v0 - o and the edges (2),
the cross product Ng (2), the two 3-term dot products (2 x 3) and the division or rcp-Newton
(3). Every rounding is relative to a term whose size is at most |Ng| (|v0 - o| + t), and the
denominator is |Ng| cos(incidence): hence f32_hit_bound_m.
"""


def f32_hit_bound_m(distance_m, cos_incidence, lever_m=0.0):
    """
    Bound (m) on the error of a float32 ray/triangle hit against the exact range.

    F32_HIT_ROUNDINGS roundings of F32_EPS / 2, relative to the hit distance plus the lever
    arm (lever_m: the largest distance from the ray origin to a vertex of the hit triangle; the
    dot products round terms that large), divided by the conditioning |cos| of the angle of
    incidence (a plane moved by e along its normal moves the hit by e / cos). For a 10 m hit
    at normal incidence on a small triangle: 9.5 um; the sensors' range resolution is >= 1 mm.
    """
    cos = np.abs(np.asarray(cos_incidence, np.float64))
    return F32_HIT_ROUNDINGS * F32_EPS / 2.0 * (np.asarray(distance_m) + lever_m) / cos


def f32_round_bound_m(value_m):
    """Bound (m) on rounding a float64 to float32 once: half the float32 spacing there."""
    return np.spacing(np.abs(np.asarray(value_m, np.float32))).astype(np.float64) / 2.0


WALL_LEVER_M = float(np.hypot(np.hypot(10.2, 20.0), 8.5))
"""Lever arm of the lidar tests' wall (0.2 x 40 x 10 m, face at x = 10, sensor 1.5 m up)."""


def assert_wall_ranges(points, az, el, wall_x_m=10.0):
    """
    Assert lidar points' ranges on the wall face x = wall_x_m: 10 / (cos az cos el) within bound.

    f32_hit_bound_m of each float32 hit (the face's far corner the lever arm), plus two float32
    spacings: the azimuth is read back from the points' float32 x, y.
    """
    cos = np.cos(az) * np.cos(el)
    want = wall_x_m / cos
    bound = f32_hit_bound_m(want, cos, WALL_LEVER_M) + 4.0 * f32_round_bound_m(want)
    assert np.all(np.abs(points['range'] - want) <= bound)


def f64_sqrt_root_bound_m(scale_m):
    """
    Bound (m) on a float64 quadratic root b - sqrt(b^2 - c) of terms of size scale_m^2.

    The discriminant is 3 float64 operations on terms <= scale_m^2: its error is at most
    4 F64_EPS scale_m^2, and |sqrt(x + e) - sqrt(x)| <= sqrt(|e|) (the worst case: a grazing
    ray, x -> 0). Hence 2 sqrt(F64_EPS) scale_m: 3 nm at 10 m, far under a float32 spacing.
    """
    return 2.0 * np.sqrt(F64_EPS) * np.asarray(scale_m, np.float64)


F64_LIBM_ULPS = 4
"""
Ulps of a float64 libm call (exp, log, pow, acos) against the correctly rounded value.

glibc's double exp / log / pow are < 1 ulp and its acos < 1 ulp, on every ISA variant it picks
at run time (FMA or not); numpy's SIMD loops (AVX2 / AVX-512 exp and log) are documented within
4 ulps. A kernel and its numpy reference may each be off by that much.
"""

F64_LIBM_REL = 2 * F64_LIBM_ULPS * F64_EPS
"""Relative difference of one libm call in a kernel and in numpy, each within F64_LIBM_ULPS."""

F64_KERNEL_RTOL = 1e-12
"""
Relative bound of a numba kernel against its numpy reference where either calls libm.

F64_LIBM_REL (1.8e-15) times the condition number of the formula, which must stay <= 560
(1e-12 / F64_LIBM_REL): a product of a few pow / exp / expm1 of well-scaled arguments has
kappa <= 10; exp(-x^2) of the specular lobe turns its angle's relative error into 2 x^2 times
that, weighted by the lobe's share of the sum (test_radiometry_passes checks its inputs' kappa).
Numba's + - * / sqrt are IEEE and not contracted to FMA, so no other term differs by CPU.
"""


def stderr_bound(p, n, k=4.0):
    """Bound on |frequency - p| of n Bernoulli(p) draws: k standard errors sqrt(p (1-p) / n)."""
    return k * np.sqrt(p * (1.0 - p) / n)
