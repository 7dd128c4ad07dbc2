"""
Issue 32's weather tables: snow, rain, fog and a dark target near the sensor in dense fog.

Snow flakes against the rate, fog returns against the visibility, rain drops.

Flat world (200 m x 200 m grass), sensor 2 m above the ground looking along +x, seed 0, scan 0,
strongest returns, no motion distortion. Printed as Markdown tables:
- snow: points of class 20 in one sweep (and those nearer than 2 m), dry and wet snow,
  velodyne_vlp32c and velodyne_vlp16;
- rain: points of class 20 in one sweep (velodyne_vlp32c), and laser_scan rays < 1 m;
- fog: share of beams (rays) with a class-20 return, velodyne_vlp16, laser_scan (custom,
  model physical) and the sick_tim571 preset;
- target: a 5 % Lambertian wall 2.0 m ahead in visibility 30 m and 50 m (velodyne_vlp16, the
  beams on the wall): median range of their strongest point and the share labelled clutter;
- laser: laser_scan rays < 1 m (physical model, --laser-preset, default custom optics) over
  --laser-scans scans at 2.5 / 5 / 10 mm/h and their ranges (the round-2 target: none);
- snow_ranges: VLP-32C dry-snow points per sweep by range bin (where the flakes sit).
- cadc: the CADC snow statistic (Pitropov et al. 2020, cadc_devkit other/filter_pointcloud.py
  and cadc_dataset_route_stats.csv): points that DROR (Charron et al. 2018, the devkit's
  parameters) removes from the sweep cropped to |x|, |y| <= 4 m, -3 <= z <= 10 m of the lidar,
  beside the class-20 points in that box; VLP-32C, dry and wet snow.
--set NAME=VALUE (repeatable) overrides every sensor's config, to measure a lever.

Usage: python benchmarks/weather_particles.py [--tables snow,rain,fog,target] [--seeds N]
       [--laser-scans N] [--laser-preset P] [--set NAME=VALUE ...]
"""

import argparse
import os
from pathlib import Path
import sys
import tempfile
import time

sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from ubot_lidar_sim.core.config.configure import effective_config, parse_overrides  # noqa: E402
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS  # noqa: E402
from ubot_lidar_sim.core.physics.weather import Weather  # noqa: E402
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg  # noqa: E402
from ubot_lidar_sim.core.sensors.laser import LaserScanner  # noqa: E402
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402

CLUTTER = PRECIPITATION_CLASS
POSE = BodyTwist(pose_matrix_deg([0.0, 0.0, 2.0], [0.0, 0.0, 0.0]), np.zeros(6))
SNOW_RATES = (0.5, 1.0, 2.5, 5.0, 10.0, 20.0)
RAIN_RATES = (2.5, 10.0, 25.0, 50.0, 100.0)
VISIBILITIES = (2000.0, 1000.0, 500.0, 300.0, 200.0, 150.0, 100.0, 50.0, 30.0, 20.0, 10.0, 5.0)
FIXED = {'return_mode': 'strongest', 'motion_distortion': False, 'world_file': 'flat'}
LASER_RATES = (2.5, 5.0, 10.0)
SNOW_BINS = (0.0, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
#: CADC's crop box around the lidar (x, y, z min; x, y, z max), m: cadc_devkit
#: other/filter_pointcloud.py, crop_cloud.
CADC_BOX = ((-4.0, -4.0, -3.0), (4.0, 4.0, 10.0))
#: The devkit's DROR parameters (dror_filter): radius multiplier, azimuth resolution (deg),
#: minimum neighbours, minimum search radius (m).
DROR = (3.0, 0.16, 3, 0.04)
#: --set overrides, applied to every sensor built here.
LEVERS = {}
TARGET = """frame: map
objects:
  - {name: ground, type: plane, size_m: [200, 200], material: grass}
  - {name: target, type: box, size_m: [0.2, 40, 40], pose: {xyz: [2.1, 0, 0]}, material: other}
"""


def _lidar(preset, materials, world, **extra):
    cfg = effective_config('lidar_3d', overrides={**FIXED, 'preset': preset, **extra, **LEVERS})
    return LidarSimulator(cfg, world, materials)


def _laser(preset, materials, world):
    over = {'seed': 0, 'world_file': 'flat', 'model': 'physical', 'motion_distortion': False}
    if preset != 'custom':
        over['preset'] = preset
    return LaserScanner(effective_config('laser_scan', overrides={**over, **LEVERS}), world,
                        materials)


def _clutter(sim, weather, seeds):
    """Mean class-20 points, share of beams with one and points < 2 m over scans 0..seeds-1."""
    pts, share, near = [], [], []
    for k in range(seeds):
        res = sim.scan(POSE, 0.0, weather, scan_index=k)
        c = res.points['class_id'] == CLUTTER
        pts.append(int(c.sum()))
        near.append(int((c & (res.points['range'] < 2.0)).sum()))
        share.append(np.unique(res.beam[c]).size / res.n_beams)
    return float(np.mean(pts)), float(np.mean(share)), float(np.mean(near))


def snow_table(materials, world, seeds):
    """Print snow points (class 20) per sweep against the snowfall rate."""
    print('\nSnow: class-20 points per sweep (of them < 2 m), mean of %d sweeps' % seeds)
    print('| sensor | snow | ' + ' | '.join(f'{r:g} mm/h' for r in SNOW_RATES) + ' |')
    print('|---|---|' + '---|' * len(SNOW_RATES))
    for preset in ('velodyne_vlp32c', 'velodyne_vlp16'):
        for kind in ('dry', 'wet'):
            sim = _lidar(preset, materials, world, snow_type=kind)
            cells = []
            for r in SNOW_RATES:
                n, _, near = _clutter(sim, Weather(snowfall_rate_mm_h=r), seeds)
                cells.append(f'{n:,.0f} ({near:,.0f})')
            print(f'| {preset} | {kind} | ' + ' | '.join(cells) + ' |', flush=True)


def rain_table(materials, world, seeds):
    """Print rain points (class 20) per sweep and laser rays < 1 m against the rain rate."""
    print('\nRain: class-20 points per sweep (mean of %d sweeps); laser_scan rays < 1 m' % seeds)
    print('| sensor | ' + ' | '.join(f'{r:g} mm/h' for r in RAIN_RATES) + ' |')
    print('|---|' + '---|' * len(RAIN_RATES))
    sim = _lidar('velodyne_vlp32c', materials, world)
    cells = [f'{_clutter(sim, Weather(rain_mm_h=r), seeds)[0]:,.1f}' for r in RAIN_RATES]
    print('| velodyne_vlp32c | ' + ' | '.join(cells) + ' |')
    laser = _laser('custom', materials, world)
    cells = []
    for r in RAIN_RATES:
        n = [int(np.sum(laser.scan(POSE, 0.0, Weather(rain_mm_h=r), k).ranges < 1.0))
             for k in range(seeds)]
        cells.append(f'{np.mean(n):g}')
    print('| laser_scan (physical), rays < 1 m | ' + ' | '.join(cells) + ' |', flush=True)


def fog_table(materials, world, seeds):
    """Print the share of beams with a fog (class 20) return against the visibility."""
    print('\nFog: share of beams (rays) with a class-20 return, %' + f' (mean of {seeds})')
    print('| sensor | ' + ' | '.join(f'{v:g} m' for v in VISIBILITIES) + ' |')
    print('|---|' + '---|' * len(VISIBILITIES))
    sensors = [('velodyne_vlp16', _lidar('velodyne_vlp16', materials, world)),
               ('velodyne_vlp32c', _lidar('velodyne_vlp32c', materials, world)),
               ('laser_scan (physical)', _laser('custom', materials, world).sim),
               ('sick_tim571', _laser('sick_tim571', materials, world).sim)]
    for name, sim in sensors:
        cells = [f'{100.0 * _clutter(sim, Weather(visibility_m=v), seeds)[1]:.1f}'
                 for v in VISIBILITIES]
        print(f'| {name} | ' + ' | '.join(cells) + ' |', flush=True)


def target_table(materials, seeds):
    """Print the strongest point of the beams on a 5 % wall at 2.0 m in dense fog."""
    print('\nTarget: 5 % wall at 2.0 m, velodyne_vlp16, beams that hit it')
    print('| visibility | beams | median range, m | labelled clutter % | no point % |')
    print('|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / 'target.yaml'
        path.write_text(TARGET)
        override = Path(tmp) / 'm.yaml'
        override.write_text('other: {reflectivity: 0.05}\n')
        table = MaterialTable.load(str(override))
        world = World.load(str(path), table)
        sim = _lidar('velodyne_vlp16', table, world)
        for vis in (30.0, 50.0):
            r, lab, miss, nb = [], [], [], 0
            for k in range(seeds):
                res = sim.scan(POSE, 0.0, Weather(visibility_m=vis), scan_index=k)
                # Beams within ~12 deg of the wall's normal: their surface is at 2.0-2.05 m.
                on = np.flatnonzero(res.hit_range_m < 2.05)
                pts = res.points
                sel = np.isin(res.beam, on)
                nb += on.size
                r.extend(pts['range'][sel])
                lab.append(int((pts['class_id'][sel] == CLUTTER).sum()))
                miss.append(on.size - np.unique(res.beam[sel]).size)
            print(f'| {vis:g} m | {nb} | {np.median(r):.2f} | {100.0 * sum(lab) / nb:.1f} | '
                  f'{100.0 * sum(miss) / nb:.1f} |', flush=True)


def laser_table(materials, world, scans, preset='custom'):
    """Print laser_scan rays < 1 m over scans 0..scans-1 against the rain rate."""
    print(f'\nLaser: laser_scan (physical, {preset}) rays < 1 m in {scans} scans')
    print('| rain | rays < 1 m | per scan | their ranges, m |')
    print('|---|---|---|---|')
    laser = _laser(preset, materials, world)
    for rate in LASER_RATES:
        r = np.concatenate([laser.scan(POSE, 0.0, Weather(rain_mm_h=rate), k).ranges
                            for k in range(scans)])
        near = np.sort(r[r < 1.0])
        shown = ', '.join(f'{x:.2f}' for x in near[:12]) + (' ...' if near.size > 12 else '')
        print(f'| {rate:g} mm/h | {near.size} | {near.size / scans:.3f} | {shown} |', flush=True)


def snow_range_table(materials, world, seeds):
    """Print VLP-32C dry-snow points per sweep by range bin against the rate."""
    bins = SNOW_BINS
    print('\nSnow by range: velodyne_vlp32c dry, class-20 points per sweep (mean of %d)' % seeds)
    print('| rate | ' + ' | '.join(f'{a:g}-{b:g} m' for a, b in zip(bins[:-1], bins[1:]))
          + ' | total |')
    print('|---|' + '---|' * len(bins))
    sim = _lidar('velodyne_vlp32c', materials, world, snow_type='dry')
    for rate in SNOW_RATES[:3]:
        counts = np.zeros(len(bins) - 1)
        for k in range(seeds):
            res = sim.scan(POSE, 0.0, Weather(snowfall_rate_mm_h=rate), scan_index=k)
            c = res.points['class_id'] == CLUTTER
            counts += np.histogram(res.points['range'][c], bins=bins)[0]
        counts /= seeds
        print(f'| {rate:g} mm/h | ' + ' | '.join(f'{x:,.0f}' for x in counts)
              + f' | {counts.sum():,.0f} |', flush=True)


def in_cadc_box(xyz):
    """Mask (N,) of the points of xyz (N, 3) inside CADC's crop box (CADC_BOX, sensor frame)."""
    lo, hi = (np.asarray(b) for b in CADC_BOX)
    return np.all((xyz >= lo) & (xyz <= hi), axis=1)


def dror_removed(xyz):
    """
    Mask (N,) of the points DROR removes from xyz (N, 3), as the CADC devkit runs it.

    A point stays when at least 3 of its 4 nearest neighbours (itself excluded) lie within
    max(3 x 0.16 deg x its horizontal range, 0.04 m) (Charron et al. 2018).
    """
    from scipy.spatial import cKDTree
    mult, az_deg, min_nb, min_r = DROR
    if xyz.shape[0] == 0:
        return np.zeros(0, bool)
    radius = np.maximum(mult * np.radians(az_deg) * np.hypot(xyz[:, 0], xyz[:, 1]), min_r)
    dist, _ = cKDTree(xyz).query(xyz, k=min_nb + 1)
    dist = np.where(np.isfinite(dist), dist, np.inf)
    neighbours = (dist[:, 1:] < radius[:, None]).sum(axis=1)
    return neighbours < min_nb


def cadc_table(materials, world, seeds):
    """Print the CADC statistic (DROR-removed points in the crop box) against the rate."""
    print('\nCADC statistic: velodyne_vlp32c, points DROR removes in the 8 x 8 x 13 m box '
          '(class-20 points in the box), mean of %d sweeps' % seeds)
    print('| snow | ' + ' | '.join(f'{r:g} mm/h' for r in SNOW_RATES) + ' |')
    print('|---|' + '---|' * len(SNOW_RATES))
    for kind in ('dry', 'wet'):
        sim = _lidar('velodyne_vlp32c', materials, world, snow_type=kind)
        cells = []
        for r in SNOW_RATES:
            removed, flakes = [], []
            for k in range(seeds):
                res = sim.scan(POSE, 0.0, Weather(snowfall_rate_mm_h=r), scan_index=k)
                xyz = np.stack([res.points[a] for a in ('x', 'y', 'z')], axis=1)
                box = in_cadc_box(xyz)
                removed.append(int(dror_removed(xyz[box]).sum()))
                flakes.append(int((res.points['class_id'][box] == CLUTTER).sum()))
            cells.append(f'{np.mean(removed):,.0f} ({np.mean(flakes):,.0f})')
        print(f'| {kind} | ' + ' | '.join(cells) + ' |', flush=True)


def main(argv=None):
    """Print the tables; returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--tables', default='snow,rain,fog,target')
    ap.add_argument('--seeds', type=int, default=1, help='sweeps per cell (scan 0..N-1)')
    ap.add_argument('--laser-scans', type=int, default=60, help='scans of the laser table')
    ap.add_argument('--laser-preset', default='custom', help='preset of the laser table')
    ap.add_argument('--set', dest='overrides', action='append', default=[],
                    metavar='NAME=VALUE', help='override every sensor config (a lever)')
    args = ap.parse_args(argv)
    LEVERS.update(parse_overrides(args.overrides))
    materials = MaterialTable.load()
    world = World.load('flat', materials)
    t0 = time.perf_counter()
    tables = args.tables.split(',')
    if 'snow' in tables:
        snow_table(materials, world, args.seeds)
    if 'rain' in tables:
        rain_table(materials, world, args.seeds)
    if 'fog' in tables:
        fog_table(materials, world, args.seeds)
    if 'target' in tables:
        target_table(materials, args.seeds)
    if 'laser' in tables:
        laser_table(materials, world, args.laser_scans, args.laser_preset)
    if 'snow_ranges' in tables:
        snow_range_table(materials, world, args.seeds)
    if 'cadc' in tables:
        cadc_table(materials, world, args.seeds)
    print(f'\n({time.perf_counter() - t0:.0f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
