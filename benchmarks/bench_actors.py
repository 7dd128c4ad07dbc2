"""
Case A and case A with 10 actors swept in turn: what the actors cost on a busy machine.

Usage: python benchmarks/bench_actors.py [--scans N] [--workers W]
(UBOT_LIDAR_SIM_TREE=DIR: the code of another tree, e.g. an export of the commit before a change.)

bench_lidar's A_actors_10 rows time A and A with actors one after the other, so a change of the
machine's load between them reads as a cost. Here one sweep of each alternates (workers 0: in
this process; W: W compute processes each, worker.ScanProcess), and each pair of sweeps gives a
ratio: the median of the pairs' wall-time ratios and the ratio of the mean CPU times (this process
and the compute processes) are printed with the load average.
"""

import argparse
import os
import statistics
import time

from bench_lidar import BLOCKS, demo_with_actors, MOVING, POSE0, RAIN
from common import lidar_config, process_cpu_s
import numpy as np

from ubot_lidar_sim.core.execution.worker import ScanProcess, sweep
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

WARM_UP = 3         # sweeps of each before the timed ones (kernels loaded, scenes built)


def measure(scans, workers):
    """Return {name: (wall ms list, CPU ms list)} of A and A_actors_10, swept in turn."""
    materials = MaterialTable.load()
    cfg = lidar_config('velodyne_vlp16', sub_rays=7, return_mode='dual_strongest_last',
                       motion_distortion=True, column_blocks=BLOCKS)
    worlds = {'A': World.load('demo'), 'A_actors_10': demo_with_actors(10, materials)}
    sims = {name: LidarSimulator(cfg, w, materials) for name, w in worlds.items()}
    pools = {name: ScanProcess(cfg, w, materials, workers) if workers else None
             for name, w in worlds.items()}
    pose_at = BodyTwist(POSE0, MOVING)
    out = {name: ([], []) for name in worlds}
    try:
        for k in range(WARM_UP + scans):
            for name, sim in sims.items():
                pids = [os.getpid()] + (pools[name].pids if pools[name] else [])
                t0, c0 = time.perf_counter(), process_cpu_s(pids)
                sweep(sim, pools[name], pose_at, Sweep(k * cfg.period_s, RAIN, k))
                if k >= WARM_UP:
                    out[name][0].append((time.perf_counter() - t0) * 1e3)
                    out[name][1].append((process_cpu_s(pids) - c0) * 1e3)
    finally:
        for pool in pools.values():
            if pool is not None:
                pool.close()
    return out


def main(argv=None):
    """Print A's and A_actors_10's ms per scan and their ratios; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--scans', type=int, default=40)
    parser.add_argument('--workers', type=int, default=0)
    args = parser.parse_args(argv)
    (wall_a, cpu_a), (wall_b, cpu_b) = measure(args.scans, args.workers).values()
    paired = float(np.median(np.array(wall_b) / np.array(wall_a)))
    # CPU ticks are 10 ms: the means over the timed sweeps, not medians of single sweeps.
    ca, cb = statistics.mean(cpu_a), statistics.mean(cpu_b)
    print(f'workers {args.workers}: A {statistics.median(wall_a):.1f} ms, A_actors_10 '
          f'{statistics.median(wall_b):.1f} ms per scan (paired {100 * (paired - 1):+.0f} %); '
          f'CPU {ca:.1f} / {cb:.1f} ms per scan ({100 * (cb / ca - 1):+.0f} %); load '
          f'{os.getloadavg()[0]:.2f} ({args.scans} scans each)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
