"""
Compiled per-echo work of echoes.process_beams (numba, cached on disk, GIL released).

``form_echoes`` chains contributions sorted by (beam, range) into echoes and sums them;
``first_max_flags`` ranks each beam's detected echoes for return selection. Both keep numpy's
summation order (bincount adds in row order from 0.0) and use only +, -, *, /, so they give the
bits of the numpy code they replace; test/core/test_physics_kernels.py holds that numpy code.
"""

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
