"""
Run every benchmark case, print a table, write out/bench.json and plot out/bench.png.

Usage: python benchmarks/run_all.py [--out out/bench.json] [--quick] [--no-e2e] [--only A,geo]
"""

import argparse
import json
import os
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))

# First: common.py puts the source tree (or UBOT_LIDAR_SIM_TREE) ahead of install/ on sys.path.
import common  # noqa: E402,F401,I100
import bench_cli  # noqa: E402,I100
import bench_closed_loop  # noqa: E402
import bench_dataset  # noqa: E402
import bench_e2e  # noqa: E402
import bench_fleet  # noqa: E402
import bench_lidar  # noqa: E402
import bench_load  # noqa: E402
import bench_sdf  # noqa: E402
import bench_sdf_gazebo  # noqa: E402
import bench_sensors  # noqa: E402

COLUMNS = ('case', 'preset', 'sub_rays', 'return_mode', 'compute_workers', 'beams_per_scan',
           'points_per_scan', 'ms_per_scan_median', 'bare_cast_ms_median', 'ratio_to_bare_cast',
           'realtime_factor', 'cpu_ms_per_scan', 'peer', 'peer_ms_median', 'ratio_to_peer',
           'cpu_steal_pct')


E2E_COLUMNS = ('case', 'compute_process', 'compute_workers', 'trigger', 'column_blocks',
               'configured_rate_hz', 'achieved_rate_hz', 'achieved_over_configured',
               'latency_periods_median',
               'node_peak_rss_mb', 'cpu_steal_pct', 'error')


def _table(rows, columns):
    widths = [max(len(c), *(len(str(r.get(c, ''))) for r in rows)) for c in columns]
    print('  '.join(c.ljust(w) for c, w in zip(columns, widths)))
    for r in rows:
        print('  '.join(str(r.get(c, '')).ljust(w) for c, w in zip(columns, widths)))


def print_table(rows):
    """Print the scan cases, then each other group of cases, as fixed-width tables on stdout."""
    # (case-name prefix, columns) in print order; the scan cases are the rest.
    groups = (('E2E', E2E_COLUMNS), ('dataset', bench_dataset.COLUMNS),
              ('LOAD', bench_load.COLUMNS), ('FLEET', bench_fleet.COLUMNS),
              ('SDF', bench_sdf.COLUMNS), ('GAZEBO', bench_sdf_gazebo.COLUMNS),
              ('CLOSED', bench_closed_loop.COLUMNS),
              ('CLI', bench_cli.COLUMNS))
    scans = [r for r in rows if not r['case'].startswith(tuple(p for p, _ in groups))]
    if scans:
        _table(scans, COLUMNS)
    for prefix, columns in groups:
        group = [r for r in rows if r['case'].startswith(prefix)]
        if group:
            print()
            _table(group, columns)


def plot(rows, path):
    """Plot the scaling sweeps (ms per scan against beams, sub-rays, triangles) into path."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    sweeps = (('sweep_beams', 'beams_per_scan', 'beams per scan'),
              ('sweep_sub_rays', 'sub_rays', 'sub-rays per beam'),
              ('sweep_triangles', 'triangles', 'world triangles'))
    for ax, (prefix, key, label) in zip(axes, sweeps):
        sel = [r for r in rows if r['case'].startswith(prefix)]
        if not sel:
            continue
        x = [r[key] for r in sel]
        ax.plot(x, [r['ms_per_scan_median'] for r in sel], 'o-', label='full model')
        ax.plot(x, [r['bare_cast_ms_median'] for r in sel], 's--', label='bare open3d cast')
        ax.set_xlabel(label)
        ax.set_ylabel('ms per scan (median)')
        ax.set_title(f'cost against {label}')
        if key == 'triangles':
            ax.set_xscale('log')
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle('ubot_lidar_sim benchmark (2-core CPU, demo world)')
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    """Run the cases and write the outputs; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--out', default='out/bench.json')
    parser.add_argument('--quick', action='store_true', help='fewer scans (smoke test only)')
    parser.add_argument('--no-e2e', action='store_true', help='skip the node end-to-end case')
    parser.add_argument('--only', default=None,
                        help='comma-separated case-name prefixes to run (D, E: the laser and '
                             'terrain cases; dataset: the dataset runner); the E2E cases run '
                             'unless --no-e2e')
    args = parser.parse_args(argv)
    only = None if args.only is None else [p for p in args.only.split(',') if p]
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    repeats = 5 if args.quick else 20
    rows = bench_lidar.run(repeats, only)
    if only is None or any(p in ('D', 'E') for p in only):
        rows += bench_sensors.run(repeats)
    if only is None or any(p.startswith('dataset') for p in only):
        # Dataset runner: 1 worker in process, then 2 Ray workers (bench_dataset.py).
        rows += bench_dataset.run(4, 5, rounds=1) if args.quick else bench_dataset.run(16, 30)
    if only is None or any(p.startswith('FLEET') for p in only):
        # N robots x 3 sensors in one process (issue 28): every sensor's rate (bench_fleet.py).
        rows += bench_fleet.run(8.0 if args.quick else 20.0)
    if only is None or any(p.startswith('SDF') for p in only):
        # An SDF warehouse of 50 generated COLLADA meshes: cold / warm load, cast vs demo.
        rows += [bench_sdf.run(5 if args.quick else 20)]
        # 150 models with relative file:// meshes and a 100-box population: cold / warm load.
        rows += [bench_sdf_gazebo.run(3 if args.quick else 5)]
    if only is None or any(p.startswith('CLI') for p in only):
        # presets, --help, a bad --set: wall time beside `import numpy` (bench_cli.py).
        rows += bench_cli.run(3 if args.quick else 10)
    if not args.no_e2e:
        seconds = 10.0 if args.quick else 30.0
        # The node with its defaults (trigger timer, column blocks auto: 8, computed in its own
        # process as they fire), then its column blocks in two compute processes (the setting
        # for a LiDAR node on a 2-core machine) and in one (as `python -m ubot_lidar_sim run`
        # does).
        rows += bench_e2e.run(seconds)
        rows += bench_e2e.run(seconds, compute_workers=2, case='E2E_workers')
        rows += bench_e2e.run(seconds, compute_process=True, case='E2E_compute_process')
        # The reliability load (1 kHz /tf, three sensors): scans skipped for CPU vs the target.
        rows += bench_load.run(seconds + 10.0)
        # base_sim at real_time_factor max with laser_scan and lidar_3d (issue 40).
        rows += bench_closed_loop.run(seconds)
    print_table(rows)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + '\n')
    plot(rows, out.with_suffix('.png'))
    print(f'wrote {out} and {out.with_suffix(".png")}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
