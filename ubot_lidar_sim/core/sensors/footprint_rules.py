"""
The refine rules of footprint adaptive: which beams' footprints may hold more than one surface.

From the centre hits of each beam and of its ring and column neighbours (neighbour_table):
a neighbour that hits where the beam misses (or the reverse), or, when it is near
(DENSE_FACTOR), met other layers (count, objects, materials); a first or last range off the
plane through an axis's two neighbours by more than the footprint's depth spread (a step:
mixed pixels, dual returns); grazing incidence. Where only far ring neighbours (a VLP-16's 2
deg) raise the hit-or-miss or plane test, two probe sub-rays above and below the centre decide
(probes_agree). A beam without a neighbour column in its column block is always refined, so
that no block needs another block's data. adaptive_footprint.py traces what these decide.
"""

import math
from typing import Tuple

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.beams.firing import Beams

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Bools = NDArray[np.bool_]

#: A range step that departs from the neighbours' plane by at least this fraction of
#: min_separation_m refines the beam. Below it the step's sub-rays merge into one echo in both
#: modes and move its range by at most (their power share) x the step: 3.75 cm for the default
#: min_separation_m 0.75 m, inside the range noise of the presets (1.5-3 cm floor plus
#: low-SNR noise). benchmarks/footprint_fidelity.py measures the range error near edges.
STEP_FRACTION = 0.05
#: Grazing incidence: the sub-rays' ranges over the footprint spread D = 2 R rho tan(theta) (rho
#: the sub-ray offset angle); D of at least this fraction of min_separation_m refines the beam.
#: The hexagon's sorted ranges lie D / 4 apart, so below it they are at most an eighth of
#: min_separation_m apart and chain into one echo (a split needs D >= 4 min_separation_m)
#: whose power-weighted range is the centre's to second order in rho; the pulse stretch is the
#: analytic one of each hit (radiometry.pulse_stretch_factor) in both modes. 0.25 refined 5 %
#: more of an OS1-128's beams for no change in the fidelity rows.
GRAZING_FRACTION = 0.5
#: refine_beams' verdicts: one ray, every sub-ray, or the probes first.
KEEP, PROBE, REFINE = 0, 1, 2      # ordered: the strongest verdict wins
#: The probe sub-rays (of the hexagon at 0, 60, ..., 300 deg from the horizontal u): 60 deg
#: above and 240 deg below the centre, at 0.87 of the offset. A sparse axis is a sensor's rings
#: (a VLP-16's 2 deg), so its boundaries cross the footprint about horizontally: a horizontal
#: edge inside the footprint puts one of the two on its other side, as it does the hexagon's
#: pair at that height.
PROBE_SUBS = np.array([2, 5], np.int64)
#: Cosine floor of the plane test's direction residual term (below it the grazing rule refines).
COS_FLOOR = 0.05
#: A reference beam at most this many sub-ray offsets away is near (dense): its other layers
#: (count, objects, materials) refine the beam, as its boundary lies in the footprint with odds
#: of about a half or more. Farther (a VLP-16's rings, 2 deg apart against a 1 mrad offset)
#: other objects or materials do not count (on one plane the straddling footprint gives one
#: echo at the same range either way, only its intensity mixes), and a far ring neighbour's
#: hit-or-miss or plane failure sends the beam to the probes instead of refining it.
DENSE_FACTOR = 4.0


def neighbour_table(beams: Beams, along_rings: bool = True, dense_rad: float = 0.0,
                    ) -> Tuple[I64, F64, F64, Bools, Bools]:
    """
    Return each beam's reference beams and plane coefficients: neighbours, coef, residual, ...

    The tuple is (neighbours, coef, residual, edge, dense).

    neighbours (B, 4) int64: the column-axis pair (before, after) and the ring-axis pair (by
    elevation; at the top and bottom ring the next two rings on the one side), -1 where none.
    coef (B, 4): alpha, beta with d_b ~ alpha d_p + beta d_n for each axis's pair (NaN: no
    plane test on that axis); residual (B, 2) |d_b - alpha d_p - beta d_n|. On a plane through
    the sensor's origin-free frame, 1 / range is linear in the direction, so 1 / r_b = alpha /
    r_p + beta / r_n up to residual / distance of the plane. edge (B,) bool: beams without a
    neighbour column on one side in these beams (always refined). dense (B, 4) bool: the
    reference beam lies within dense_rad of the beam.
    """
    n_rings, n_cols = beams.channels, beams.columns
    grid = np.arange(n_rings * n_cols, dtype=np.int64).reshape(n_rings, n_cols)
    nb = np.full((n_rings, n_cols, 4), -1, np.int64)
    edge = np.zeros((n_rings, n_cols), bool)
    before, after = _column_links(beams, along_rings)
    has_b, has_a = before >= 0, after >= 0
    nb[:, has_b, 0] = grid[:, before[has_b]]
    nb[:, has_a, 1] = grid[:, after[has_a]]
    if n_cols > 1:
        edge[:, ~(has_b & has_a)] = True
    if along_rings and n_rings > 1:
        order = np.argsort(beams.ring_elevation_rad, kind='stable')
        pos = np.empty(n_rings, np.int64)
        pos[order] = np.arange(n_rings)
        p, n = pos - 1, pos + 1
        if n_rings > 2:
            p = np.where(pos == 0, 2, p)                    # bottom: the next two rings above
            n = np.where(pos == n_rings - 1, n_rings - 3, n)   # top: the next two below
        for k, ref in ((2, p), (3, n)):
            ok = (ref >= 0) & (ref < n_rings)
            nb[ok, :, k] = grid[order[ref[ok]], :]
    nb = nb.reshape(-1, 4)
    coef = np.full((nb.shape[0], 4), np.nan)
    residual = np.full((nb.shape[0], 2), np.nan)
    d = np.asarray(beams.dir_sensor, np.float64)
    for axis in (0, 1):
        p, n = nb[:, 2 * axis], nb[:, 2 * axis + 1]
        ok = np.flatnonzero((p >= 0) & (n >= 0))
        dp, dn, db = d[p[ok]], d[n[ok]], d[ok]
        c = np.einsum('ij,ij->i', dp, dn)
        x = np.einsum('ij,ij->i', db, dp)
        y = np.einsum('ij,ij->i', db, dn)
        det = 1.0 - c * c
        good = det > 1e-18
        alpha = np.where(good, (x - c * y) / np.where(good, det, 1.0), np.nan)
        beta = np.where(good, (y - c * x) / np.where(good, det, 1.0), np.nan)
        coef[ok, 2 * axis] = alpha
        coef[ok, 2 * axis + 1] = beta
        res = db - alpha[:, None] * dp - beta[:, None] * dn
        residual[ok, axis] = np.sqrt(np.einsum('ij,ij->i', res, res))
    ref = np.where(nb >= 0, nb, 0)
    cos_ref = np.einsum('ikj,ij->ik', d[ref], d)
    dense = (nb >= 0) & (cos_ref >= math.cos(dense_rad))
    return nb, coef, residual, edge.reshape(-1), dense


def _column_links(beams, along_rings):
    """
    Return the neighbour column before and after each column (C,) int64, -1 where none.

    A grid's columns are neighbours when their azimuths are one column step apart (around the
    circle: a whole sweep wraps, a block's or a partial field of view's ends do not); a
    rosette's (along_rings False) are consecutive shots of a line.
    """
    n = beams.columns
    before, after = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    if n < 2:
        return before, after
    if not along_rings:
        before[1:], after[:-1] = np.arange(n - 1), np.arange(1, n)
        return before, after
    az = np.asarray(beams.column_azimuth_rad, np.float64)
    order = np.argsort(az, kind='stable')
    gaps = np.diff(np.r_[az[order], az[order[0]] + 2.0 * math.pi])
    step = np.min(gaps[gaps > 0.0]) if np.any(gaps > 0.0) else 0.0
    link = (gaps > 0.0) & (gaps < 1.5 * step)       # order[i] -> order[i + 1] (cyclic)
    nxt = np.roll(order, -1)
    after[order[link]] = nxt[link]
    before[nxt[link]] = order[link]
    return before, after


@numba.njit(cache=True, nogil=True)
def first_hits(n_beams: int, ray: I64, range_m: F64,
               cos: F64) -> Tuple[I64, I64, F64, F64, F64]:
    """
    Return each beam's centre-ray layers: first row, count, first and last range, first |cos|.

    ray (H,) the beam of each centre-ray hit, sorted by (ray, range). Each (B,): first row
    (int64; 0 where none), count of surfaces, range of the first and of the last (inf where
    none), |cos| of the first (1 where none).
    """
    start = np.zeros(n_beams, np.int64)
    count = np.zeros(n_beams, np.int64)
    r0 = np.full(n_beams, np.inf)
    r1 = np.full(n_beams, np.inf)
    c = np.ones(n_beams)
    for h in range(ray.shape[0]):
        b = ray[h]
        if count[b] == 0:
            start[b] = h
            r0[b] = range_m[h]
            c[b] = abs(cos[h])
        count[b] += 1
        r1[b] = range_m[h]
    return start, count, r0, r1, c


@numba.njit(cache=True, nogil=True)
def _off_plane(r, alpha, beta, rp, rn, tol):
    """
    Return True when r departs from 1 / (alpha / rp + beta / rn) by more than tol.

    A neighbour range of 0 (a sensor on a surface) gives no plane: True, the beam is refined.
    """
    if not (rp > 0.0 and rn > 0.0):
        return True
    w = alpha / rp + beta / rn
    return not w > 0.0 or abs(1.0 / w - r) > tol


@numba.njit(cache=True, nogil=True)
def refine_beams(start: I64, count: I64, r_first: F64, r_last: F64, cos: F64,
                 obj: NDArray[np.int32], material: NDArray[np.uint8], neighbours: I64,
                 coef: F64, residual: F64, edge: Bools, dense: Bools, step_m: float,
                 grazing_m: float, offset_rad: float, cos_floor: float) -> NDArray[np.int8]:
    """
    Return each beam's verdict (B,) int8: KEEP (one ray), REFINE (every sub-ray) or PROBE.

    start, count, r_first, r_last, cos (B,) of first_hits; obj, material (H,) of the centre
    hits; neighbours, coef, residual, edge, dense of neighbour_table. REFINE: an edge beam;
    a dense reference beam that hits where it misses (or the reverse) or met other layers
    (count, objects or materials); a footprint depth spread D = 2 r offset_rad tan(theta) of at
    least grazing_m; a first or (same layer count) last range off the plane of an axis's pair,
    1 / (alpha / r_p + beta / r_n), by more than max(step_m, D) + r residual / max(cos,
    cos_floor), on the column axis or a dense ring pair. PROBE: the same hit-or-miss and plane
    tests failed only on the ring axis with sparse reference beams (a boundary across the
    footprint then runs about horizontally, which the probes above and below see).
    """
    n = r_first.shape[0]
    out = np.zeros(n, np.int8)
    for b in range(n):
        if edge[b]:
            out[b] = REFINE
            continue
        hit = count[b] > 0
        verdict = KEEP
        for k in range(4):
            q = neighbours[b, k]
            if q < 0:
                continue
            if dense[b, k]:
                # Same layers: as many hits, the same objects and materials in order. Written
                # out here: a helper taking the four arrays costs their reference counts per
                # call (3.1 ms against 0.16 ms for the loop on an OS1-128 block).
                same = count[q] == count[b]
                if same:
                    for i in range(count[b]):
                        hb = start[b] + i
                        hq = start[q] + i
                        if obj[hb] != obj[hq] or material[hb] != material[hq]:
                            same = False
                            break
                if (count[q] > 0) != hit or not same:
                    verdict = REFINE
            elif (count[q] > 0) != hit:
                verdict = max(verdict, PROBE if k >= 2 else REFINE)
        if verdict == REFINE or not hit:
            out[b] = verdict
            continue
        c = cos[b]
        spread = 2.0 * r_first[b] * offset_rad * math.sqrt(max(1.0 - c * c, 0.0)) / c \
            if c > 0.0 else np.inf
        if spread >= grazing_m:
            out[b] = REFINE
            continue
        tol = max(step_m, spread) + r_first[b] * max(residual[b, 0], residual[b, 1]) \
            / max(c, cos_floor)
        for axis in range(2):
            alpha, beta = coef[b, 2 * axis], coef[b, 2 * axis + 1]
            p, q = neighbours[b, 2 * axis], neighbours[b, 2 * axis + 1]
            if alpha != alpha or beta != beta or count[p] == 0 or count[q] == 0:
                continue
            if _off_plane(r_first[b], alpha, beta, r_first[p], r_first[q], tol) or (
                    count[b] > 1 and count[p] == count[b] and count[q] == count[b]
                    and _off_plane(r_last[b], alpha, beta, r_last[p], r_last[q], tol)):
                if axis == 0 or (dense[b, 2] and dense[b, 3]):
                    verdict = REFINE
                    break
                verdict = PROBE
        out[b] = verdict
    return out


@numba.njit(cache=True, nogil=True)
def probes_agree(n_probe: int, ray: I64, range_m: F64, obj: NDArray[np.int32],
                 material: NDArray[np.uint8], probe: I64, start: I64, count: I64,
                 r_first: F64, cos: F64, c_obj: NDArray[np.int32], c_mat: NDArray[np.uint8],
                 step_m: float, offset_rad: float, per_beam: int) -> Bools:
    """
    Return agree (P,) bool: each probed beam's probe rays met what its centre met.

    ray (H,) the probe ray of each probe hit (beam index k x per_beam + probe), sorted by
    (ray, range); range_m, obj, material (H,); probe (P,) the probed beams; start, count,
    r_first, cos (B,) of first_hits and c_obj, c_mat (H_c,) of the centre hits. A probe ray
    agrees when it met as many surfaces with the same objects and materials, its first within
    max(step_m, D) of the centre's (D the footprint's depth spread).
    """
    seen = np.zeros(n_probe * per_beam, np.int64)
    agree = np.ones(n_probe, np.bool_)
    for h in range(ray.shape[0]):
        k = ray[h] // per_beam
        b = probe[k]
        i = seen[ray[h]]
        seen[ray[h]] = i + 1
        if i >= count[b] or obj[h] != c_obj[start[b] + i] or material[h] != c_mat[start[b] + i]:
            agree[k] = False
        elif i == 0:
            c = cos[b]
            spread = 2.0 * r_first[b] * offset_rad * math.sqrt(max(1.0 - c * c, 0.0)) / c \
                if c > 0.0 else np.inf
            if abs(range_m[h] - r_first[b]) > max(step_m, spread):
                agree[k] = False
    for j in range(n_probe * per_beam):
        if seen[j] != count[probe[j // per_beam]]:
            agree[j // per_beam] = False
    return agree
