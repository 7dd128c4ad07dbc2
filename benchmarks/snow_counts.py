"""
Issue 42's snow table: the CADC statistic of the VLP-32C over 0.25-5 mm/h, both flake optics.

CADC (Pitropov et al. 2020): the points DROR removes from the sweep cropped to |x|, |y| <= 4 m,
-3 <= z <= 10 m (benchmarks/weather_particles.py, cadc_table), against the snowfall rate, with
the flakes' optical area from Mitchell's aggregate law (area_law, rate-independent) and from the
ITU-R-matched ratio of round 3 (itu_matched), and Hahner et al.'s snowfall simulation (CVPR 2022,
benchmarks/hahner_snow.py) applied to the clear sweeps of the same scans, with the sensor's form
factor and with the paper's. CADC's 75 drives span 26-1,443 points. Flat world, sensor 2 m above
the ground, strongest returns, scans 0..seeds-1.

Usage: python benchmarks/snow_counts.py [--seeds N]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The source tree before an installed copy (as weather_particles.py does).
sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fog_continuity  # noqa: E402
import hahner_snow  # noqa: E402
import numpy as np  # noqa: E402

from ubot_lidar_sim.core.physics.weather import Weather  # noqa: E402
import weather_particles as wp  # noqa: E402

RATES = (0.25, 0.375, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.5, 5.0)


def box_points(sim, rate, seeds):
    """Yield (xyz (N, 3), class_id (N,)) of the points in CADC's box, scans 0..seeds-1."""
    for k in range(seeds):
        res = sim.scan(wp.POSE, 0.0, Weather(snowfall_rate_mm_h=rate), scan_index=k)
        xyz = np.stack([res.points[a] for a in ('x', 'y', 'z')], axis=1)
        box = wp.in_cadc_box(xyz)
        yield xyz[box], res.points['class_id'][box]


def cadc_counts(sim, rate, seeds):
    """Return the mean DROR-removed points in CADC's box over scans 0..seeds-1."""
    return float(np.mean([int(wp.dror_removed(xyz).sum())
                          for xyz, _ in box_points(sim, rate, seeds)]))


def hahner_counts(sim, clears, rate, theirs_xi):
    """Return the mean DROR-removed points in CADC's box after Hahner's snowfall on clears."""
    removed = []
    for k, clear in enumerate(clears):
        rng = np.random.default_rng((k, int(round(rate * 1000)), int(theirs_xi)))
        xyz, _ = hahner_snow.apply(sim.cfg, clear, rate, rng, theirs_xi)
        removed.append(int(wp.dror_removed(xyz[wp.in_cadc_box(xyz)]).sum()))
    return float(np.mean(removed))


def _row(name, kind, n):
    step = float(np.max(n[1:] / np.maximum(n[:-1], 1.0)))
    cells = ' | '.join(f'{c:,.0f}' for c in n)
    print(f'| {name} | {kind} | {cells} | {step:.2f}x |', flush=True)


def main(argv=None):
    """Print the Markdown table."""
    seeds, materials, world = fog_continuity.setup(argv, __doc__)
    print(f'CADC statistic, velodyne_vlp32c, mean of {seeds} sweeps; largest step '
          'between neighbouring rates')
    print('| optics | snow | ' + ' | '.join(f'{r:g} mm/h' for r in RATES) + ' | step |')
    print('|---|---|' + '---|' * (len(RATES) + 1))
    for optics in ('area_law', 'itu_matched'):
        for kind in ('dry', 'wet'):
            sim = wp._lidar('velodyne_vlp32c', materials, world, snow_type=kind,
                            snow_flake_optics=optics)
            _row(optics, kind, np.array([cadc_counts(sim, r, seeds) for r in RATES]))
    clears = [sim.scan(wp.POSE, 0.0, Weather(), scan_index=k) for k in range(seeds)]
    for name, theirs in (('Hahner 2022, our form factor', False),
                         ('Hahner 2022, their form factor', True)):
        _row(name, '-', np.array([hahner_counts(sim, clears, r, theirs) for r in RATES]))


if __name__ == '__main__':
    main()
