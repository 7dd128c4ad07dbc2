"""
Compiled per-hit and per-echo work of echoes.py (numba, cached on disk, GIL released).

``hit_power`` turns hits into contributions in one pass (backscatter, foliage, atmosphere,
signal law); ``form_echoes`` chains contributions sorted by (beam, range) into echoes and sums
them; ``detect_echoes`` and ``emitted_values`` measure, detect and value them;
``first_max_flags`` ranks each beam's detected echoes for return selection. The laws per value
are physics/rules.py's. The echo kernels keep numpy's summation order (bincount adds in row
order from 0.0) and use only +, -, *, /, so they give the bits of the numpy code they replace.
The radiometry kernels call libm's pow / acos / exp / log / expm1, which differ from numpy's
results in the last bit for a few per cent of inputs (stated tolerance: relative 1e-12).
test/core/physics/test_radiometry_passes.py holds the numpy code each kernel replaced.
"""

import math
from typing import Tuple

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.physics import rules

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
#: The surface tables of backscatter_rows (radiometry.surface_tables): five (M,) float arrays
#: (wet darkening, reflectivity, exponent, specular, width) and the lobe flags (M,) bool.
SurfaceTables = Tuple[F64, F64, F64, F64, F64, NDArray[np.bool_]]


@numba.njit(cache=True, nogil=True)
def form_echoes(beam: I64, r: F64, pw: F64, st: F64, air: NDArray[np.bool_],
                gap_m: float) -> Tuple[I64, F64, F64, F64, I64]:
    """
    Chain sorted contributions into echoes; returns (start, energy, r_e, peak, big).

    beam (M,) int64, r (M,) float64 range, pw (M,) power, st (M,) pulse-stretch factor, air (M,)
    bool (the air's own returns: fog, drops, flakes), in (beam, range) order. A new echo starts
    at a new beam or where the range steps by >= gap_m. Per echo E: start (E,) its first row;
    energy = sum pw; peak = sum(pw st). Its dominant side is the air when the air's rows carry
    more power than the surfaces' (else the surfaces; the side that has rows when neither has
    power): big is the row of the largest contributor of that side (the nearest among ties) and
    r_e the power-weighted mean range of that side's rows (the mean range of all the echo's
    rows when the side's energy is not > 0), so that a merged echo reads the range and class of
    what dominates it.
    """
    m = beam.shape[0]
    start = np.empty(m, np.int64)
    energy = np.empty(m)
    r_e = np.empty(m)
    peak = np.empty(m)
    big = np.empty(m, np.int64)
    e = -1
    s_r = 0.0
    s_pr = np.zeros(2)
    en = np.zeros(2)
    best = np.zeros(2)
    big_g = np.zeros(2, np.int64)
    n_g = np.zeros(2, np.int64)
    count = 0
    for i in range(m + 1):
        if i == m or i == 0 or beam[i] != beam[i - 1] or r[i] - r[i - 1] >= gap_m:
            if e >= 0:
                g = 1 if en[1] > en[0] or n_g[0] == 0 else 0
                big[e] = big_g[g]
                r_e[e] = s_pr[g] / en[g] if en[g] > 0.0 else s_r / count
            if i == m:
                break
            e += 1
            start[e] = i
            energy[e] = peak[e] = s_r = 0.0
            for k in range(2):
                s_pr[k] = en[k] = best[k] = 0.0
                n_g[k] = 0
            count = 0
        g = 1 if air[i] else 0
        energy[e] += pw[i]
        en[g] += pw[i]
        s_pr[g] += pw[i] * r[i]
        peak[e] += pw[i] * st[i]
        s_r += r[i]
        count += 1
        if n_g[g] == 0 or pw[i] > best[g]:
            best[g] = pw[i]
            big_g[g] = i
        n_g[g] += 1
    n = e + 1
    return start[:n], energy[:n], r_e[:n], peak[:n], big[:n]


@numba.njit(cache=True, nogil=True)
def first_max_flags(beam: I64, strength: F64, first_flag: int, strongest_flag: int,
                    last_flag: int, second_flag: int) -> NDArray[np.uint8]:
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
def backscatter_rows(m: NDArray[np.integer], cos: F64, albedo: F64, wetness: F64,
                     wet_darkening: F64, reflectivity: F64, exponent: F64, specular: F64,
                     width: F64, lobe: NDArray[np.bool_]) -> F64:
    """
    Backscatter rho_bs (H,) of hits: rules.backscatter per hit (radiometry.backscatter).

    m (H,) material indices (valid), cos (H,); albedo and wetness (H,) or (1,): one for all
    (wetness clipped to [0, 1]); per material (M,): wet darkening a, reflectivity, incidence
    exponent, specular, specular width (deg) and lobe (bool: the specular term is evaluated).
    """
    out = np.empty(m.shape[0])
    one_albedo, one_w = albedo.shape[0] == 1, wetness.shape[0] == 1
    for i in range(m.shape[0]):
        k = m[i]
        out[i] = rules.backscatter(cos[i], albedo[0 if one_albedo else i],
                                   wetness[0 if one_w else i], wet_darkening[k],
                                   reflectivity[k], exponent[k], specular[k], width[k], lobe[k])
    return out


@numba.njit(cache=True, nogil=True, error_model='numpy')
def hit_power(ray: I64, r: F64, m: NDArray[np.integer], cos: F64, albedo: F64,
              foliage: NDArray[np.bool_], wetness: float, surface: SurfaceTables,
              transmission: F64, cover: F64, two_alpha: float, r10: F64, s10_per_rho: float,
              overlap_m: float, overlap_n: float, weights: F64,
              pane_gain: F64) -> Tuple[F64, F64]:
    """
    Apparent reflectance and mean signal of hits in (ray, range) order: (rho_app, power).

    One pass of echoes.contributions_from_hits. ray (H,) int64 (beam = ray // S, S =
    len(weights)); r (H,) range, m (H,) material (valid), cos, albedo (H,), foliage (H,) bool;
    wetness (clipped to [0, 1]); surface: the backscatter tables of backscatter_rows
    (wet darkening, reflectivity, exponent, specular, width, lobe); transmission (M,) of
    foliage and panes; cover (M,) the share of the footprint a pass-through hit returns from
    (1 - t for foliage, 1 for a glass pane). rho_app = rho_bs x (cover on a pass-through hit) x
    t^2 of the pass-through hits before the hit in its
    ray (exp of twice the running sum of log t since the ray's first hit) x exp(-two_alpha R);
    power = weight x rho_app x rules.counts_per_reflectance (s10_per_rho = S10 / 0.1, r10 (1,)
    or per beam (B,), form factor overlap_m, overlap_n). pane_gain (H,): log t(theta) / t0 of
    a pane hit at its incidence (fresnel.pane_log_gain), 0.0 on every other hit.
    """
    wet_darkening, reflectivity, exponent, specular, width, lobe = surface
    log_transmission = np.log(np.maximum(transmission, 1e-12))
    h = ray.shape[0]
    s = weights.shape[0]
    rho = np.empty(h)
    power = np.empty(h)
    one_r10 = r10.shape[0] == 1
    weighted = s > 1 or weights[0] != 1.0
    running = 0.0               # sum of log t of the foliage hits before this one
    base = 0.0
    for i in range(h):
        k = m[i]
        x = rules.backscatter(cos[i], albedo[i], wetness, wet_darkening[k], reflectivity[k],
                              exponent[k], specular[k], width[k], lobe[k])
        # excl: the running sum before this hit, as numpy's cumsum minus the hit's own term.
        if foliage[i]:
            x *= cover[k]
            own = log_transmission[k] + pane_gain[i]
            running = running + own
            excl = running - own
        else:
            excl = running
        if i == 0 or ray[i] != ray[i - 1]:
            base = excl                 # a ray's first hit: t^2 = 1 exactly
        # One exp for the air's two-way loss and the foliage's two-way gap fraction in front.
        loss = -two_alpha * r[i] + 2.0 * (excl - base)
        if loss != 0.0:
            x *= math.exp(loss)
        rho[i] = x
        counts = rules.counts_per_reflectance(r[i], r10[0] if one_r10 else r10[ray[i] // s],
                                              s10_per_rho, overlap_m, overlap_n)
        p = x * counts
        power[i] = weights[ray[i] % s] * p if weighted else p
    return rho, power


@numba.njit(cache=True, nogil=True)
def detect_echoes(peak: F64, r_e: F64, e_beam: I64, draws: F64, noise: bool, ambient: F64,
                  threshold: float, min_range_m: float, max_range_m: float, snr_spec: float,
                  floor_m: F64, low_snr_m: float, exponent: float,
                  too_close: NDArray[np.bool_]) -> Tuple[F64, I64, F64]:
    """
    Measure and detect echoes: (s_meas (E,), rows d (D,) in the window, their ranges (D,)).

    The loop of echoes.process_beams: with noise, S' = P + z0 sqrt(P + A) and an echo
    with S' >= threshold moves by z1 sigma_r (rules.range_noise_std at its rules.snr and its
    floor floor_m (E,), radiometry.range_noise_floor_m at its range); without, S' = P and no
    move. ambient: the background A, (1,) for every beam or (B,) per beam e_beam.
    draws (E, 2) the echoes' standard normals. A detected echo nearer than min_range_m sets
    too_close (B,) of its beam e_beam; the others within max_range_m are returned.
    """
    n = peak.shape[0]
    s_meas = np.empty(n)
    d = np.empty(n, np.int64)
    r_d = np.empty(n)
    k = 0
    one_a = ambient.shape[0] == 1
    for i in range(n):
        p = peak[i]
        a = ambient[0] if one_a else ambient[e_beam[i]]
        s = p + draws[i, 0] * math.sqrt(p + a) if noise else p
        s_meas[i] = s
        if not s >= threshold:
            continue
        r = r_e[i]
        if noise:
            sigma = rules.range_noise_std(rules.snr(p, a), snr_spec, floor_m[i],
                                          low_snr_m, exponent)
            r = r + draws[i, 1] * sigma
        if r < min_range_m:
            too_close[e_beam[i]] = True
        elif r <= max_range_m:
            d[k] = i
            r_d[k] = r
            k += 1
    return s_meas, d[:k], r_d[:k]


@numba.njit(cache=True, nogil=True, error_model='numpy')
def emitted_values(p: I64, pb: I64, r_e: F64, peak: F64, energy: F64, s_meas: F64, r10: F64,
                   s10_per_rho: float, overlap_m: float, overlap_n: float,
                   saturation: float) -> Tuple[F64, NDArray[np.uint16], NDArray[np.uint8]]:
    """
    Reflectivity (K,), signal (K,) uint16 and intensity byte (K,) of the emitted echoes p (K,).

    pb (K,) their beams (r10 (1,) or per beam). Reflectivity = energy /
    rules.counts_per_reflectance x S' / P (0 where P <= 0); signal = S' rounded half to even,
    clipped to [0, saturation]; the byte of rules.reflectivity_byte.
    """
    k = p.shape[0]
    refl = np.empty(k)
    signal = np.empty(k, np.uint16)
    byte = np.empty(k, np.uint8)
    one_r10 = r10.shape[0] == 1
    for j in range(k):
        e = p[j]
        g = rules.counts_per_reflectance(r_e[e], r10[0] if one_r10 else r10[pb[j]], s10_per_rho,
                                         overlap_m, overlap_n)
        rho = energy[e] / g * s_meas[e] / peak[e] if peak[e] > 0.0 else 0.0
        refl[j] = rho
        signal[j] = np.uint16(np.rint(min(max(s_meas[e], 0.0), saturation)))
        byte[j] = np.uint8(rules.reflectivity_byte(rho))
    return refl, signal, byte
