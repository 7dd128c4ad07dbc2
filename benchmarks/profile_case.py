"""
Phase timings (and optionally a pyinstrument profile) of one lidar_3d benchmark case.

Usage: python benchmarks/profile_case.py A|B|C [--scans N] [--profile] [--kernels]
Prints the median of each ScanResult.timing_ms phase over N scans after a warm-up; --kernels
also times the trace's casts and its layer kernel per sweep (the rays cast, the calls).
"""

import argparse
from pathlib import Path
import statistics
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lidar import CLEAR, MOVING, POSE0, RAIN  # noqa: E402
from common import lidar_config  # noqa: E402

from ubot_lidar_sim.core.poses import BodyTwist  # noqa: E402
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402

CASES = {
    'A': ('velodyne_vlp16', RAIN, True,
          {'sub_rays': 7, 'return_mode': 'dual_strongest_last', 'motion_distortion': True}),
    'B': ('ouster_os1_128', CLEAR, True,
          {'sub_rays': 1, 'return_mode': 'strongest', 'motion_distortion': True}),
    'C': ('ouster_os1_128', RAIN, True, {'sub_rays': 7, 'return_mode': 'dual_strongest_last'}),
}


def main(argv=None):
    """Run the case and print its phase medians; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('case', choices=sorted(CASES))
    parser.add_argument('--scans', type=int, default=20)
    parser.add_argument('--profile', action='store_true')
    parser.add_argument('--kernels', action='store_true')
    args = parser.parse_args(argv)
    preset, weather, moving, overrides = CASES[args.case]
    cfg = lidar_config(preset, **overrides)
    sim = LidarSimulator(cfg, World.load('demo'), MaterialTable.load())
    pose_at = BodyTwist(POSE0, MOVING if moving else (0.0,) * 6)
    for k in range(3):
        sim.scan(pose_at, k * cfg.period_s, weather, k)
    profiler = None
    if args.profile:
        from pyinstrument import Profiler
        profiler = Profiler(interval=0.0005)
        profiler.start()
    spent = _time_trace_pieces() if args.kernels else None
    phases, wall = {}, []
    c0 = time.process_time()
    for k in range(3, 3 + args.scans):
        t0 = time.perf_counter()
        res = sim.scan(pose_at, k * cfg.period_s, weather, k)
        wall.append((time.perf_counter() - t0) * 1e3)
        for key, value in res.timing_ms.items():
            phases.setdefault(key, []).append(value)
    cpu_ms = (time.process_time() - c0) * 1e3 / args.scans
    if profiler is not None:
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))
    print(f'case {args.case}: wall median {statistics.median(wall):.1f} ms (min '
          f'{min(wall):.1f}), cpu {cpu_ms:.1f} ms per scan, points {len(res.points)}')
    print('  ' + ', '.join(f'{k} {statistics.median(v):.1f}' for k, v in phases.items()))
    if spent is not None:
        print('  per sweep: ' + ', '.join(
            f'{name} {total / args.scans * 1e3:.2f} ms in {calls / args.scans:.0f} calls'
            for name, (total, calls) in spent.items()
            if name != 'rays') + f', {spent["rays"][0] / args.scans:.0f} rays cast')
    return 0


def _time_trace_pieces():
    """Wrap the caster's cast and the layer kernel with timers; returns their running sums."""
    from ubot_lidar_sim.core.raycast import open3d_caster, tracer
    spent = {'cast': [0.0, 0], 'finish_layer': [0.0, 0], 'rays': [0, 0]}

    def timed(name, fn):
        def call(*args):
            t0 = time.perf_counter()
            out = fn(*args)
            spent[name][0] += time.perf_counter() - t0
            spent[name][1] += 1
            return out
        return call

    cast = timed('cast', open3d_caster.Open3dCaster.cast_rays)

    def cast_rays(self, rays, ignored=frozenset()):
        spent['rays'][0] += rays.shape[0]
        return cast(self, rays, ignored)

    open3d_caster.Open3dCaster.cast_rays = cast_rays
    tracer.finish_layer = timed('finish_layer', tracer.finish_layer)
    return spent


if __name__ == '__main__':
    sys.exit(main())
