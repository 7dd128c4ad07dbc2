"""
Golden-bytes check of the optimisations: the same seed must give the same bytes.

Saves (``--save``) or compares (default) the ``full`` point arrays, beam indices, too_close and
centre-ray ranges of a few fixed scans, plus LaserScan arrays and terrain samples, to/with
out/golden_before.npz. Comparison is bitwise: any changed bit is a physics change.

Usage: python benchmarks/check_same_bytes.py [--save] [--file out/golden_before.npz]
       [--tree DIR]   (import ubot_lidar_sim from DIR, e.g. an export of the code before)
       [--workers N]  (the lidar sweeps split over N compute processes, worker.ScanProcess)
"""

import argparse
import os
from pathlib import Path
import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))
if '--tree' in sys.argv:          # before common.py puts a source tree on sys.path
    os.environ['UBOT_LIDAR_SIM_TREE'] = sys.argv[sys.argv.index('--tree') + 1]

from common import lidar_config  # noqa: E402,I202
import numpy as np  # noqa: E402

from ubot_lidar_sim.core.config import from_dict, LaserScanConfig, TerrainConfig  # noqa: E402
from ubot_lidar_sim.core.execution.worker import ScanProcess, sweep  # noqa: E402
from ubot_lidar_sim.core.physics.weather import Weather  # noqa: E402
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg  # noqa: E402
from ubot_lidar_sim.core.sensors.laser import LaserScanner  # noqa: E402
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator  # noqa: E402
from ubot_lidar_sim.core.sensors.sweep import Sweep  # noqa: E402
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402

POSE0 = pose_matrix_deg([12.0, 0.0, 1.8], [0.0, 0.0, 90.0])
MOVING = (2.0, 0.0, 0.0, 0.0, 0.0, 2.0 / 12.0)
RAIN = Weather(rain_mm_h=10.0, visibility_m=1000.0)
FOG_SMOKE = Weather(visibility_m=150.0, puddle_depth_m=0.02,
                    smoke=[[14.0, 4.0, 1.5, 2.0], [8.0, -3.0, 1.0, 1.5], [12.0, 9.0, 2.0, 3.0]],
                    smoke_density=[0.6, 0.9, 0.3])
WET = Weather(rain_mm_h=2.0, surface_wetness=0.4, puddle_depth_m=0.001)


def lidar_cases():
    """(name, preset, weather, moving, overrides, pose) of every golden lidar scan."""
    tree_pose = pose_matrix_deg([0.0, -14.0, 1.6], [0.0, 2.0, 80.0])
    return [
        ('A', 'velodyne_vlp16', RAIN, True,
         {'sub_rays': 7, 'return_mode': 'dual_strongest_last', 'motion_distortion': True}, POSE0),
        ('B', 'ouster_os1_128', Weather(), True,
         {'sub_rays': 1, 'return_mode': 'strongest', 'motion_distortion': True}, POSE0),
        ('C', 'ouster_os1_128', RAIN, False,
         {'sub_rays': 7, 'return_mode': 'dual_strongest_last', 'horizontal_samples': 512},
         tree_pose),
        ('fog_smoke', 'velodyne_vlp16', FOG_SMOKE, True,
         {'sub_rays': 7, 'return_mode': 'triple_first_strongest_last', 'max_hits_per_sub_ray': 6},
         tree_pose),
        ('pulse_rings', 'ouster_os1_128', RAIN, True,
         {'sub_rays': 7, 'return_mode': 'dual_first_last', 'horizontal_samples': 256,
          'pulse_length_m': 2.5,
          'ring_range_at_10pct_m': tuple(60.0 + 0.5 * k for k in range(128)),
          'stamp_at': 'end', 'point_layout': 'full'}, tree_pose),
        ('quiet_last', 'velodyne_vlp16', WET, False,
         {'sub_rays': 1, 'return_mode': 'last', 'noise_enabled': False, 'horizontal_samples': 900},
         POSE0),
        ('first', 'velodyne_vlp16', Weather(visibility_m=400.0), True,
         {'sub_rays': 7, 'return_mode': 'first', 'horizontal_samples': 600}, tree_pose),
    ]


def collect(workers=0):
    """Run every golden scan (lidar sweeps in `workers` processes; 0: in process)."""
    materials = MaterialTable.load()
    world = World.load('demo')
    out = {}
    for name, preset, weather, moving, overrides, pose in lidar_cases():
        cfg = lidar_config(preset, **overrides)
        sim = LidarSimulator(cfg, world, materials)
        pose_at = BodyTwist(pose, MOVING if moving else (0.0,) * 6)
        pool = ScanProcess(cfg, world, materials, workers) if workers else None
        for k in (0, 3):
            res = sweep(sim, pool, pose_at, Sweep(k * cfg.period_s, weather, k))
            out[f'{name}_{k}_points'] = res.points
            out[f'{name}_{k}_beam'] = res.beam
            out[f'{name}_{k}_too_close'] = res.too_close
            out[f'{name}_{k}_hit_range'] = res.hit_range_m
            out[f'{name}_{k}_n_echoes'] = np.array(res.n_echoes)
        if pool is not None:
            pool.close()
    # The trace itself, every Hits field: demo world, case A rays, per-scan smoke.
    cfg = lidar_config('velodyne_vlp16', sub_rays=7, horizontal_samples=600)
    origins, dirs, _ = LidarSimulator(cfg, world, materials).rays(
        BodyTwist(POSE0, MOVING), 0.0)
    smoke = {'smoke': FOG_SMOKE.smoke, 'smoke_density': FOG_SMOKE.smoke_density, 'max_hits': 5}
    for name, kw in (('trace', smoke), ('cast', None)):
        hits = world.trace(origins, dirs, 80.0, **kw) if kw else world.cast(origins, dirs, 80.0)
        for field in ('ray', 'range_m', 'point', 'normal', 'cos_inc', 'material', 'class_id',
                      'foliage', 'ground', 'albedo', 'smoke', 'obj'):
            out[f'{name}_{field}'] = getattr(hits, field)
    cfg = from_dict(LaserScanConfig, {'resolution_deg': 1.0, 'rate_hz': 30.0})
    scanner = LaserScanner(cfg, world, materials)
    pose_at = BodyTwist(pose_matrix_deg([12.0, 0.0, 0.3], [0.0, 0.0, 90.0]), MOVING)
    for k in (0, 1):
        res = scanner.scan(pose_at, k / cfg.rate_hz, FOG_SMOKE if k else Weather(), k)
        out[f'laser_{k}_ranges'] = res.ranges
        out[f'laser_{k}_intensities'] = res.intensities
        out[f'laser_{k}_hit_xyz'] = res.hit_xyz
    terrain = TerrainSensor(from_dict(TerrainConfig, {'rate_hz': 50.0}), world)
    for k, x in enumerate((12.0, 0.0, 20.0)):
        res = terrain.sample(pose_matrix_deg([x, 0.0, 0.5], [0.0, 0.0, 90.0]))
        out[f'terrain_{k}_hit_loc'] = res.hit_loc
        out[f'terrain_{k}_dist'] = np.r_[res.veh_hit_dist, res.tire_hit_dist]
    return out


def main(argv=None):
    """Save or compare; returns 0 when every array is bitwise equal (or after saving)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--save', action='store_true')
    parser.add_argument('--file', default='out/golden_before.npz')
    parser.add_argument('--tree', help='directory to import ubot_lidar_sim from')
    parser.add_argument('--workers', type=int, default=0,
                        help='compute the lidar sweeps in N processes (0: in process)')
    args = parser.parse_args(argv)
    now = collect(args.workers)
    path = Path(args.file)
    if args.save:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **now)
        print(f'saved {len(now)} arrays to {path}')
        return 0
    ref = np.load(path)
    bad = []
    for key in sorted(set(ref.files) | set(now)):
        if key not in ref.files or key not in now:
            bad.append(f'{key}: missing')
            continue
        a, b = ref[key], np.asarray(now[key])
        if a.dtype != b.dtype or a.shape != b.shape or a.tobytes() != b.tobytes():
            bad.append(f'{key}: differs (shape {a.shape} -> {b.shape})')
    if bad:
        print('GOLDEN MISMATCH\n  ' + '\n  '.join(bad))
        return 1
    print(f'golden bytes identical: {len(now)} arrays')
    return 0


if __name__ == '__main__':
    sys.exit(main())
