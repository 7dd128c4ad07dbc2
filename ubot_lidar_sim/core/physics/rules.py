"""
The per-value laws of docs/physics.md that the kernels and radiometry.py share, written once.

Each law is a compiled scalar function (numba): the kernels of physics/radiometry_passes.py and
sensors/sweep_passes.py inline it per hit or echo, and radiometry.py applies it to arrays (numpy
broadcasting) through the row loop below it. They take floats, never
arrays: a compiled helper that takes arrays pays an atomic reference count per array and call.
libm's exp / expm1 / log / pow / acos may differ from numpy's results in the last bit
(test/core/physics/test_radiometry_passes.py holds the numpy code of each and its stated
tolerance).
"""

import math

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)

# Ranges are floored at 1 mm in the signal law.
MIN_RANGE_FLOOR_M = 1e-3


@numba.njit(cache=True, nogil=True, inline='always')
def backscatter(c: float, albedo: float, wetness: float, wet_darkening: float,
                reflectivity: float, exponent: float, specular: float, width: float,
                lobe: bool) -> float:
    """
    Lambertian-equivalent backscatter rho_bs of one hit (all floats; lobe a bool).

    rho albedo (1 - a w) |c|^k + s exp(-(theta / width)^2), |c| clipped to [0, 1] (NaN stays
    NaN); wetness w already in [0, 1]; the specular term only where lobe (a specular material:
    elsewhere it is +0 exactly).
    """
    c = abs(c)
    c = 0.0 if c < 0.0 else (1.0 if c > 1.0 else c)
    wet = 1.0 - wet_darkening * wetness
    # c^1 = c and c^0 = 1 exactly (IEEE pow): the Lambertian and flat materials skip pow.
    c_k = c if exponent == 1.0 else (1.0 if exponent == 0.0 else c ** exponent)
    d = reflectivity * albedo * wet * c_k
    if lobe:
        theta_deg = math.acos(c) * (180.0 / math.pi)
        d += specular * math.exp(-(theta_deg / width) ** 2)
    return d


@numba.njit(cache=True, nogil=True, inline='always')
def counts_per_reflectance(range_m: float, r10_m: float, s10_per_rho: float, overlap_m: float,
                           overlap_n: float) -> float:
    """
    Signal of a rho = 1 target at range_m: S10 / 0.1 (R10 / R)^2 (1 - exp(-(R / Rov)^n)).

    s10_per_rho = S10 / 0.1; R floored at MIN_RANGE_FLOOR_M; no form factor when overlap_m <= 0;
    n = overlap_n (n = 2 squares, as y * y, so the default is bit-identical to the square law).
    """
    r = max(range_m, MIN_RANGE_FLOOR_M)
    q = r10_m / r
    counts = s10_per_rho * (q * q)
    if overlap_m > 0.0:
        y = r / overlap_m
        counts *= -math.expm1(-(y * y if overlap_n == 2.0 else y ** overlap_n))
    return counts


@numba.njit(cache=True, nogil=True, inline='always')
def snr(signal: float, ambient: float) -> float:
    """Return the shot-noise SNR S / sqrt(S + ambient), S floored at 0."""
    s = max(signal, 0.0)
    return s / math.sqrt(max(s + ambient, 1e-12))


@numba.njit(cache=True, nogil=True, inline='always')
def range_noise_std(snr_: float, snr_spec: float, floor_m: float, low_snr_m: float,
                    exponent: float) -> float:
    """
    Return the 1-sigma range noise at SNR snr_, m: floor_m and the low-SNR term in quadrature.

    Low-SNR term: low_snr_m (snr_spec / SNR)^exponent, SNR floored at 1e-9 (exponents 1 and 2
    copy and square, as numpy's power of an array does).
    """
    x = snr_spec / max(snr_, 1e-9)
    extra = low_snr_m * (x if exponent == 1.0 else (x * x if exponent == 2.0 else
                                                    x ** exponent))
    return math.sqrt(floor_m * floor_m + extra * extra)


@numba.njit(cache=True, nogil=True, inline='always')
def reflectivity_byte(rho: float) -> float:
    """
    Return the calibrated reflectivity byte of rho (1 = 100 %) as a float 0-255.

    round(100 rho) up to rho = 1 (halves up); above, 100 + 155 min(1, ln rho / ln 64); 0 for
    rho <= 0 or NaN.
    """
    if not (rho > 0.0):
        return 0.0
    if rho <= 1.0:
        return math.floor(100.0 * rho + 0.5)
    return min(math.floor(100.0 + 155.0 * min(1.0, math.log(rho) / math.log(64.0)) + 0.5),
               255.0)


@numba.njit(cache=True, nogil=True, inline='always')
def rough_range_sigma_m(roughness_m: float, cos: float) -> float:
    """Return the ground-relief range sigma RoughnessM |cos|^-1.5, m (|cos| floored at 0.01)."""
    c = max(abs(cos), 0.01)
    return roughness_m * (1.0 / (c * math.sqrt(c)))       # within a few ulp of pow(c, -1.5)


# The array forms that radiometry.py calls (on flat arrays it broadcast; compiled on first use:
# numba ufuncs with signatures would compile, or load, all of them at import, ~0.1 s each).

@numba.njit(cache=True, nogil=True)
def counts_per_reflectance_rows(range_m: NDArray[np.float64], r10_m: NDArray[np.float64],
                                s10_per_rho: float, overlap_m: float,
                                overlap_n: float) -> NDArray[np.float64]:
    """Apply counts_per_reflectance to rows (N,) of range_m and r10_m."""
    out = np.empty(range_m.shape[0])
    for i in range(out.shape[0]):
        out[i] = counts_per_reflectance(range_m[i], r10_m[i], s10_per_rho, overlap_m, overlap_n)
    return out


@numba.njit(cache=True, nogil=True)
def snr_rows(signal: NDArray[np.float64], ambient: float) -> NDArray[np.float64]:
    """Apply snr to rows (N,) of signal."""
    out = np.empty(signal.shape[0])
    for i in range(out.shape[0]):
        out[i] = snr(signal[i], ambient)
    return out


@numba.njit(cache=True, nogil=True)
def range_noise_std_rows(snr_: NDArray[np.float64], floor_m: NDArray[np.float64],
                         snr_spec: float, low_snr_m: float,
                         exponent: float) -> NDArray[np.float64]:
    """Apply range_noise_std to rows (N,) of snr_ and of floor_m (each row's floor)."""
    out = np.empty(snr_.shape[0])
    for i in range(out.shape[0]):
        out[i] = range_noise_std(snr_[i], snr_spec, floor_m[i], low_snr_m, exponent)
    return out


@numba.njit(cache=True, nogil=True)
def reflectivity_byte_rows(rho: NDArray[np.float64]) -> NDArray[np.uint8]:
    """Apply reflectivity_byte to rows (N,) of rho; (N,) uint8."""
    out = np.empty(rho.shape[0], np.uint8)
    for i in range(out.shape[0]):
        out[i] = np.uint8(reflectivity_byte(rho[i]))
    return out


@numba.njit(cache=True, nogil=True)
def rough_range_sigma_rows(roughness_m: NDArray[np.float64],
                           cos: NDArray[np.float64]) -> NDArray[np.float64]:
    """Apply rough_range_sigma_m to rows (N,) of roughness_m and cos."""
    out = np.empty(cos.shape[0])
    for i in range(out.shape[0]):
        out[i] = rough_range_sigma_m(roughness_m[i], cos[i])
    return out
