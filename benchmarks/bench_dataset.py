"""
Dataset runner throughput: sequences per minute and points per second, 1 worker and 2 workers.

1 worker runs in this process (``--workers 1``, no Ray), once with open3d casting on every core
(dataset_1_worker, what ``--workers 1`` does) and once casting on one thread
(dataset_1_worker_1_cpu: one worker on one CPU, as each Ray worker runs); N > 1 runs on an
embedded local Ray of max(workers) CPUs, N sequences at a time, each task on one CPU.
speedup: over dataset_1_worker; speedup_over_1_cpu: over dataset_1_worker_1_cpu. The clock
runs in steady state: before it, Ray starts (ray_start_s) and every worker imports the package,
loads the world and records one frame (worker_start_s, the slowest worker); the 1-worker case
warms up the same way. The cases then
alternate for ``rounds`` rounds and each row reports its median wall time, so that a background
load that comes and goes hits every count alike (load_avg: the 1-minute load at the start).
peak_rss_mb_per_worker: the largest ``peak_rss_mb`` of the manifest rows; cpu_share: the
workers' CPU time (rows' ``cpu_s``) over workers x wall time, 1.0 when each had its core all
along (less: other processes took CPU, or a worker waited); points_per_cpu_s: the points over
the workers' CPU time, what a worker yields per second of a core it has to itself.

Usage: python benchmarks/bench_dataset.py [--sequences 6] [--frames 10] [--workers 1 2]
                                          [--rounds 3]
"""

import argparse
import dataclasses
import json
from pathlib import Path
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))

import common  # noqa: E402,F401,I100  (puts the source tree on sys.path)
from ubot_lidar_sim.dataset import ray_pool, runner  # noqa: E402,I100
from ubot_lidar_sim.dataset.spec import parse_spec  # noqa: E402

COLUMNS = ('case', 'workers', 'sequences', 'frames', 'points', 'wall_s', 'sequences_per_min',
           'points_per_s', 'speedup', 'speedup_over_1_cpu', 'wall_s_rounds', 'cpu_share',
           'points_per_cpu_s', 'peak_rss_mb_per_worker',
           'ray_start_s', 'worker_start_s', 'load_avg', 'cpu_steal_pct')


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


def _warm(the_spec, seq, cast_threads=0):
    """Record one frame of seq in this process (imports, world, first-scan caches); s taken."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix='bench_dataset_warm_') as out:
        runner.run_sequence(the_spec, dataclasses.replace(seq, frames=1), out, cast_threads)
    took = time.perf_counter() - t0
    time.sleep(0.5)          # keep this worker busy so the next warm-up goes to another one
    return took


def _start(the_spec, workers):
    """Start Ray and warm each worker; returns (ray_start_s, worker_start_s)."""
    import ray
    t0 = time.perf_counter()
    ray_pool.start_ray(workers)
    ray_start = time.perf_counter() - t0
    # The workers cannot import this file (benchmarks/ is not a package): send _warm by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    warm = ray.remote(num_cpus=1)(_warm)
    seq = the_spec.sequences[0]
    return ray_start, max(ray.get([warm.remote(the_spec, seq, 1) for _ in range(workers)]))


def _load_avg():
    try:
        with open('/proc/loadavg') as f:
            return float(f.read().split()[0])
    except OSError:
        return None


def cases(workers):
    """
    Return the (case name, workers, serial cast threads) to time for the worker counts.

    1 worker runs twice: as ``--workers 1`` runs it (in process, open3d casting on every core)
    and on one CPU (casting on one thread, as each Ray worker does): the per-worker baseline.
    """
    out = []
    for n in workers:
        if n == 1:
            out += [('dataset_1_worker', 1, 0), ('dataset_1_worker_1_cpu', 1, 1)]
        else:
            out.append((f'dataset_{n}_workers', n, 0))
    return out


def run(sequences=6, frames=10, workers=(1, 2), rounds=3):
    """Run the spec ``rounds`` times per case, alternating; one row per case."""
    import ray

    the_spec = spec(sequences, frames)
    load = _load_avg()
    todo = cases(workers)
    starts = {1: (None, round(_warm(the_spec, the_spec.sequences[0]), 2))}
    if max(workers) > 1:
        ray_start, worker_start = _start(the_spec, max(workers))
        starts.update({n: (round(ray_start, 2), round(worker_start, 2)) for n in workers
                       if n > 1})
    walls, shares, cpus = ({name: [] for name, _, _ in todo} for _ in range(3))
    results = {}
    before = common.cpu_times()
    try:
        for _ in range(rounds):
            for name, n, threads in todo:
                with tempfile.TemporaryDirectory(prefix='bench_dataset_') as out:
                    summary = runner.run(the_spec, out, workers=n, show_progress=False,
                                         serial_cast_threads=threads)
                    manifest = list(runner.read_manifest(out).values())
                walls[name].append(summary['wall_s'])
                cpus[name].append(sum(r['cpu_s'] for r in manifest))
                shares[name].append(cpus[name][-1] / (n * summary['wall_s']))
                results[name] = (summary, max(r['peak_rss_mb'] for r in manifest))
    finally:
        if ray.is_initialized():
            ray.shutdown()
    steal = common.steal_pct(before)
    rows = []
    for name, n, _ in todo:
        summary, rss = results[name]
        wall = statistics.median(walls[name])
        rows.append({
            'case': name, 'workers': n,
            'sequences': summary['recorded'], 'frames': summary['frames'],
            'points': summary['points'], 'wall_s': round(wall, 2),
            'wall_s_rounds': [round(w, 2) for w in walls[name]],
            'cpu_share': round(statistics.median(shares[name]), 2),
            'points_per_cpu_s': round(summary['points'] / statistics.median(cpus[name])),
            'sequences_per_min': round(60.0 * summary['recorded'] / wall, 2),
            'points_per_s': round(summary['points'] / wall), 'peak_rss_mb_per_worker': rss,
            'ray_start_s': starts[n][0], 'worker_start_s': starts[n][1], 'load_avg': load,
            'cpu_steal_pct': steal})
    base = {r['case']: r['points_per_s'] for r in rows}
    for r in rows:
        r['speedup'] = round(r['points_per_s'] / rows[0]['points_per_s'], 2)
        if 'dataset_1_worker_1_cpu' in base:
            r['speedup_over_1_cpu'] = round(r['points_per_s'] / base['dataset_1_worker_1_cpu'],
                                            2)
    return rows


def main(argv=None):
    """Print the rows as JSON lines; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--sequences', type=int, default=6)
    parser.add_argument('--frames', type=int, default=10)
    parser.add_argument('--workers', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--rounds', type=int, default=3)
    args = parser.parse_args(argv)
    for row in run(args.sequences, args.frames, tuple(args.workers), args.rounds):
        print(json.dumps(row))
    return 0


if __name__ == '__main__':
    sys.exit(main())
