"""
Compiled per-ray and per-point loops of a LiDAR sweep (numba, cached on disk, GIL released).

The fixed per-sweep work around the trace: the world directions of every sub-ray (each column
turned by its own pose), the nearest hit per beam, the packing of the point records and the
ground-relief range noise. All but the last keep numpy's operation order and use only + and *,
so they give the bits of the numpy code they replace (test/core/sensors/test_sweep_passes.py holds
it); the ground relief is within a few ulp of it.
"""

from typing import Optional, Tuple

import numba
import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core import numba_cache  # noqa: F401  (stamps the kernel cache)
from ubot_lidar_sim.core.physics import rules

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]


@numba.njit(cache=True, nogil=True)
def rotate_sub_rays(dx: F64, dy: F64, dz: F64, poses: F64, lo: int, hi: int,
                    rays32: Optional[NDArray[np.float32]] = None) -> Tuple[F64, F64]:
    """
    World origins and unit directions (hi - lo, 3) float64 of flat sub-rays lo..hi of rings.

    dx, dy, dz (R, C, S) the sensor-frame components of the sub-rays of R rings; poses (C, 4, 4)
    world-from-sensor at each column's firing time. Sub-ray q is (ring, column, sub) in C order;
    its origin is its column's position, direction component i = (dx R_i0 + dy R_i1) + dz R_i2
    of its column's rotation R. rays32 (hi - lo, 6) float32, when given, is filled with the
    rays of a first cast (origin, direction) in the same pass, and the origins have +0.0 for
    -0.0 (as the tracer's first cast turns them: origin + 0.0).
    """
    n_ring, n_col, n_sub = dx.shape
    origins = np.empty((hi - lo, 3))
    out = np.empty((hi - lo, 3))
    q = 0
    for r in range(n_ring):
        for c in range(n_col):
            for s in range(n_sub):
                if lo <= q < hi:
                    x, y, z = dx[r, c, s], dy[r, c, s], dz[r, c, s]
                    for i in range(3):
                        origins[q - lo, i] = poses[c, i, 3]
                        out[q - lo, i] = ((x * poses[c, i, 0] + y * poses[c, i, 1])
                                          + z * poses[c, i, 2])
                    if rays32 is not None:
                        for i in range(3):
                            origins[q - lo, i] += 0.0
                            rays32[q - lo, i] = origins[q - lo, i]
                            rays32[q - lo, 3 + i] = out[q - lo, i]
                q += 1
    return origins, out


@numba.njit(cache=True, nogil=True)
def rotate_rows(dx: F64, dy: F64, dz: F64, poses: F64, beams: I64, subs: I64,
                rays32: NDArray[np.float32]) -> Tuple[F64, F64]:
    """
    World origins and directions (M, 3) of sub-ray subs[m] of beam beams[m] (M,) int64 each.

    dx, dy, dz (R, C, S) and poses (C, 4, 4) as rotate_sub_rays; beam b is ring b // C, column
    b % C. Each row is computed as rotate_sub_rays computes it (the same bits); rays32 (M, 6)
    float32 receives the rays (origins with +0.0 for -0.0).
    """
    n_col = dx.shape[1]
    m = beams.shape[0]
    origins = np.empty((m, 3))
    out = np.empty((m, 3))
    for q in range(m):
        r, c, s = beams[q] // n_col, beams[q] % n_col, subs[q]
        x, y, z = dx[r, c, s], dy[r, c, s], dz[r, c, s]
        for i in range(3):
            origins[q, i] = poses[c, i, 3] + 0.0
            out[q, i] = (x * poses[c, i, 0] + y * poses[c, i, 1]) + z * poses[c, i, 2]
            rays32[q, i] = origins[q, i]
            rays32[q, 3 + i] = out[q, i]
    return origins, out


@numba.njit(cache=True, nogil=True)
def min_per_beam(n_beams: int, beam: I64, values: F64, mask: NDArray[np.bool_], ray: I64,
                 n_sub: int) -> F64:
    """
    Minimum (B,) of values (H,) per beam (H,) int (inf where none), over rows where mask (H,).

    A mask of another length than beam (the caller's (1,)) takes every row. With n_sub > 1 only
    the rows of sub-ray 0 count (ray (H,) % n_sub == 0: the beam's centre ray). A NaN value
    makes its beam's minimum NaN (numpy's minimum).
    """
    out = np.full(n_beams, np.inf)
    every = mask.shape[0] != beam.shape[0]
    for h in range(beam.shape[0]):
        if (every or mask[h]) and (n_sub <= 1 or ray[h] % n_sub == 0):
            b, v = beam[h], values[h]
            if out[b] == out[b] and (v < out[b] or v != v):
                out[b] = v
    return out


def beam_minimum(n_beams: int, beam: np.ndarray, values: np.ndarray,
                 mask: Optional[np.ndarray] = None,
                 centre_of: Optional[Tuple[np.ndarray, int]] = None) -> F64:
    """
    Minimum of values (H,) per beam (B,), inf where none; over the rows of mask (None: all).

    centre_of (ray (H,), S): only the rows of each beam's centre sub-ray (ray % S == 0).
    Prepares the arrays of min_per_beam (a mask of (1,) takes every row).
    """
    beam = np.asarray(beam, np.int64)
    mask = np.ones(1, bool) if mask is None else np.asarray(mask, bool)
    ray, n_sub = (beam, 1) if centre_of is None else (np.asarray(centre_of[0], np.int64),
                                                      int(centre_of[1]))
    return min_per_beam(n_beams, beam, np.asarray(values, np.float64), mask, ray, n_sub)


@numba.njit(cache=True, nogil=True)
def pack_points(pts: NDArray[np.void], dir_sensor: F64, ring: NDArray[np.integer],
                column: NDArray[np.integer], column_time_s: F64, ring_time_offset_s: F64,
                beam: I64, range_m: F64, intensity: NDArray[np.uint8], reflectivity: F64,
                signal: NDArray[np.uint16], return_index: NDArray[np.uint8],
                return_count: NDArray[np.uint8], return_flags: NDArray[np.uint8],
                material: NDArray[np.uint8], class_id: NDArray[np.uint16],
                instance_id: NDArray[np.uint16]) -> None:
    """
    Fill the point records pts (P,) of output.layouts.FULL_DTYPE from the Returns columns.

    instance_id (P,) uint16, or (1,) for a sweep without actors (every point that value).
    beam (P,) the points' beams in the sweep; dir_sensor (B, 3), ring (B,), column (B,) per
    beam; column_time_s (C,), ring_time_offset_s (rings,). xyz = direction x range and time =
    column time + ring offset are float64 rounded once to the float32 fields.
    """
    for p in range(beam.shape[0]):
        b = beam[p]
        r = range_m[p]
        pts[p].x = dir_sensor[b, 0] * r
        pts[p].y = dir_sensor[b, 1] * r
        pts[p].z = dir_sensor[b, 2] * r
        pts[p].intensity = intensity[p]
        pts[p].ring = ring[b]
        pts[p].time = column_time_s[column[b]] + ring_time_offset_s[ring[b]]
        pts[p].reflectivity = reflectivity[p]
        pts[p].signal = signal[p]
        pts[p].range = r
        pts[p].return_index = return_index[p]
        pts[p].return_count = return_count[p]
        pts[p].return_flags = return_flags[p]
        pts[p].material = material[p]
        pts[p].class_id = class_id[p]
        pts[p].instance_id = instance_id[p if instance_id.shape[0] == beam.shape[0] else 0]


@numba.njit(cache=True, nogil=True)
def rough_ranges(range_m: F64, ground: NDArray[np.bool_], material: NDArray[np.uint8],
                 cos: F64, roughness_m: F64, z: F64, beam: I64) -> F64:
    """
    Return a copy of range_m (H,) with the ground-relief noise on the ground hits.

    A ground hit of material m moves by rules.rough_range_sigma_m(roughness_m[m], cos) x
    z[beam]. ground (H,) bool, material (H,) uint8, cos (H,), beam (H,), z one draw per beam
    of the sweep, from beam 0 up to at least the last hit beam.
    """
    out = range_m.copy()
    for h in range(out.shape[0]):
        if ground[h]:
            m = material[h]
            if m >= roughness_m.shape[0]:
                raise IndexError('material byte out of the roughness table')
            sigma = rules.rough_range_sigma_m(roughness_m[m], np.float64(cos[h]))
            out[h] += sigma * z[beam[h]]
    return out
