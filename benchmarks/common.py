"""
Shared helpers of the benchmarks: timing medians, the bare-cast reference, one result row.

Every case times its scans after a warm-up and reports medians; the reference is the world's
caster (open3d by default) casting the same primary sub-rays once on the same world in the same
run (bare_cast_ms_median).
"""

import os
from pathlib import Path
import statistics
import sys
import time

import numpy as np

# Benchmark the source tree, not a possibly stale install/ copy that env.sh puts on the path
# (UBOT_LIDAR_SIM_TREE names another tree, e.g. an export of the code before a change).
sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or str(Path(__file__).resolve().parents[1]))

from ubot_lidar_sim.core.beams import firing  # noqa: E402
from ubot_lidar_sim.core.config import from_dict, LidarConfig  # noqa: E402
from ubot_lidar_sim.core.config.presets import load_preset  # noqa: E402
from ubot_lidar_sim.core.physics import footprint  # noqa: E402
from ubot_lidar_sim.core.physics.footprint import sub_ray_pattern  # noqa: E402

WARMUP = 3
# CPU time the hypervisor gave to other guests (%, /proc/stat 'steal') during the last
# paired_median_ms: this VM's CPUs are shared, and a high steal slows every case alike.
LAST_STEAL_PCT = [None]


def cpu_times():
    """Return (steal, total) jiffies of all CPUs from /proc/stat ((0, 0) off Linux)."""
    try:
        with open('/proc/stat') as f:
            values = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    return (values[7] if len(values) > 7 else 0), sum(values[:8])


def process_cpu_s(pids):
    """Return the CPU time (user + system, s) the processes pids have used so far."""
    total = 0
    for pid in pids:
        try:
            with open(f'/proc/{pid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])        # utime, stime (stat fields 14, 15)
    return total / os.sysconf('SC_CLK_TCK')


def steal_pct(before):
    """Return the steal share (%) of the CPU time since before = cpu_times()."""
    now = cpu_times()
    total = now[1] - before[1]
    return round(100.0 * (now[0] - before[0]) / total, 1) if total > 0 else None


def medians_ms(fns, repeats, warmup=WARMUP):
    """
    Median wall times in ms of each fn() of fns over `repeats` rounds, one call of each a round.

    Alternating keeps them all under the same machine load, so their ratios are fair even when
    other processes come and go during the run.
    """
    for _ in range(warmup):
        for fn in fns:
            fn()
    times = [[] for _ in fns]
    before = cpu_times()
    for _ in range(repeats):
        for fn, out in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t0) * 1e3)
    LAST_STEAL_PCT[0] = steal_pct(before)
    return [statistics.median(t) for t in times]


def paired_median_ms(fn, reference, repeats, warmup=WARMUP):
    """Median wall times in ms of fn() and reference() over `repeats` alternating calls."""
    return tuple(medians_ms((fn, reference), repeats, warmup))


def bare_cast(world, origins, dirs):
    """Return a function casting the rays once with the world's caster (each case's reference)."""
    rays = np.ascontiguousarray(np.hstack([origins, dirs]), dtype=np.float32)
    caster = world.caster
    return lambda: caster.cast_rays(rays)


def lidar_config(preset, **overrides):
    """Build the LidarConfig of a preset with explicit overrides (same precedence as the node)."""
    params = dict(load_preset(preset))
    params.update(overrides)
    params['preset'] = preset
    return from_dict(LidarConfig, params)


def primary_rays(cfg, pose):
    """
    Origins and unit directions (N, 3) float32 of every primary (sub-)ray of one sweep.

    All from the same pose: the reference needs the rays, not their timing.
    """
    beams = firing.build_beams(cfg)
    # The geometric model casts each beam's centre ray only.
    sub_rays = 1 if getattr(cfg, 'model', 'physical') == 'geometric' else cfg.sub_rays
    offsets, _ = sub_ray_pattern(sub_rays, cfg.divergence_mrad)
    dirs = footprint.sub_ray_directions(beams.dir_sensor, offsets) @ pose[:3, :3].T
    origins = np.broadcast_to(pose[:3, 3], dirs.shape)
    return origins.astype(np.float32), dirs.astype(np.float32)


def row(case, preset, sub_rays, return_mode, weather, beams, points, ms, bare_ms, rate_hz,
        **extra):
    """One bench.json entry with the fields of docs/performance.md (plus extra keys)."""
    out = {
        'case': case, 'preset': preset, 'sub_rays': int(sub_rays), 'return_mode': return_mode,
        'weather': weather, 'beams_per_scan': int(beams), 'points_per_scan': int(points),
        'ms_per_scan_median': round(ms, 3),
        'bare_cast_ms_median': None if bare_ms is None else round(bare_ms, 3),
        'ratio_to_bare_cast': None if not bare_ms else round(ms / bare_ms, 3),
        'realtime_factor': round((1000.0 / rate_hz) / ms, 3),
        'cpu_steal_pct': LAST_STEAL_PCT[0],
    }
    out.update(extra)
    return out
