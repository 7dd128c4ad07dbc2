"""
Compiled per-echo work of echoes.process_beams (numba, cached on disk, GIL released).

``form_echoes`` chains contributions sorted by (beam, range) into echoes and sums them;
``first_max_flags`` ranks each beam's detected echoes for return selection. Both keep numpy's
summation order (bincount adds in row order from 0.0) and use only +, -, *, /, so they give the
bits of the numpy code they replace. ``backscatter_rows`` and ``front_transmission2`` are the
per-hit radiometry; they call libm's pow / acos / exp, which differ from numpy's SIMD results in
the last bit for a few per cent of inputs (stated tolerance: 4 ulp, rtol 1e-15).
test/core/test_physics_kernels.py holds the numpy code each kernel replaced.
"""

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def form_echoes(beam, r, pw, st, gap_m):
    """
    Chain sorted contributions into echoes; returns (start, energy, r_e, peak, big).

    beam (M,) int64, r (M,) float64 range, pw (M,) power, st (M,) pulse-stretch factor, in
    (beam, range) order. A new echo starts at a new beam or where the range steps by >= gap_m.
    Per echo E: start (E,) its first row; energy = sum pw; r_e = sum(pw r) / energy (the mean
    range of its rows when energy is not > 0); peak = sum(pw st); big the row of its largest
    contributor (the nearest among ties).
    """
    m = beam.shape[0]
    start = np.empty(m, np.int64)
    energy = np.empty(m)
    r_e = np.empty(m)
    peak = np.empty(m)
    big = np.empty(m, np.int64)
    e = -1
    s_pr = s_r = best = 0.0
    count = 0
    for i in range(m):
        if i == 0 or beam[i] != beam[i - 1] or r[i] - r[i - 1] >= gap_m:
            if e >= 0:
                r_e[e] = s_pr / energy[e] if energy[e] > 0.0 else s_r / count
            e += 1
            start[e] = i
            energy[e] = peak[e] = s_pr = s_r = 0.0
            count = 0
            big[e] = i
            best = pw[i]
        energy[e] += pw[i]
        s_pr += pw[i] * r[i]
        peak[e] += pw[i] * st[i]
        s_r += r[i]
        count += 1
        if pw[i] > best:
            best = pw[i]
            big[e] = i
    if e >= 0:
        r_e[e] = s_pr / energy[e] if energy[e] > 0.0 else s_r / count
    n = e + 1
    return start[:n], energy[:n], r_e[:n], peak[:n], big[:n]


@numba.njit(cache=True, nogil=True)
def first_max_flags(beam, strength, first_flag, strongest_flag, last_flag, second_flag):
    """
    Return flags (D,) uint8 of detected echoes in (beam, range) order.

    Per beam: its first and last echo, the strongest (the nearest among ties) and, with two or
    more echoes, the second strongest; each flag value is OR-ed into the echo's byte.
    """
    n = beam.shape[0]
    flags = np.zeros(n, np.uint8)
    i = 0
    while i < n:
        j = i
        while j + 1 < n and beam[j + 1] == beam[i]:
            j += 1
        flags[i] |= first_flag
        flags[j] |= last_flag
        k1 = i
        for k in range(i + 1, j + 1):
            if strength[k] > strength[k1]:
                k1 = k
        flags[k1] |= strongest_flag
        if j > i:
            k2 = -1
            for k in range(i, j + 1):
                if k != k1 and (k2 < 0 or strength[k] > strength[k2]):
                    k2 = k
            flags[k2] |= second_flag
        i = j + 1
    return flags


@numba.njit(cache=True, nogil=True, error_model='numpy')
def backscatter_rows(m, cos, albedo, wetness, wet_darkening, reflectivity, exponent, specular,
                     width, lobe):
    """
    Backscatter rho_bs (H,) of hits: the loop of radiometry.backscatter (libm).

    m (H,) material indices (valid), cos (H,); albedo and wetness (H,) or (1,): one for all
    (wetness clipped to [0, 1]); per material (M,): wet darkening a, reflectivity, incidence
    exponent, specular, specular width (deg) and lobe (bool: the specular term is evaluated).
    pow, acos and exp are libm's, which may differ from numpy's SIMD versions in the last bit.
    """
    out = np.empty(m.shape[0])
    one_albedo, one_w = albedo.shape[0] == 1, wetness.shape[0] == 1
    for i in range(m.shape[0]):
        k = m[i]
        c = abs(cos[i])
        c = 0.0 if c < 0.0 else (1.0 if c > 1.0 else c)          # clip; NaN stays NaN
        wet = 1.0 - wet_darkening[k] * wetness[0 if one_w else i]
        e = exponent[k]
        # c^1 = c and c^0 = 1 exactly (IEEE pow): the Lambertian and flat materials skip pow.
        c_k = c if e == 1.0 else (1.0 if e == 0.0 else c ** e)
        d = reflectivity[k] * albedo[0 if one_albedo else i] * wet * c_k
        if lobe[k]:
            theta_deg = math.acos(c) * (180.0 / math.pi)
            d += specular[k] * math.exp(-(theta_deg / width[k]) ** 2)
        out[i] = d
    return out


@numba.njit(cache=True, nogil=True)
def front_transmission2(foliage_rows, log_t, ray, cs):
    """
    Rows (K,) that are not their ray's first hit and their two-way gap fraction t^2 (K,).

    t^2 = exp(2 S), S the sum of the log transmissions log_t (F,) of the foliage rows (F,)
    (ascending) before the row in its ray: the running sum cs (F,) at the row minus the row's
    own term, less the same at the ray's first hit. ray (H,) in (ray, range) order. exp is
    libm's.
    """
    h = ray.shape[0]
    rows = np.empty(h, np.int64)
    t2 = np.empty(h)
    n, k, f = 0, -1, 0
    base = 0.0
    for row in range(h):
        own = 0.0
        if f < foliage_rows.shape[0] and foliage_rows[f] == row:
            k += 1
            f += 1
            own = log_t[k]
        excl = (cs[k] if k >= 0 else 0.0) - own
        if row == 0 or ray[row] != ray[row - 1]:
            base = excl
        else:
            rows[n] = row
            t2[n] = math.exp(2.0 * (excl - base))
            n += 1
    return rows[:n], t2[:n]
