"""
Hahner et al.'s snowfall simulation (CVPR 2022) on our own clear sweeps, for the CADC table.

"LiDAR Snowfall Simulation for Robust 3D Object Detection" (arXiv 2203.15118), section 3,
implemented here from its equations (not from its code) and applied to our clear sweeps:

- occupancy (volume share of snow) phi = rho_w r_s / (3.6e6 rho_s v_s), r_s the snowfall rate
  (mm/h), flake density rho_s = 0.1 g cm^-3, fall speed v_s (m/s; 1 m/s here);
- flake diameters exponential with the slope of Gunn & Marshall (1958), Lambda = 25.5 r_r^-0.48
  cm^-1, at the rain rate r_r that the paper pairs with r_s, r_s = 487 rho_s D_s v_s r_r^(2/3)
  (D_s = 0.003), no diameter above 2 cm; flakes are opaque spheres;
- per laser line, flakes in the plane of the line: each sphere cut by the plane at a uniform
  height, a disc of mean area pi E[D^2] / 6, so phi / (pi E[D^2] / 6) discs per m^2 (a Poisson
  field here; the paper throws non-overlapping darts, the same at phi ~ 1e-6);
- the beam is a wedge of the sensor's horizontal divergence theta; a flake at range r of disc
  radius a covers the share of the wedge's angle its angular interval 2 asin(a / r) overlaps;
  the target keeps the uncovered share;
- a flake returns C_A P_0 (0.9 / pi) share xi(r) / r^2 (a 90 % reflector), the target
  C_A P_0 (rho / pi) share_left xi(R0) / R0^2 (no other attenuation); the point moves to the
  strongest echo (the peak of the sin^2 pulses; here the strongest single echo: two flakes
  within a pulse length of one beam are rare at these densities) and is kept whatever its
  strength; beams without a clear point get no flake.
C_A P_0 and xi are the sensor's (as in benchmarks/fog_continuity.py): C_A P_0 = pi S10 / 0.1
R10^2, xi(r) = 1 - exp(-(r / Rov)^2); "their xi" is the paper's: 0 below 0.9 m, 1 beyond 1 m,
linear between.
"""

import math

import numpy as np

from ubot_lidar_sim.core.physics import radiometry

RHO_S = 0.1          # g cm^-3, flake density (Hahner et al. 2022)
V_S = 1.0            # m/s, fall speed (the paper samples 0.2-2 m/s)
D_S = 0.003          # the D_s of the paper's snowfall-to-rain-rate relation
D_MAX_MM = 20.0      # no flake above 2 cm
FLAKE_RHO = 0.9      # flakes are 90 % reflectors
R_MAX_M = 10.0       # flakes beyond 10 m never outshine a target here (share / r^2)
MOVED_M = 0.2        # a peak within 2 bins (0.1 m) of the target only dims it


def rain_rate(snowfall_mm_h):
    """Return the paper's rain rate r_r, mm/h, of a snowfall rate: r_s = 487 rho D v r_r^(2/3)."""
    return (snowfall_mm_h / (487.0 * RHO_S * D_S * V_S)) ** 1.5


def discs_per_m2(snowfall_mm_h):
    """Return (discs per m^2 of a line's plane, the slope Lambda in 1/mm)."""
    phi = snowfall_mm_h / (3.6e6 * RHO_S * V_S)
    lam = 2.55 * rain_rate(snowfall_mm_h) ** -0.48           # 25.5 cm^-1 = 2.55 mm^-1
    d = np.linspace(0.0, D_MAX_MM, 4001)
    w = np.exp(-lam * d)
    mean_d2_m2 = float(np.trapezoid(d * d * w, d) / np.trapezoid(w, d)) * 1e-6
    return phi / (math.pi * mean_d2_m2 / 6.0), lam


def _flakes(rng, n_per_m2, lam):
    """Return (range m, azimuth rad, disc radius m) of one line's discs within R_MAX_M."""
    n = rng.poisson(n_per_m2 * math.pi * R_MAX_M ** 2)
    r = R_MAX_M * np.sqrt(rng.random(n))
    az = rng.random(n) * 2.0 * math.pi
    d = rng.exponential(1.0 / lam, size=n)
    while np.any(d > D_MAX_MM):
        big = d > D_MAX_MM
        d[big] = rng.exponential(1.0 / lam, size=int(big.sum()))
    h = (rng.random(n) - 0.5) * d
    return r, az, np.sqrt(np.maximum(0.25 * d * d - h * h, 0.0)) * 1e-3


def _xi(cfg, r, theirs):
    if theirs:
        return np.clip((r - 0.9) / 0.1, 0.0, 1.0)
    return 1.0 - np.exp(-(r / cfg.overlap_range_m) ** 2)


def wedge_share(delta, half, theta):
    """
    Return the share of a wedge of angle theta that a disc of angular half-width half covers.

    delta: the disc centre's angle from the wedge's axis (rad).
    """
    lo = np.maximum(delta - half, -theta / 2)
    hi = np.minimum(delta + half, theta / 2)
    return np.clip((hi - lo) / theta, 0.0, 1.0)


def _pairs(beam_az, flake_az, reach):
    """Return (beam index, flake index) of the flakes whose interval reaches a beam's centre."""
    order = np.argsort(beam_az)
    ext = np.concatenate([beam_az[order] - 2 * math.pi, beam_az[order],
                          beam_az[order] + 2 * math.pi])
    idx = np.concatenate([order, order, order])
    lo = np.searchsorted(ext, flake_az - reach, side='left')
    hi = np.searchsorted(ext, flake_az + reach, side='right')
    flake = np.repeat(np.arange(flake_az.size), hi - lo)
    pos = np.arange(flake.size) - np.repeat(np.cumsum(hi - lo) - (hi - lo), hi - lo)
    return idx[np.repeat(lo, hi - lo) + pos], flake


def apply(cfg, clear, snowfall_mm_h, rng, theirs_xi=False):
    """Return (xyz (N, 3), is_flake (N,)) of a clear sweep's points after Hahner's snowfall."""
    pts = clear.points
    xyz = np.stack([pts[a] for a in ('x', 'y', 'z')], axis=1).astype(np.float64)
    flake_pt = np.zeros(pts.size, bool)
    if pts.size == 0 or snowfall_mm_h <= 0.0:
        return xyz, flake_pt
    n2, lam = discs_per_m2(snowfall_mm_h)
    theta = cfg.divergence_mrad * 1e-3
    r0 = pts['range'].astype(np.float64)
    az = np.arctan2(pts['y'], pts['x']).astype(np.float64) % (2 * math.pi)
    c_a_p0 = math.pi * cfg.signal_at_10pct_counts / 0.1 * radiometry.ring_r10(
        cfg.radiometry, pts['ring'].astype(np.int64), cfg.ring_range_at_10pct_m) ** 2
    hard = c_a_p0 * pts['reflectivity'] / math.pi * _xi(cfg, r0, theirs_xi) / r0 ** 2
    for ring in np.unique(pts['ring']):
        on = np.flatnonzero(pts['ring'] == ring)
        fr, faz, fa = _flakes(rng, n2, lam)
        half = np.arcsin(np.minimum(fa / fr, 1.0))
        b, f = _pairs(az[on], faz, half + theta / 2)
        b = on[b]
        near = fr[f] < r0[b]
        b, f = b[near], f[near]
        share = wedge_share(np.angle(np.exp(1j * (faz[f] - az[b]))), half[f], theta)
        power = c_a_p0[b] * FLAKE_RHO / math.pi * share * _xi(cfg, fr[f], theirs_xi) / fr[f] ** 2
        covered = np.zeros(pts.size)
        np.add.at(covered, b, share)
        best = np.zeros(pts.size)
        np.maximum.at(best, b, power)
        win = (power == best[b]) & (power > hard[b] * np.clip(1.0 - covered[b], 0.0, 1.0)) \
            & (r0[b] - fr[f] >= MOVED_M)
        xyz[b[win]] *= (fr[f[win]] / r0[b[win]])[:, None]
        flake_pt[b[win]] = True
    return xyz, flake_pt
