"""
Shared helpers of the benchmarks: timing medians, the bare-cast reference, one result row.

Every case times its scans after a warm-up and reports medians; the reference is open3d casting
the same primary sub-rays once on the same world in the same run (bare_cast_ms_median).
"""

import statistics
import time

import numpy as np
import open3d as o3d

from ubot_lidar_sim.core import scan_pattern
from ubot_lidar_sim.core.config import from_dict, LidarConfig
from ubot_lidar_sim.core.presets import load_preset
from ubot_lidar_sim.core.radiometry import sub_ray_pattern

WARMUP = 3


def median_ms(fn, repeats, warmup=WARMUP):
    """Median wall time of fn() in ms over `repeats` calls after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def lidar_config(preset, **overrides):
    """Build the LidarConfig of a preset with explicit overrides (same precedence as the node)."""
    params = dict(load_preset(preset))
    params.update(overrides)
    params['preset'] = preset
    return from_dict(LidarConfig, params)


def primary_rays(cfg, pose):
    """
    Origins and unit directions (N, 3) float32 of every primary sub-ray of one sweep.

    All from the same pose: the reference needs the rays, not their timing.
    """
    beams = scan_pattern.build_beams(cfg)
    offsets, _ = sub_ray_pattern(cfg.sub_rays, cfg.divergence_mrad)
    dirs = scan_pattern.sub_ray_directions(beams.dir_sensor, offsets) @ pose[:3, :3].T
    origins = np.broadcast_to(pose[:3, 3], dirs.shape)
    return origins.astype(np.float32), dirs.astype(np.float32)


def bare_cast_ms(scene, origins, dirs, repeats):
    """Median ms of one open3d cast_rays over the rays: the cost any implementation pays."""
    rays = o3d.core.Tensor(np.ascontiguousarray(np.hstack([origins, dirs]), dtype=np.float32))
    return median_ms(lambda: scene.cast_rays(rays), repeats)


def row(case, preset, sub_rays, return_mode, weather, beams, points, ms, bare_ms, rate_hz,
        **extra):
    """One bench.json entry with the fields of CONTRACT §9 (plus extra keys)."""
    out = {
        'case': case, 'preset': preset, 'sub_rays': int(sub_rays), 'return_mode': return_mode,
        'weather': weather, 'beams_per_scan': int(beams), 'points_per_scan': int(points),
        'ms_per_scan_median': round(ms, 3),
        'bare_cast_ms_median': None if bare_ms is None else round(bare_ms, 3),
        'ratio_to_bare_cast': None if not bare_ms else round(ms / bare_ms, 3),
        'realtime_factor': round((1000.0 / rate_hz) / ms, 3),
    }
    out.update(extra)
    return out
