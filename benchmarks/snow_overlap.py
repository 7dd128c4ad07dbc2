"""
The CADC snow statistic of the VLP-32C under near fields shaped by the HDL-64E focal distance.

The HDL-64E S2/S2.1 manual (appendix F) says a reference target's raw intensity is largest at
a per-laser focal distance, on average 15 m (upper block) and 8 m (lower block). With the
form factor O(R) = 1 - exp(-(R / Rov)^n), a fixed target's signal O(R) / R^2 never peaks for
n = 2 (the default); for n > 2 it peaks at R = Rov u^(1/n), n u = 2 (e^u - 1). Rows: the
preset; n = 2 with Rov = focal distance (the square law that keeps O(R) <= (R / fd)^2, the
largest collection a peak at fd allows); n = 3 and 4 with Rov placing the peak at fd.
Dry snow, area_law optics, scans 0..seeds-1, as benchmarks/snow_counts.py (cadc_counts), plus
the count in clear air (the ground's own DROR removals) and the snow points in the box.
No default changes: each row overrides overlap_range_m and overlap_exponent.

Usage: python benchmarks/snow_overlap.py [--seeds N]
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fog_continuity  # noqa: E402
import numpy as np  # noqa: E402
from snow_counts import box_points, cadc_counts  # noqa: E402
import weather_particles as wp  # noqa: E402

RATES = (0.5, 1.0, 2.0, 2.5)
#: HDL-64E S2/S2.1 manual, appendix F: average focal distance per block, m.
FOCAL_M = (('upper', 15.0), ('lower', 8.0))


def peak_u(n):
    """Return u > 0 with n u = 2 (e^u - 1) (n > 2): (R_peak / Rov)^n of O(R) / R^2 (Newton)."""
    u = 2.0 * (n - 2.0)         # above the root: f(u) = 2 (e^u - 1) - n u is convex
    for _ in range(60):
        u -= (2.0 * math.expm1(u) - n * u) / (2.0 * math.exp(u) - n)
    return u


def box_snow_points(sim, rate, seeds):
    """Return the mean class-20 (snow) points in CADC's box over scans 0..seeds-1."""
    return float(np.mean([int(np.sum(c == wp.CLUTTER)) for _, c in box_points(sim, rate, seeds)]))


def variants():
    """Return (label, overlap_range_m, overlap_exponent) rows."""
    rows = [('preset (Rov 11.8 m, n 2)', 11.8, 2.0)]
    for block, fd in FOCAL_M:
        rows.append((f'{block} fd {fd:g} m: Rov = fd, n 2', fd, 2.0))
        for n in (3.0, 4.0):
            rov = fd / peak_u(n) ** (1.0 / n)
            rows.append((f'{block} fd {fd:g} m: peak at fd, n {n:g} (Rov {rov:.2f} m)', rov, n))
    return rows


def main(argv=None):
    """Print the Markdown table."""
    seeds, materials, world = fog_continuity.setup(argv, __doc__)
    print(f'CADC statistic, velodyne_vlp32c, dry snow, area_law, mean of {seeds} sweeps')
    print('| near field | ' + ' | '.join(f'{r:g} mm/h' for r in RATES)
          + ' | clear air | snow points in the box, 2.5 mm/h |')
    print('|---|' + '---|' * (len(RATES) + 2))
    for label, rov, n in variants():
        sim = wp._lidar('velodyne_vlp32c', materials, world, snow_type='dry',
                        snow_flake_optics='area_law', overlap_range_m=rov, overlap_exponent=n)
        cells = ' | '.join(f'{cadc_counts(sim, r, seeds):,.0f}' for r in RATES + (0.0,))
        print(f'| {label} | {cells} | {box_snow_points(sim, RATES[-1], seeds):,.0f} |',
              flush=True)


if __name__ == '__main__':
    main()
