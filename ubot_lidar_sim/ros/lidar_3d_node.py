"""
The lidar_3d node (CONTRACT §6, §7): a spinning 3D LiDAR publishing PointCloud2.

Each sweep looks up world_frame -> frame_id at every column's firing time (vectorised), calls
the core LidarSimulator once, packs the requested point layout and publishes it. The field of
view is published once, latched, on ~/fov_markers (document 002's editor preview).
"""

import math

from geometry_msgs.msg import Point
import numpy as np
from sensor_msgs.msg import PointCloud2

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.worker import ScanProcess, sweep
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.ros.conversions import array_to_pointcloud2, to_layout
from ubot_lidar_sim.ros.sensor_node import latched_qos, run_node, SensorNode
from visualization_msgs.msg import Marker, MarkerArray

PREVIEW_RGB = (0.05, 0.65, 1.0)     # document 002: Range Preview Color
PREVIEW_OPACITY = 0.12              # document 002: Range Preview Opacity (the fill)
ANGULAR_GRID_DEG = 15.0             # document 002: Angular Grid Interval Degrees
DISTANCE_GRID_M = 5.0               # document 002: Distance Grid Interval Meters
MAX_LABELS = 20


def _fov_limits(cfg):
    """Return (az_min, az_max, el_min, el_max) rad of the field of view."""
    half = math.radians(cfg.horizontal_fov_deg) / 2.0
    if cfg.elevations_deg:
        el = np.radians(cfg.elevations_deg)
        return -half, half, float(el.min()), float(el.max())
    return (-half, half, -math.radians(cfg.vertical_fov_down_deg),
            math.radians(cfg.vertical_fov_up_deg))


def _sph(r, az, el):
    """Return points (..., 3) at range r, azimuth az, elevation el (broadcast)."""
    r, az, el = np.broadcast_arrays(r, az, el)
    return np.stack([r * np.cos(el) * np.cos(az), r * np.cos(el) * np.sin(az),
                     r * np.sin(el)], axis=-1)


def _steps(lo, hi, step):
    return np.linspace(lo, hi, max(2, int(math.ceil((hi - lo) / step)) + 1))


def _arc_segments(r, az, el):
    """Return LINE_LIST vertices (2 (n-1), 3) of the polyline through _sph(r, az, el)."""
    p = _sph(r, az, el)
    return np.stack([p[:-1], p[1:]], axis=1).reshape(-1, 3)


def _points(xyz):
    return [Point(x=a, y=b, z=c) for a, b, c in np.asarray(xyz, dtype=np.float64).tolist()]


def fov_markers(cfg):
    """Return the MarkerArray of the FOV: volume, angular grid, distance grid, range labels."""
    az0, az1, el0, el1 = _fov_limits(cfg)
    r = cfg.max_range_m
    az = _steps(az0, az1, math.radians(5.0))
    el = _steps(el0, el1, math.radians(5.0))
    # Volume: outer spherical patch, the top and bottom cones and, below 360 deg, the sides.
    outer = _sph(r, az[:, None], el[None, :])
    a, b = outer[:-1, :-1], outer[1:, :-1]
    c, d = outer[1:, 1:], outer[:-1, 1:]
    tris = [np.stack([a, b, c, a, c, d], axis=2).reshape(-1, 3)]
    origin = np.zeros((len(az) - 1, 3))
    for e in (el0, el1):
        ring = _sph(r, az, e)
        tris.append(np.stack([origin, ring[:-1], ring[1:]], axis=1).reshape(-1, 3))
    if cfg.horizontal_fov_deg < 360.0:
        origin = np.zeros((len(el) - 1, 3))
        for edge in (az0, az1):
            side = _sph(r, edge, el)
            tris.append(np.stack([origin, side[:-1], side[1:]], axis=1).reshape(-1, 3))
    volume = _marker(cfg, 0, 'fov_volume', Marker.TRIANGLE_LIST, PREVIEW_OPACITY)
    volume.scale.x = volume.scale.y = volume.scale.z = 1.0
    volume.points = _points(np.concatenate(tris))
    width = max(0.02, r / 1000.0)
    # Angular grid every 15 deg: rays and meridians in azimuth, parallels in elevation.
    grid_az = np.arange(math.ceil(az0 / math.radians(ANGULAR_GRID_DEG)),
                        math.floor(az1 / math.radians(ANGULAR_GRID_DEG)) + 1)
    grid_az = grid_az * math.radians(ANGULAR_GRID_DEG)
    if cfg.horizontal_fov_deg >= 360.0:
        grid_az = grid_az[grid_az < az1 - 1e-9]
    else:
        grid_az = np.unique(np.concatenate([[az0], grid_az, [az1]]))
    grid_el = np.unique(np.concatenate([
        [el0], np.arange(math.ceil(el0 / math.radians(ANGULAR_GRID_DEG)),
                         math.floor(el1 / math.radians(ANGULAR_GRID_DEG)) + 1)
        * math.radians(ANGULAR_GRID_DEG), [el1]]))
    segs = []
    for g in grid_az:   # a few dozen grid lines, not per beam
        for e in (el0, el1):
            segs.append(np.stack([np.zeros(3), _sph(r, g, e)]))
        segs.append(_arc_segments(r, g, el))
    for e in grid_el:
        segs.append(_arc_segments(r, az, e))
    angular = _marker(cfg, 1, 'angular_grid', Marker.LINE_LIST, 0.5)
    angular.scale.x = width
    angular.points = _points(np.concatenate(segs))
    # Distance grid every 5 m on the top and bottom cones (and the horizon when inside).
    rings = np.arange(DISTANCE_GRID_M, r + 1e-9, DISTANCE_GRID_M)
    levels = [el0, el1] + ([0.0] if el0 < 0.0 < el1 else [])
    segs = [_arc_segments(rr, az, e) for rr in rings for e in levels]
    distance = _marker(cfg, 2, 'distance_grid', Marker.LINE_LIST, 0.35)
    distance.scale.x = width
    distance.points = _points(np.concatenate(segs)) if segs else []
    markers = [volume, angular, distance]
    # Range labels along +x (or the FOV centre), thinned to at most MAX_LABELS.
    every = max(1, int(math.ceil(len(rings) / MAX_LABELS)))
    label_el = 0.0 if el0 <= 0.0 <= el1 else (el0 + el1) / 2.0
    for i, rr in enumerate(rings[every - 1::every]):
        label = _marker(cfg, 10 + i, 'range_labels', Marker.TEXT_VIEW_FACING, 1.0)
        label.scale.z = max(0.3, r / 60.0)
        label.text = f'{rr:g} m'
        p = _sph(rr, 0.0, label_el)
        label.pose.position = Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
        markers.append(label)
    return MarkerArray(markers=markers)


def _marker(cfg, marker_id, ns, kind, alpha):
    m = Marker()
    m.header.frame_id = cfg.frame_id   # stamp 0: rviz draws it at the latest transform
    m.ns, m.id, m.type, m.action = ns, marker_id, kind, Marker.ADD
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b = PREVIEW_RGB
    m.color.a = alpha
    m.frame_locked = True
    return m


class Lidar3DNode(SensorNode):
    """The lidar_3d node: ``points`` (PointCloud2), ``~/fov_markers``, ``~/sample``."""

    default_name = 'lidar_3d'

    def __init__(self, node_name='lidar_3d', **kwargs):
        super().__init__(node_name, LidarConfig, **kwargs)
        cfg = self.config
        self._sim = LidarSimulator(cfg, self.world, self.materials)
        # The child processes (compute_process, compute_workers) run the same simulator on
        # their own GILs; with several, each computes a range of beams of every sweep.
        self._proc = ScanProcess(cfg, self.world, self.materials, cfg.compute_workers) \
            if cfg.compute_process or cfg.compute_workers > 1 else None
        self._points_pub = self.create_publisher(PointCloud2, 'points', self.output_qos)
        self._marker_pub = self.create_publisher(MarkerArray, '~/fov_markers', latched_qos(1))
        self._marker_pub.publish(fov_markers(cfg))
        self._beams = cfg.channels * cfg.horizontal_samples
        self._core_ms = {}
        self.start_trigger(cfg.rate_hz, cfg.trigger)

    def has_subscribers(self):
        """Return True while ``points`` has a subscriber."""
        return self._points_pub.get_subscription_count() > 0

    def validate_config(self, cfg):
        """Refuse a config the simulator cannot run (rays per scan, layout and stamp)."""
        LidarSimulator(cfg, self.world, self.materials)

    def on_config_changed(self, names):
        """Rebuild the simulator from the new config; republish the FOV if the range moved."""
        self._sim = LidarSimulator(self.config, self.world, self.materials)
        if self._proc is not None:
            self._proc.set_config(self.config)
        if names & {'max_range_m', 'min_range_m'}:
            self._marker_pub.publish(fov_markers(self.config))

    def scan_once(self, now_ns):
        """Trace the newest sweep the TF covers, publish it, return the point count."""
        cfg = self.config
        start_ns, end_ns = self.sweep_window(cfg.frame_id, now_ns, cfg.period_s)
        stamp_ns = start_ns if cfg.stamp_at == 'start' else end_ns
        world, frame = cfg.world_frame, cfg.frame_id

        def pose_at(times_s):
            return self.lookup_many(world, frame, times_s)

        result = sweep(self._sim, self._proc, pose_at, stamp_ns * 1e-9, self.weather,
                       self.scan_index)
        points = to_layout(result.points, cfg.point_layout, cfg.ambient_counts)
        self._points_pub.publish(array_to_pointcloud2(points, frame, stamp_ns))
        self._beams = result.n_beams
        self._core_ms = result.timing_ms
        return len(points)

    def destroy_node(self):
        """Stop the scan worker, then the compute process (if any), then destroy the node."""
        try:
            return super().destroy_node()
        finally:
            # getattr: a node whose __init__ failed is destroyed too (before _proc existed).
            proc = getattr(self, '_proc', None)
            if proc is not None:
                proc.close()

    def diagnostics_values(self):
        """Return lidar-specific diagnostics: beams, layout, weather in use."""
        w = self.weather
        core = [(f'core.{k}', f'{v:.1f}') for k, v in self._core_ms.items()]
        return core + [
            ('beams_per_scan', str(self._beams)), ('point_layout', self.config.point_layout),
            ('compute_process', ' '.join(f'pid {pid}' for pid in self._proc.pids)
             if self._proc is not None and self._proc.pids else 'off'),
            ('rain_mm_h', f'{w.rain_mm_h:g}'), ('visibility_m', f'{w.visibility_m:g}')]


def main(args=None):
    """Run the lidar_3d node until Ctrl-C; return the exit code."""
    return run_node(Lidar3DNode, args)


if __name__ == '__main__':
    raise SystemExit(main())
