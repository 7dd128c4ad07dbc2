"""
Issue 42's fog table: share of beams whose strongest return is fog, over the visibility.

Our model (core/physics/fog_microphysics.py: droplet share and fluctuation continuous in the
visibility) beside Hahner et al.'s fog simulation (ICCV 2021, "Fog Simulation on Real LiDAR
Point Clouds for 3D Object Detection in Adverse Weather", arXiv 2108.05249, sections 3.1-3.2
and Algorithm 1), implemented here from the paper's equations (not from its code) and applied
to our own clear-weather sweeps of the same scene:

- alpha = ln(20) / MOR, beta = 0.046 / MOR (MOR the visibility), no wavelength scaling;
- pulse sin^2(pi t / (2 tau_H)), tau_H = 20 ns (the paper's value), so in range
  i_soft(R) = C_A P_0 beta int_{R - c tau_H}^{R} xi(r) exp(-2 alpha r) / r^2
  sin^2(pi (R - r) / (c tau_H)) dr;
- a clear point at R0 of reflectivity rho (a Lambertian hard target, beta_0 = rho / pi) has
  i_hard = C_A P_0 beta_0 exp(-2 alpha R0) / R0^2 xi(R0);
- the point becomes fog (at the argmax of i_soft over R <= R0) when max i_soft > i_hard, else it
  stays (attenuated). A beam without a clear point gets no fog.
C_A P_0 and xi are the sensor's, from our radiometry (the paper's are for its own sensor):
C_A P_0 = pi S10 / 0.1 R10^2 (so a 10 % target at R10 gives S10 counts) and xi(r) our form factor
1 - exp(-(r / Rov)^2).

Flat world, sensor 2 m above the ground, strongest returns, no motion distortion, scans
0..seeds-1. Usage: python benchmarks/fog_continuity.py [--seeds N]
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The source tree before an installed copy (as weather_particles.py does).
sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from ubot_lidar_sim.core.physics import radiometry  # noqa: E402
from ubot_lidar_sim.core.physics.weather import Weather  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402
import weather_particles as wp  # noqa: E402

GRID_M = (20.0, 30.0, 40.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 400.0, 500.0, 700.0,
          1000.0, 2000.0)
PRESETS = ('velodyne_vlp16', 'velodyne_vlp32c', 'ouster_os1_64', 'livox_avia')
TAU_H_S = 20e-9        # Hahner et al. 2021, section 4 (tau_H = 20 ns)
C_M_S = 299792458.0
STEP_M = 0.02          # integration grid of i_soft (c tau_H = 6 m: 300 steps per pulse)
#: Shares below this (0.1 %) are not checked for steps (issue 42).
CHECKED_SHARE = 0.001


def soft_profile(alpha, overlap_m, max_range_m):
    """Return (R, I(R)): the sin^2 pulse convolved with xi exp(-2 alpha r) / r^2 (beta = 1)."""
    length = C_M_S * TAU_H_S
    r = np.arange(STEP_M, max_range_m + length, STEP_M)
    xi = 1.0 - np.exp(-(r / overlap_m) ** 2) if overlap_m > 0.0 else np.ones_like(r)
    channel = xi * np.exp(-2.0 * alpha * r) / r ** 2
    x = np.arange(0.0, length + STEP_M / 2, STEP_M)
    kernel = np.sin(math.pi * x / length) ** 2
    # I(R_i) = sum_j channel(r_i - x_j) kernel(x_j) dx: the pulse's leading edge at R_i.
    return r, np.convolve(channel, kernel)[:r.size] * STEP_M


def hahner_share(cfg, clear, visibility_m):
    """Return the share of beams (of clear.n_beams) that Hahner's rule turns into fog."""
    alpha = math.log(20.0) / visibility_m
    beta = 0.046 / visibility_m
    pts = clear.points
    if pts.size == 0:
        return 0.0
    r0 = pts['range'].astype(np.float64)
    ring = pts['ring'].astype(np.int64)
    r, prof = soft_profile(alpha, cfg.overlap_range_m, float(r0.max()))
    best = np.maximum.accumulate(prof)
    c_a_p0 = math.pi * cfg.signal_at_10pct_counts / 0.1 * radiometry.ring_r10(
        cfg.radiometry, ring, cfg.ring_range_at_10pct_m) ** 2
    i_soft = c_a_p0 * beta * np.interp(r0, r, best)
    xi0 = 1.0 - np.exp(-(r0 / cfg.overlap_range_m) ** 2) if cfg.overlap_range_m > 0 else 1.0
    rho = pts['reflectivity'].astype(np.float64)
    i_hard = c_a_p0 * rho / math.pi * xi0 * np.exp(-2.0 * alpha * r0) / r0 ** 2
    fog_beams = np.unique(clear.beam[i_soft > i_hard])
    return fog_beams.size / clear.n_beams


def rows(preset, materials, world, seeds):
    """Return (ours, hahner): shares over GRID_M, means over the seeds."""
    sim = wp._lidar(preset, materials, world)
    ours = [wp._clutter(sim, Weather(visibility_m=v), seeds)[1] for v in GRID_M]
    clears = [sim.scan(wp.POSE, 0.0, Weather(), scan_index=k) for k in range(seeds)]
    hahner = [float(np.mean([hahner_share(sim.cfg, c, v) for c in clears])) for v in GRID_M]
    return ours, hahner


def largest_step(shares):
    """Return the largest ratio of neighbouring shares where both exceed CHECKED_SHARE."""
    s = np.asarray(shares)
    both = (s[1:] > CHECKED_SHARE) & (s[:-1] > CHECKED_SHARE)
    if not both.any():
        return 1.0
    hi, lo = np.maximum(s[1:], s[:-1])[both], np.minimum(s[1:], s[:-1])[both]
    return float(np.max(hi / lo))


def setup(argv, doc):
    """Return (seeds, materials, the flat world) for a table script with a --seeds option."""
    ap = argparse.ArgumentParser(description=doc.split('\n')[1])
    ap.add_argument('--seeds', type=int, default=3)
    args = ap.parse_args(argv)
    materials = MaterialTable.load()
    return args.seeds, materials, World.load('flat', materials)


def main(argv=None):
    """Print the Markdown table."""
    seeds, materials, world = setup(argv, __doc__)
    print(f'Fog: share of beams whose strongest return is fog, % (mean of {seeds} sweeps); '
          'largest step between neighbours both above 0.1 %')
    print('| sensor | model | ' + ' | '.join(f'{v:g} m' for v in GRID_M) + ' | step |')
    print('|---|---|' + '---|' * (len(GRID_M) + 1))
    for preset in PRESETS:
        ours, hahner = rows(preset, materials, world, seeds)
        for name, shares in (('ours', ours), ('Hahner 2021', hahner)):
            cells = ' | '.join(f'{100.0 * s:.3g}' for s in shares)
            print(f'| {preset} | {name} | {cells} | {largest_step(shares):.2f}x |', flush=True)


if __name__ == '__main__':
    main()
