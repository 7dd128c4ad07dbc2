"""
PNG snapshots of the demo: point clouds, the laser scan over the world, the terrain rays.

Matplotlib with the Agg backend only: no window is ever opened, so it runs headless. The
``*_view`` functions take numpy arrays (world frame, metres) and write one PNG each;
``height_map`` casts rays into a World; ``Recorder`` keeps the ROS messages the runner's
monitor receives (PointCloud2, LaserScan, TerrainSensor, Environment) with the poses at their
stamps and turns them into those arrays when it writes the PNGs.
"""

from collections import deque

import matplotlib

matplotlib.use('Agg')

from matplotlib import pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
import numpy as np  # noqa: E402

from ubot_lidar_sim.core.errors import SimError  # noqa: E402
from ubot_lidar_sim.ros.conversions import pointcloud2_to_array, stamp_to_s  # noqa: E402
from ubot_lidar_sim.ros.demo.scenario import phase_text  # noqa: E402

_DPI = 110
HISTORY_KEPT = 6000     # terrain samples drawn in the distance history (2 min at 50 Hz)
_RAY_NAMES = ('vehicle', 'front left', 'front right', 'rear left', 'rear right')


def height_map(world, center_xy, half_size_m, cell_m=0.25, top_m=60.0):
    """
    Return (extent, heights (H, W) float32) of the world seen from above.

    Casts one vertical ray per cell downward from top_m; cells with no hit are NaN. extent is
    (x_min, x_max, y_min, y_max) m for imshow with origin='lower'.
    """
    n = max(2, int(round(2.0 * half_size_m / cell_m)))
    xs = center_xy[0] - half_size_m + (np.arange(n) + 0.5) * (2.0 * half_size_m / n)
    ys = center_xy[1] - half_size_m + (np.arange(n) + 0.5) * (2.0 * half_size_m / n)
    gx, gy = np.meshgrid(xs, ys)
    origins = np.stack([gx.ravel(), gy.ravel(), np.full(gx.size, top_m)], axis=1)
    dirs = np.tile(np.array([0.0, 0.0, -1.0]), (gx.size, 1))
    hits = world.cast(origins, dirs, top_m + 100.0)
    z = np.full(gx.size, np.nan, dtype=np.float32)
    z[np.asarray(hits.ray)] = np.asarray(hits.point)[:, 2]
    extent = (center_xy[0] - half_size_m, center_xy[0] + half_size_m,
              center_xy[1] - half_size_m, center_xy[1] + half_size_m)
    return extent, z.reshape(gx.shape)


def _finish(fig, path):
    # A long weather text wraps at the figure's edges instead of running off them.
    for ax in fig.axes:
        ax.title.set_wrap(True)
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    return path


def _top_view_axes(ax, centre_xyz, half_size_m):
    """Square world-frame x-y view of half_size_m around centre_xyz, axes in metres."""
    ax.set_xlim(centre_xyz[0] - half_size_m, centre_xyz[0] + half_size_m)
    ax.set_ylim(centre_xyz[1] - half_size_m, centre_xyz[1] + half_size_m)
    ax.set_aspect('equal')
    ax.set_xlabel('x (m, world frame)')
    ax.set_ylabel('y (m, world frame)')


def intensity_byte(points):
    """
    Return the calibrated intensity byte (N,) float64 of a structured cloud of any layout.

    The ouster layout puts the signal (counts) in 'intensity' and the byte in 'reflectivity';
    the full and velodyne layouts carry the byte in 'intensity'.
    """
    name = 'reflectivity' if 't' in points.dtype.names else 'intensity'
    return np.asarray(points[name], dtype=np.float64)


def cloud_top_view(points_m, intensity, sensor_xyz, path, title, half_size_m=40.0):
    """
    Top view (x-y) of a point cloud (N, 3) world frame coloured by its intensity byte.

    The view is ``half_size_m`` around the sensor, or tighter when 99 % of the points lie
    nearer (fog), so that short-range returns stay visible.
    """
    if len(points_m):
        reach = float(np.percentile(np.hypot(*(points_m[:, :2] - sensor_xyz[:2]).T), 99.0))
        half_size_m = min(half_size_m, max(10.0, 1.2 * reach))
    fig, ax = plt.subplots(figsize=(8.5, 7.5))
    order = np.argsort(points_m[:, 2])  # higher points drawn last: walls over ground
    sc = ax.scatter(points_m[order, 0], points_m[order, 1], c=intensity[order], s=1.5,
                    cmap='turbo', vmin=0, vmax=max(100.0, float(np.max(intensity, initial=1))),
                    linewidths=0)
    ax.plot(sensor_xyz[0], sensor_xyz[1], marker='*', color='k', ms=14, mfc='w',
            label='sensor')
    _top_view_axes(ax, sensor_xyz, half_size_m)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc='upper right')
    fig.colorbar(sc, ax=ax, shrink=0.85, label='intensity (calibrated byte, 0-255)')
    return _finish(fig, path)


def cloud_side_view(points_m, intensity, sensor_xyz, yaw_rad, path, title, half_len_m=40.0,
                    slab_m=4.0):
    """
    Side view of a cloud: distance along the vehicle heading against height z (m).

    Only the points within slab_m of the vertical plane through the sensor along its heading
    are drawn (a section, so objects beside the path do not pile up); all when too few.
    """
    heading = np.array([np.cos(yaw_rad), np.sin(yaw_rad)])
    rel = points_m[:, :2] - np.asarray(sensor_xyz[:2])
    along = rel @ heading
    across = rel @ np.array([-heading[1], heading[0]])
    keep = np.abs(across) <= slab_m
    if np.count_nonzero(keep) < 50:
        keep[:] = True
        slab_text = 'all points'
    else:
        slab_text = f'points within {slab_m:g} m of the vehicle centre line'
    along, z, inten = along[keep], points_m[keep, 2], intensity[keep]
    fig, ax = plt.subplots(figsize=(12, 4.8))
    sc = ax.scatter(along, z, c=inten, s=2.5, cmap='turbo',
                    vmin=0, vmax=max(100.0, float(np.max(intensity, initial=1))),
                    linewidths=0)
    ax.plot(0.0, sensor_xyz[2], marker='*', color='k', ms=14, mfc='w', label='sensor')
    ax.set_xlim(-half_len_m, half_len_m)
    zmax = max(6.0, float(np.percentile(z, 99.5)) + 1.0) if len(z) else 6.0
    ax.set_ylim(min(-1.0, float(np.min(z, initial=0.0)) - 0.5), zmax)
    ax.set_xlabel('distance along the vehicle heading (m; + ahead, - behind)')
    ax.set_ylabel('height z (m, world frame)')
    ax.set_title(f'{title}\n({slab_text})', fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(loc='upper right')
    fig.colorbar(sc, ax=ax, pad=0.01, label='intensity (0-255)')
    return _finish(fig, path)


def laser_scan_view(world_map, laser_pose, ranges_m, angle_min, angle_increment, range_max_m,
                    path, title, intensities=None, half_size_m=30.0):
    """
    Laser scan over the world seen from above.

    world_map: (extent, heights) from height_map; laser_pose (4, 4) world-from-laser. Rays are
    drawn as the ~/rays markers are: hits green to the hit, misses red to range_max.
    """
    ranges_m = np.asarray(ranges_m, dtype=np.float64)
    ang = angle_min + angle_increment * np.arange(len(ranges_m))
    hit = np.isfinite(ranges_m)
    length = np.where(hit, ranges_m, range_max_m)
    local = np.stack([np.cos(ang) * length, np.sin(ang) * length, np.zeros_like(ang)], axis=1)
    ends = local @ laser_pose[:3, :3].T + laser_pose[:3, 3]
    origin = laser_pose[:3, 3]
    fig, ax = plt.subplots(figsize=(11.5, 8.6))
    extent, heights = world_map
    ground = np.nanmin(heights) if np.isfinite(heights).any() else 0.0
    im = ax.imshow(heights - ground, origin='lower', extent=extent, cmap='Greys', vmin=0.0,
                   vmax=4.0, interpolation='nearest')
    fig.colorbar(im, ax=ax, shrink=0.8, pad=0.01, label='world: height above ground (m)')
    segs = np.stack([np.broadcast_to(origin[:2], ends[:, :2].shape), ends[:, :2]], axis=1)
    ax.add_collection(LineCollection(segs[~hit], colors='tab:red', linewidths=0.5, alpha=0.35,
                                     label=f'miss ({np.count_nonzero(~hit)} rays, to range_max)'))
    ax.add_collection(LineCollection(segs[hit], colors='tab:green', linewidths=0.6, alpha=0.5,
                                     label=f'hit ({np.count_nonzero(hit)} rays)'))
    # A LaserScan without intensities (the geometric model) carries an empty list.
    if intensities is not None and len(intensities) == len(ranges_m) and hit.any():
        inten = np.asarray(intensities, dtype=np.float64)[hit]
        sc = ax.scatter(ends[hit, 0], ends[hit, 1], c=inten, s=9, cmap='turbo', vmin=0,
                        vmax=max(100.0, float(inten.max())), zorder=3, edgecolors='none')
        fig.colorbar(sc, ax=ax, shrink=0.8, pad=0.01, label='return intensity (0-255)')
    ax.plot(origin[0], origin[1], marker='*', color='k', ms=14, mfc='yellow', zorder=4,
            label='laser')
    _top_view_axes(ax, origin, half_size_m)
    ax.set_title(title, fontsize=11)
    ax.legend(loc='lower left', fontsize=9, framealpha=0.9)
    return _finish(fig, path)


def _distance_history(bx, history):
    """Plot the tire distances (left axis) and veh_hit_dist (right axis) over the run."""
    t = np.asarray(history.get('t_s', []), dtype=np.float64)
    tires = np.asarray(history.get('tire_hit_dist', []), dtype=np.float64).reshape(-1, 4)
    finite = tires[np.isfinite(tires)]
    # Tire clearances are millimetres on flat ground: show them in mm when that small.
    scale, unit = (1000.0, 'mm') if len(finite) and np.abs(finite).max() < 0.05 else (1.0, 'm')
    for k in range(4):
        bx.plot(t, np.where(np.isfinite(tires[:, k]), tires[:, k] * scale, np.nan), lw=1.2,
                label=f'tire_hit_dist {_RAY_NAMES[k + 1]}')
    bx.set_xlabel('time since start (s)')
    bx.set_ylabel(f'tire_hit_dist ({unit})')
    bx.set_title('terrain distances over the run')
    bx.grid(alpha=0.3)
    cx = bx.twinx()
    veh = np.asarray(history.get('veh_hit_dist', []), dtype=np.float64)
    cx.plot(t, np.where(np.isfinite(veh), veh, np.nan), 'k.', ms=3,
            label='veh_hit_dist (right axis; gaps = nothing ahead)')
    cx.set_ylabel('veh_hit_dist (m)')
    lines = bx.get_legend_handles_labels()
    more = cx.get_legend_handles_labels()
    bx.legend(lines[0] + more[0], lines[1] + more[1], loc='upper center', fontsize=8,
              bbox_to_anchor=(0.5, -0.13), ncol=2, framealpha=0.9)


def terrain_view(start_m, hit_m, hit_flg, enabled, yaw_rad, history, path, title,
                 distances=(np.nan,) * 5):
    """
    Terrain rays in side view (left) and the distances over the run (right).

    start_m, hit_m: (5, 3) world frame (vehicle, FL, FR, RL, RR); distances (5,) m: this
    sample's veh_hit_dist then tire_hit_dist; history: dict with t_s (T,), veh_hit_dist (T,),
    tire_hit_dist (T, 4) in m (inf and NaN are left out of the plot).
    """
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 6.0),
                                 gridspec_kw={'width_ratios': [1.1, 1.0]})
    heading = np.array([np.cos(yaw_rad), np.sin(yaw_rad), 0.0])
    ref = np.nanmean(start_m[1:], axis=0) if np.isfinite(start_m[1:]).any() else start_m[0]
    for k, name in enumerate(_RAY_NAMES):
        if not enabled[k] or not np.all(np.isfinite(start_m[k])):
            continue
        s = (start_m[k] - ref) @ heading
        e = (hit_m[k] - ref) @ heading
        color = 'tab:green' if hit_flg[k] else 'tab:red'
        ax.plot([s, e], [start_m[k, 2], hit_m[k, 2]], color=color, lw=2.5)
        ax.plot(s, start_m[k, 2], 'o', color='k', ms=5)
        ax.plot(e, hit_m[k, 2], 'x' if hit_flg[k] else 's', color=color, ms=8)
        # Left and right tires share a side-view position: label them on two lines.
        ax.annotate(name, (e, hit_m[k, 2]), textcoords='offset points',
                    xytext=(4, -24 if k in (2, 4) else -12), fontsize=8)
    ax.plot([], [], color='tab:green', lw=2.5, label='hit (start to hit)')
    ax.plot([], [], color='tab:red', lw=2.5, label='miss (start to end of trace)')
    ax.axhline(0.0, color='0.5', lw=0.8, ls='--')
    dists = [f'veh_hit_dist {distances[0]:.3f} m'] + [
        f'{_RAY_NAMES[k + 1]}: {distances[k + 1]:.3f} m' for k in range(4)]
    ax.text(0.98, 0.97, 'tire_hit_dist\n' + '\n'.join(dists[1:]) + '\n' + dists[0],
            transform=ax.transAxes, ha='right', va='top', fontsize=8, family='monospace',
            bbox={'boxstyle': 'round', 'fc': 'w', 'ec': '0.7'})
    finite_z = np.concatenate([start_m[:, 2], hit_m[:, 2]])
    finite_z = finite_z[np.isfinite(finite_z)]
    if len(finite_z):
        ax.set_ylim(min(-0.3, finite_z.min() - 0.3), finite_z.max() + 1.2)
    ax.set_xlabel('distance along the vehicle heading (m)')
    ax.set_ylabel('height z (m, world frame)')
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc='upper left', fontsize=9)
    _distance_history(bx, history)
    return _finish(fig, path)


class Recorder:
    """
    Keeps the samples the snapshots need while the demo runs, then writes the PNGs.

    Fed by the runner's monitor with the messages it receives (duck-typed: PointCloud2,
    LaserScan, TerrainSensor, Environment); poses come from ``lookup``. Imports the ROS
    helpers lazily.
    """

    def __init__(self, lookup, world_frame='map', cloud_half_size_m=40.0):
        """
        Start an empty record.

        lookup(target, source, times_s (C,)) -> (C, 4, 4) target-from-source: the transform
        buffer of a sensor node (SensorNode.lookup_many), so no second /tf subscription.
        """
        self.lookup = lookup
        self.world_frame = world_frame
        self.half_size_m = cloud_half_size_m
        self.clouds = {}
        self.scan = None
        self.terrain = None
        self.history = {key: deque(maxlen=HISTORY_KEPT)
                        for key in ('t_s', 'veh_hit_dist', 'tire_hit_dist')}
        self._t0 = None
        self._poses = {}

    def on_points(self, msg, phase, weather):
        """Keep the latest cloud of the clear, fog and snow phases, with pose and Weather."""
        if phase in ('clear', 'fog', 'snow'):
            pose = self._pose(msg.header.frame_id, msg.header.stamp)
            if pose is not None:
                self.clouds[phase] = (msg, weather, pose)

    def on_scan(self, msg, phase):
        """Keep the latest laser scan taken in clear air (any scan until one is)."""
        if phase == 'clear' or self.scan is None or self.scan[1] != 'clear':
            pose = self._pose(msg.header.frame_id, msg.header.stamp)
            if pose is not None:
                self.scan = (msg, phase, pose)

    def on_terrain(self, msg):
        """Keep the latest sample and the distance history (its last HISTORY_KEPT samples)."""
        t = stamp_to_s(msg.header.stamp)
        if self._t0 is None:
            self._t0 = t
        self.history['t_s'].append(t - self._t0)
        self.history['veh_hit_dist'].append(msg.veh_hit_dist)
        self.history['tire_hit_dist'].append(list(msg.tire_hit_dist))
        # Show the latest sample whose body ray hits something (more telling than a miss).
        if msg.hit_flg[0] or self.terrain is None or not self.terrain.hit_flg[0]:
            self.terrain = msg

    def _pose(self, frame, stamp):
        """Return world-from-frame (4, 4) at stamp, or None while TF cannot give it."""
        try:
            return self.lookup(self.world_frame, frame, [stamp_to_s(stamp)])[0]
        except SimError:
            return None

    def write(self, out_dir, world=None, preset=''):
        """Write every PNG there is data for into out_dir; return the paths written."""
        import os

        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for name, (msg, weather, pose) in sorted(self.clouds.items()):
            pts = pointcloud2_to_array(msg)
            pts = pts[~np.isnan(pts['x'])]     # the empty cells of an organised (ouster) cloud
            xyz = np.stack([pts['x'], pts['y'], pts['z']], axis=1).astype(np.float64)
            world_xyz = xyz @ pose[:3, :3].T + pose[:3, 3]
            inten = intensity_byte(pts)
            what = phase_text(name, weather)
            head = f'3D LiDAR {preset} — {len(pts)} points, {what}'.replace('  ', ' ')
            yaw = float(np.arctan2(pose[1, 0], pose[0, 0]))
            if name == 'clear':
                paths.append(cloud_top_view(world_xyz, inten, pose[:3, 3],
                                            os.path.join(out_dir, 'points_top.png'),
                                            head + '\ntop view', self.half_size_m))
                paths.append(cloud_side_view(world_xyz, inten, pose[:3, 3], yaw,
                                             os.path.join(out_dir, 'points_side.png'),
                                             head + ' — side view', self.half_size_m))
            else:
                paths.append(cloud_top_view(world_xyz, inten, pose[:3, 3],
                                            os.path.join(out_dir, f'points_{name}_top.png'),
                                            head + '\ntop view', self.half_size_m))
        if self.scan is not None and world is not None:
            msg, phase, pose = self.scan
            wmap = height_map(world, pose[:2, 3], 32.0)
            r = np.asarray(msg.ranges, dtype=np.float64)
            title = (f'2D laser scan over the world seen from above ({phase})\n{len(r)} rays, '
                     f'{np.count_nonzero(np.isfinite(r))} hits, range_max {msg.range_max:g} m')
            paths.append(laser_scan_view(wmap, pose, r, msg.angle_min, msg.angle_increment,
                                         msg.range_max, os.path.join(out_dir, 'laser_scan.png'),
                                         title, np.asarray(msg.intensities), 30.0))
        if self.terrain is not None:
            msg = self.terrain
            start = np.array([[p.x, p.y, p.z] for p in msg.start_loc])
            hit = np.array([[p.x, p.y, p.z] for p in msg.hit_loc])
            yaw = _heading(start)
            paths.append(terrain_view(start, hit, np.asarray(msg.hit_flg),
                                      np.asarray(msg.enabled), yaw, self.history,
                                      os.path.join(out_dir, 'terrain_rays.png'),
                                      'terrain sensor rays (latest sample with a body-ray hit), '
                                      'side view',
                                      [msg.veh_hit_dist, *msg.tire_hit_dist]))
        return paths


def _heading(start_m):
    """Vehicle heading (rad) from the tire ray starts: front pair minus rear pair."""
    front = np.nanmean(start_m[1:3], axis=0)
    rear = np.nanmean(start_m[3:5], axis=0)
    d = front - rear
    return float(np.arctan2(d[1], d[0])) if np.all(np.isfinite(d)) else 0.0
