"""
Weather targets of issue 14 on the demo world, for every preset and the laser_scan defaults.

One sweep (seed 0, scan 0, strongest returns, no motion) per sensor and weather row at pose
12 0 1.8 0 0 90, printed as a Markdown table:
- clutter: points of class 20 (precipitation clutter), the share of beams with one, and the
  clutter points nearer than 2 m (the issue's first measurement);
- near: laser_scan rays shorter than 1 m (or -inf) whose clear-air ray hits nothing within 1 m
  (a near reading not on an object);
- far: non-clutter points at >= 20 m, and the mean intensity byte of the non-clutter points;
- ground: mean intensity byte of ground points (material soil, grass, gravel, ..., snow).

Usage: python benchmarks/weather_table.py [--presets a,b] [--rows clear,rain10,...] [--strided N]
       [--set NAME=VALUE ...] (lidar_3d overrides of every preset)
"""

import argparse
import dataclasses
import os
from pathlib import Path
import sys
import time

sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from ubot_lidar_sim.cli import effective_config  # noqa: E402
from ubot_lidar_sim.core.config.presets import list_presets  # noqa: E402
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS  # noqa: E402
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES  # noqa: E402
from ubot_lidar_sim.core.physics.weather import Weather  # noqa: E402
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg  # noqa: E402
from ubot_lidar_sim.core.sensors.laser import LaserScanner  # noqa: E402
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402
import yaml  # noqa: E402

POSE = (12.0, 0.0, 1.8, 0.0, 0.0, 90.0)
CLUTTER_CLASS = PRECIPITATION_CLASS
FAR_M = 20.0
GROUND = ('soil', 'grass', 'gravel', 'asphalt', 'concrete', 'water', 'mud', 'snow')
# name: (label, Weather keyword arguments)
ROWS = {
    'clear': ('clear', {}),
    'haze10k': ('haze, visibility 10 km', {'visibility_m': 10000.0}),
    'haze2k': ('haze, visibility 2 km', {'visibility_m': 2000.0}),
    'haze1k': ('haze, visibility 1 km', {'visibility_m': 1000.0}),
    'vis500': ('visibility 500 m', {'visibility_m': 500.0}),
    'fog50': ('fog, visibility 50 m', {'visibility_m': 50.0}),
    'rain10': ('rain 10 mm/h', {'rain_mm_h': 10.0}),
    'rain50': ('rain 50 mm/h', {'rain_mm_h': 50.0}),
    'snow1': ('snow 1 mm/h', {'snowfall_rate_mm_h': 1.0}),
    'snow5': ('snow 5 mm/h', {'snowfall_rate_mm_h': 5.0}),
    'snow10': ('snow 10 mm/h', {'snowfall_rate_mm_h': 10.0}),
    'cover': ('snow 1 mm/h, 0.1 m on the ground',
              {'snowfall_rate_mm_h': 1.0, 'snow_depth_m': 0.1}),
}
COLUMNS = ('sensor', 'weather', 'beams', 'clutter pts', 'beams w/ clutter %',
           'clutter < 2 m', 'near < 1 m off-object', 'pts >= 20 m', 'mean int.',
           'ground int.')


def weather_of(kwargs):
    """Return the Weather of a row, or None when this tree's Weather lacks a field (n/a)."""
    names = {f.name for f in dataclasses.fields(Weather)}
    if any(k not in names for k in kwargs):
        return None
    return Weather(**kwargs)


def _mean(x):
    return f'{float(np.mean(x)):.1f}' if np.size(x) else '-'


def lidar_row(sim, trajectory, weather):
    """Return the table cells of one lidar_3d sweep."""
    res = sim.scan(trajectory, 0.0, weather, scan_index=0)
    pts = res.points
    clut = pts['class_id'] == CLUTTER_CLASS
    solid = ~clut
    beams_c = np.unique(res.beam[clut]).size
    ground = np.isin(pts['material'], [MATERIAL_NAMES.index(m) for m in GROUND
                                       if m in MATERIAL_NAMES]) & solid
    return [res.n_beams, int(clut.sum()), f'{100.0 * beams_c / res.n_beams:.3f}',
            int((clut & (pts['range'] < 2.0)).sum()), '-',
            int((solid & (pts['range'] >= FAR_M)).sum()), _mean(pts['intensity'][solid]),
            _mean(pts['intensity'][ground])]


def laser_row(scanner, trajectory, weather, clear_ranges):
    """Return the table cells of one laser_scan scan (rays play the part of beams)."""
    res = scanner.scan(trajectory, 0.0, weather, scan_index=0)
    r = res.ranges.astype(np.float64)
    near = (r < 1.0) & ~(clear_ranges < 1.0 + 0.05)
    near2 = (r < 2.0) & ~(clear_ranges < 2.0 + 0.05)
    good = np.isfinite(r)
    return [scanner.n_rays, '-', '-', f'{int(near2.sum())} rays', int(near.sum()),
            int((good & (r >= FAR_M)).sum()), _mean(res.intensities[good]), '-']


def main(argv=None):
    """Print the table; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--presets', help='comma-separated presets (default: all)')
    ap.add_argument('--rows', help='comma-separated rows (default: all): ' + ', '.join(ROWS))
    ap.add_argument('--no-laser', action='store_true', help='skip the laser_scan rows')
    ap.add_argument('--set', action='append', default=[], metavar='NAME=VALUE',
                    help='override a lidar_3d parameter of every preset (YAML value; repeat)')
    args = ap.parse_args(argv)
    sets = {k: yaml.safe_load(v) for k, v in (s.split('=', 1) for s in args.set)}
    presets = args.presets.split(',') if args.presets else list(list_presets())
    rows = args.rows.split(',') if args.rows else list(ROWS)
    trajectory = BodyTwist(pose_matrix_deg(POSE[:3], POSE[3:]), np.zeros(6))
    materials = MaterialTable.load()
    world = World.load('demo', materials)
    print('| ' + ' | '.join(COLUMNS) + ' |')
    print('|' + '---|' * len(COLUMNS))
    fixed = {'return_mode': 'strongest', 'motion_distortion': False, 'seed': 0}
    t0 = time.perf_counter()
    for name in presets:
        cfg = effective_config('lidar_3d', overrides={**fixed, 'preset': name,
                                                      'world_file': 'demo', **sets})
        sim = LidarSimulator(cfg, world, materials)
        for row in rows:
            label, kw = ROWS[row]
            weather = weather_of(kw)
            cells = lidar_row(sim, trajectory, weather) if weather is not None \
                else ['n/a'] * (len(COLUMNS) - 2)
            print('| ' + ' | '.join(str(c) for c in [name, label] + cells) + ' |', flush=True)
    if not args.no_laser:
        # The weather acts on the physical model only (laser_scan's default is geometric).
        cfg = effective_config('laser_scan', overrides={'seed': 0, 'world_file': 'demo',
                                                        'model': 'physical'})
        scanner = LaserScanner(cfg, world, materials)
        clear = LaserScanner(effective_config('laser_scan', overrides={
            'seed': 0, 'world_file': 'demo', 'model': 'physical', 'noise_enabled': False,
            'weather': False}),
            world, materials).scan(trajectory, 0.0, None).ranges.astype(np.float64)
        clear = np.where(clear == -np.inf, 0.0, clear)
        for row in rows:
            label, kw = ROWS[row]
            weather = weather_of(kw)
            cells = laser_row(scanner, trajectory, weather, clear) if weather is not None \
                else ['n/a'] * (len(COLUMNS) - 2)
            print('| ' + ' | '.join(str(c) for c in ['laser_scan', label] + cells) + ' |',
                  flush=True)
    print(f'\n({time.perf_counter() - t0:.0f} s; pose {" ".join(f"{v:g}" for v in POSE)}, '
          f'far = range >= {FAR_M:g} m, strongest returns, seed 0, scan 0)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
