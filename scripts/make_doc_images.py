"""
Draw the manual's pictures from the core: a weather comparison and a moving actor's skew.

- docs/images/weather_comparison.png: one VLP-16 sweep of the demo world from the same pose
  (12 0 1.8, yaw 90 deg; seed 0, scan 0) in clear air, rain, fog and snow, top view, points
  coloured by their intensity byte, precipitation clutter (class 20) in red.
- docs/images/actor_skew.png: a VLP-16 at 5 Hz on a flat yard, two 4 m cars passing at 15 m/s
  3.5 m to either side in the same direction: one moves with the spin and is stretched, the
  other against it and squeezed; each car's box at the sweep's stamp drawn beside its points.

- docs/images/layers.png: the package's import layers, drawn from test/test_layers.py (LAYERS,
  and the modules of each group): an import points down the picture, never up.

Usage: python scripts/make_doc_images.py [--out docs/images]   (matplotlib, Agg: no window)
"""

import argparse
from collections import Counter
import importlib.util
import os
from pathlib import Path
import sys

sys.path.insert(0, os.environ.get('UBOT_LIDAR_SIM_TREE')
                or str(Path(__file__).resolve().parents[1]))

import matplotlib  # noqa: E402

matplotlib.use('Agg')

from matplotlib import pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ubot_lidar_sim.cli import effective_config  # noqa: E402
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS  # noqa: E402
from ubot_lidar_sim.core.physics.weather import Weather  # noqa: E402
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg  # noqa: E402
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator  # noqa: E402
from ubot_lidar_sim.core.world.materials import MaterialTable  # noqa: E402
from ubot_lidar_sim.core.world.world import World  # noqa: E402

POSE = (12.0, 0.0, 1.8, 0.0, 0.0, 90.0)
CLUTTER_CLASS = PRECIPITATION_CLASS
WEATHERS = (('clear', {}), ('rain 25 mm/h', {'rain_mm_h': 25.0}),
            ('fog, visibility 50 m', {'visibility_m': 50.0}),
            ('snow 5 mm/h', {'snowfall_rate_mm_h': 5.0}))
FIXED = {'preset': 'velodyne_vlp16', 'return_mode': 'strongest', 'seed': 0,
         'world_file': 'demo'}


def _save(fig, out):
    """Write fig to out (90 dpi), close it; return out."""
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    plt.close(fig)
    return out


def _world_xyz(res):
    p = res.points
    xyz = np.stack([p['x'], p['y'], p['z']], axis=1).astype(np.float64)
    m = res.sensor_pose
    return xyz @ m[:3, :3].T + m[:3, 3]


def weather_comparison(out, half_m=30.0):
    """Write the four-panel top view of one sweep in four weathers; return the path."""
    materials = MaterialTable.load()
    world = World.load('demo', materials)
    sim = LidarSimulator(effective_config('lidar_3d', overrides={
        **FIXED, 'motion_distortion': False}), world, materials)
    trajectory = BodyTwist(pose_matrix_deg(POSE[:3], POSE[3:]), np.zeros(6))
    fig, axes = plt.subplots(1, 4, figsize=(18, 5.2), sharey=True)
    for ax, (label, kw) in zip(axes, WEATHERS):
        res = sim.scan(trajectory, 0.0, Weather(**kw), scan_index=0)
        xyz, pts = _world_xyz(res), res.points
        clutter = pts['class_id'] == CLUTTER_CLASS
        ax.scatter(xyz[~clutter, 0], xyz[~clutter, 1], s=0.6, c=pts['intensity'][~clutter],
                   cmap='viridis', vmin=0, vmax=100, linewidths=0)
        ax.scatter(xyz[clutter, 0], xyz[clutter, 1], s=4, c='red', linewidths=0)
        ax.plot(POSE[0], POSE[1], 'm^', ms=8)
        ax.set_xlim(POSE[0] - half_m, POSE[0] + half_m)
        ax.set_ylim(POSE[1] - half_m, POSE[1] + half_m)
        ax.set_aspect('equal')
        ax.set_facecolor('#f4f4f4')
        ax.set_title(f'{label}\n{len(pts)} points, {int(clutter.sum())} clutter (red)',
                     fontsize=10)
        ax.set_xlabel('x (m)')
    axes[0].set_ylabel('y (m)')
    fig.suptitle('VLP-16, demo world, one sweep from the same pose (seed 0): points coloured '
                 'by intensity byte 0-100', fontsize=11)
    return _save(fig, out)


SKEW_WORLD = {
    'frame': 'map',
    'objects': [{'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'material': 'asphalt'}],
    'actors': [
        {'name': 'car_left', 'type': 'box', 'size_m': [4.0, 1.8, 1.5], 'material': 'vehicle',
         'pose': {'xyz': [0, 0, 0.75]},
         'motion': {'pose': [-2.0, 3.5, 0, 0, 0, 0], 'twist': [15.0, 0, 0, 0, 0, 0]}},
        {'name': 'car_right', 'type': 'box', 'size_m': [4.0, 1.8, 1.5], 'material': 'vehicle',
         'pose': {'xyz': [0, 0, 0.75]},
         'motion': {'pose': [-2.0, -3.5, 0, 0, 0, 0], 'twist': [15.0, 0, 0, 0, 0, 0]}},
    ]}


def _box_outline(ax, centre_x, centre_y, style, label, colour='k'):
    x0, y0 = centre_x - 2.0, centre_y - 0.9
    ax.plot([x0, x0 + 4, x0 + 4, x0, x0], [y0, y0, y0 + 1.8, y0 + 1.8, y0], style, lw=1.4,
            label=label, color=colour)


def actor_skew(out):
    """Write the top view of two cars passing a spinning LiDAR; return the path."""
    materials = MaterialTable.load()
    world = World.from_dict(SKEW_WORLD, '<skew>', None, materials)
    cfg = effective_config('lidar_3d', overrides={**FIXED, 'world_file': 'flat',
                                                  'rate_hz': 5.0})
    sim = LidarSimulator(cfg, world, materials)
    trajectory = BodyTwist(pose_matrix_deg((0.0, 0.0, 1.0), (0.0, 0.0, 0.0)), np.zeros(6))
    res = sim.scan(trajectory, 0.1, None, scan_index=0)
    xyz, pts = _world_xyz(res), res.points
    fig, ax = plt.subplots(figsize=(9, 6))
    for k, (colour, name) in enumerate((('tab:orange', 'car_left'), ('tab:blue', 'car_right'))):
        sel = pts['instance_id'] == k + 1
        t_s = res.stamp_s + pts['time'][sel].astype(np.float64)
        seen = xyz[sel]
        ax.scatter(seen[:, 0], seen[:, 1], s=5, c=colour, linewidths=0,
                   label=f'{name}: points ({len(seen)}), length seen '
                   f'{np.ptp(seen[:, 0]) if len(seen) else 0:.2f} m')
        y = 3.5 if k == 0 else -3.5
        _box_outline(ax, -2.0 + 15.0 * res.stamp_s, y, '-' if k == 0 else '--',
                     f'{name}: 4 m box at the stamp ({res.stamp_s:.2f} s)')
        if len(seen):
            mid_s = float(np.mean(t_s))
            _box_outline(ax, -2.0 + 15.0 * mid_s, y, ':', f'{name}: box at its mean firing '
                         f'time ({mid_s:.3f} s)', colour)
            ax.annotate(f'fired {t_s.min():.3f}-{t_s.max():.3f} s', (seen[:, 0].max(), y),
                        xytext=(6, 0), textcoords='offset points', fontsize=8)
    spin = {'cw': 'clockwise', 'ccw': 'counter-clockwise'}[cfg.spin_direction]
    ax.plot(0, 0, 'm^', ms=9, label=f'VLP-16, 5 Hz, spins {spin} seen from above')
    ax.set_xlim(-12, 8)
    ax.set_ylim(-8, 6)
    ax.set_aspect('equal')
    ax.set_xlabel('x (m)')
    ax.set_ylabel('y (m)')
    ax.legend(loc='lower left', fontsize=8)
    ax.set_title('Actor skew: two 4 m cars at 15 m/s (+x) met at each ray\'s own firing time',
                 fontsize=10)
    return _save(fig, out)


def layers(out):
    """Write the layer picture from test/test_layers.py; return the path."""
    spec = importlib.util.spec_from_file_location(
        'test_layers', Path(__file__).resolve().parents[1] / 'test' / 'test_layers.py')
    tl = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tl)
    prefixes = [p for _, _, group in tl.LAYERS for p in group]
    modules = Counter(tl._layer(name) for name in tl.MODULES    # not the bare package inits
                      if any(name == p or name.startswith(p + '.') for p in prefixes))
    ranks = sorted({rank for rank, _, _ in tl.LAYERS})
    fig, ax = plt.subplots(figsize=(9, 7.5))
    colours = plt.get_cmap('viridis')
    for rank in ranks:
        groups = [g for r, g, _ in tl.LAYERS if r == rank]
        width = 8.0 / len(groups)
        for k, group in enumerate(groups):
            x = 0.5 + k * width
            ax.add_patch(plt.Rectangle((x + 0.05, rank + 0.1), width - 0.1, 0.8,
                                       color=colours(0.2 + 0.6 * rank / ranks[-1]), alpha=0.85))
            n = modules[(rank, group)]
            ax.text(x + width / 2, rank + 0.5, f'{group}  ({n} module{"s" * (n != 1)})',
                    ha='center', va='center', fontsize=10, color='white', weight='bold')
        ax.text(0.35, rank + 0.5, str(rank), ha='right', va='center', fontsize=9)
    ax.annotate('', xy=(9.0, 0.2), xytext=(9.0, ranks[-1] + 0.8),
                arrowprops={'arrowstyle': '->', 'lw': 1.5})
    ax.text(9.15, ranks[-1] / 2 + 0.5, 'imports point down', rotation=90, va='center')
    ax.set_xlim(-0.2, 9.6)
    ax.set_ylim(-0.1, ranks[-1] + 1.1)
    ax.axis('off')
    ax.set_title('ubot_lidar_sim: the import layers (rank, group; test/test_layers.py)',
                 fontsize=11)
    return _save(fig, out)


def main(argv=None):
    """Write the pictures; print their paths; return 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--out', default=str(Path(__file__).resolve().parents[1] / 'docs' /
                                         'images'))
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(weather_comparison(out / 'weather_comparison.png'))
    print(actor_skew(out / 'actor_skew.png'))
    print(layers(out / 'layers.png'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
