"""
Dataset runner throughput: sequences per minute and points per second, 1 worker and 2 workers.

1 worker runs in this process (``--workers 1``, no Ray); N > 1 runs on an embedded local Ray
started before the clock runs (its start-up is reported apart, as ray_start_s). Each worker's
peak RSS is the largest ``peak_rss_mb`` of the manifest rows it wrote.

Usage: python benchmarks/bench_dataset.py [--sequences 6] [--frames 10] [--workers 1 2]
"""

import argparse
import dataclasses
import json
from pathlib import Path
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402,F401,I100  (puts the source tree on sys.path)
from ubot_lidar_sim.dataset import runner  # noqa: E402,I100
from ubot_lidar_sim.dataset.spec import parse_spec  # noqa: E402

COLUMNS = ('case', 'workers', 'sequences', 'frames', 'points', 'wall_s', 'sequences_per_min',
           'points_per_s', 'speedup', 'peak_rss_mb_per_worker', 'ray_start_s',
           'cpu_steal_pct')


def spec(sequences, frames):
    """Return the benchmark's spec: a VLP-16 on the demo world, 3 weathers x seeds."""
    weathers = [{}, {'rain_mm_h': 8.0}, {'visibility_m': 300.0}]
    seeds = list(range(max(1, -(-sequences // len(weathers)))))
    data = {'worlds': ['demo'], 'frames': frames, 'seeds': seeds,
            'trajectories': [{'name': 'drive', 'pose': [-10, -5, 0.4, 0, 0, 0],
                              'twist': [2.0, 0, 0, 0, 0, 5.0]}],
            'sensors': [{'type': 'lidar_3d', 'preset': 'velodyne_vlp16',
                         'mount': [0, 0, 1.2, 0, 0, 0]}],
            'weather': weathers, 'compression': 'zstd'}
    full = parse_spec(data, '<bench>')
    return dataclasses.replace(full, sequences=full.sequences[:sequences])


def _ray_start(workers):
    t0 = time.perf_counter()
    runner.start_ray(workers)
    return time.perf_counter() - t0


def run(sequences=6, frames=10, workers=(1, 2)):
    """Run the spec once per worker count; returns one result row per count."""
    the_spec = spec(sequences, frames)
    rows = []
    for n in workers:
        ray_start = None
        if n > 1:
            ray_start = round(_ray_start(n), 2)
        before = common.cpu_times()
        try:
            with tempfile.TemporaryDirectory(prefix='bench_dataset_') as out:
                summary = runner.run(the_spec, out, workers=n, show_progress=False)
                manifest = list(runner.read_manifest(out).values())
        finally:
            if n > 1:
                import ray
                ray.shutdown()
        wall = summary['wall_s']
        rows.append({
            'case': f'dataset_{n}_worker{"s" if n > 1 else ""}', 'workers': n,
            'sequences': summary['recorded'], 'frames': summary['frames'],
            'points': summary['points'], 'wall_s': round(wall, 2),
            'sequences_per_min': round(60.0 * summary['recorded'] / wall, 2),
            'points_per_s': round(summary['points'] / wall),
            'peak_rss_mb_per_worker': max(r['peak_rss_mb'] for r in manifest),
            'ray_start_s': ray_start, 'cpu_steal_pct': common.steal_pct(before)})
    base = rows[0]['points_per_s']
    for r in rows:
        r['speedup'] = round(r['points_per_s'] / base, 2)
    return rows


def main(argv=None):
    """Print the rows as JSON lines; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--sequences', type=int, default=6)
    parser.add_argument('--frames', type=int, default=10)
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    args = parser.parse_args(argv)
    for row in run(args.sequences, args.frames, tuple(args.workers)):
        print(json.dumps(row))
    return 0


if __name__ == '__main__':
    sys.exit(main())
