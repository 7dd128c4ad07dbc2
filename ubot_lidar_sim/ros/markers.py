"""
Debug and preview markers (visualization_msgs/MarkerArray) of the sensor nodes.

``fov_markers``: the 3D LiDAR's field of view (a range preview), in its frame; at
most MAX_RINGS distance rings whatever max_range_m, so ~12,500 points. ``FovMarkerThread``
builds and publishes them off the scan thread, the latest config only, at most once per
FOV_MIN_INTERVAL_S. ``ray_markers``: traced rays as two LINE_LISTs, hits green and misses red
(2D scanner, terrain).
"""

import math
import threading

from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
import numpy as np
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

PREVIEW_RGB = (0.05, 0.65, 1.0)     # range preview colour
PREVIEW_OPACITY = 0.12              # range preview opacity (the fill)
ANGULAR_GRID_DEG = 15.0             # angular grid interval, deg
DISTANCE_GRID_M = 5.0               # distance grid interval, m
MAX_LABELS = 20
MAX_RINGS = 20      # beyond 100 m of range the distance grid steps 10, 25, 50, 100, ... m
FOV_MIN_INTERVAL_S = 0.5
_GREEN = ColorRGBA(r=0.1, g=0.85, b=0.1, a=0.8)
_RED = ColorRGBA(r=0.9, g=0.1, b=0.1, a=0.6)


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


def ring_step_m(range_m):
    """
    Return the distance grid interval (m) that keeps range_m within MAX_RINGS rings.

    DISTANCE_GRID_M (5 m) up to 100 m of range, then the first of 10, 25, 50, 100, 250, ... m.
    """
    step = DISTANCE_GRID_M
    for factor in (2.0, 2.5, 2.0):      # 5 -> 10 -> 25 -> 50 -> 100 -> 250 -> ...
        if range_m <= step * MAX_RINGS:
            return step
        step *= factor
    return ring_step_m(range_m / 10.0) * 10.0


def _steps(lo, hi, step):
    return np.linspace(lo, hi, max(2, int(math.ceil((hi - lo) / step)) + 1))


def _arc_segments(r, az, el):
    """Return LINE_LIST vertices (2 (n-1), 3) of the polyline through _sph(r, az, el)."""
    p = _sph(r, az, el)
    return np.stack([p[:-1], p[1:]], axis=1).reshape(-1, 3)


def _points(xyz):
    """Return geometry_msgs/Point objects of (K, 3) metres."""
    return [Point(x=a, y=b, z=c) for a, b, c in np.asarray(xyz, dtype=np.float64).tolist()]


def _volume_triangles(cfg, r, az, el, limits):
    """Return TRIANGLE_LIST vertices: outer patch, top and bottom cones, sides below 360 deg."""
    az0, az1, el0, el1 = limits
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
    return np.concatenate(tris)


def _angular_grid(cfg, r, az, el, limits):
    """Return LINE_LIST vertices of the grid every 15 deg: rays, meridians and parallels."""
    az0, az1, el0, el1 = limits
    step = math.radians(ANGULAR_GRID_DEG)
    grid_az = np.arange(math.ceil(az0 / step), math.floor(az1 / step) + 1) * step
    if cfg.horizontal_fov_deg >= 360.0:
        grid_az = grid_az[grid_az < az1 - 1e-9]
    else:
        grid_az = np.unique(np.concatenate([[az0], grid_az, [az1]]))
    grid_el = np.unique(np.concatenate([
        [el0], np.arange(math.ceil(el0 / step), math.floor(el1 / step) + 1) * step, [el1]]))
    segs = []
    for g in grid_az:   # a few dozen grid lines, not per beam
        for e in (el0, el1):
            segs.append(np.stack([np.zeros(3), _sph(r, g, e)]))
        segs.append(_arc_segments(r, g, el))
    for e in grid_el:
        segs.append(_arc_segments(r, az, e))
    return np.concatenate(segs)


def _range_labels(cfg, r, rings, limits):
    """Return text markers along +x (or the FOV centre), thinned to at most MAX_LABELS."""
    el0, el1 = limits[2], limits[3]
    every = max(1, int(math.ceil(len(rings) / MAX_LABELS)))
    label_el = 0.0 if el0 <= 0.0 <= el1 else (el0 + el1) / 2.0
    labels = []
    for i, rr in enumerate(rings[every - 1::every]):
        label = _marker(cfg, 10 + i, 'range_labels', Marker.TEXT_VIEW_FACING, 1.0)
        label.scale.z = max(0.3, r / 60.0)
        label.text = f'{rr:g} m'
        p = _sph(rr, 0.0, label_el)
        label.pose.position = Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
        labels.append(label)
    return labels


def fov_markers(cfg):
    """Return the MarkerArray of the FOV: volume, angular grid, distance grid, range labels."""
    limits = _fov_limits(cfg)
    az0, az1, el0, el1 = limits
    r = cfg.max_range_m
    az = _steps(az0, az1, math.radians(5.0))
    el = _steps(el0, el1, math.radians(5.0))
    volume = _marker(cfg, 0, 'fov_volume', Marker.TRIANGLE_LIST, PREVIEW_OPACITY)
    volume.scale.x = volume.scale.y = volume.scale.z = 1.0
    volume.points = _points(_volume_triangles(cfg, r, az, el, limits))
    width = max(0.02, r / 1000.0)
    angular = _marker(cfg, 1, 'angular_grid', Marker.LINE_LIST, 0.5)
    angular.scale.x = width
    angular.points = _points(_angular_grid(cfg, r, az, el, limits))
    # Distance grid every 5 m (MAX_RINGS at most) on the top and bottom cones (and the horizon
    # when inside).
    step = ring_step_m(r)
    rings = np.arange(step, r + 1e-9, step)
    levels = [el0, el1] + ([0.0] if el0 < 0.0 < el1 else [])
    segs = [_arc_segments(rr, az, e) for rr in rings for e in levels]
    distance = _marker(cfg, 2, 'distance_grid', Marker.LINE_LIST, 0.35)
    distance.scale.x = width
    distance.points = _points(np.concatenate(segs)) if segs else []
    return MarkerArray(markers=[volume, angular, distance] + _range_labels(cfg, r, rings, limits))


class FovMarkerThread:
    """
    Publishes fov_markers(cfg) on its own thread: ``update(cfg)`` returns at once.

    Only the newest config is drawn, and at most once per FOV_MIN_INTERVAL_S, so repeated
    max_range_m sets cost the scan thread nothing and the GIL a bounded share.
    """

    def __init__(self, publish, cfg, name='fov_markers'):
        self._publish = publish
        self._cfg = cfg
        self._wake, self._stop = threading.Event(), threading.Event()
        self._wake.set()
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)
        self._thread.start()

    def update(self, cfg):
        """Draw cfg's field of view next (a newer update replaces one not drawn yet)."""
        self._cfg = cfg
        self._wake.set()

    def _run(self):
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self._publish(fov_markers(self._cfg))
            except Exception:  # noqa: B902 (a publisher destroyed under it: shutting down)
                if self._stop.is_set():
                    return
                raise
            self._stop.wait(FOV_MIN_INTERVAL_S)

    def close(self):
        """Stop the thread (waits up to 1 s for a drawing in progress)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=1.0)


def _marker(cfg, marker_id, ns, kind, alpha):
    m = Marker()
    m.header.frame_id = cfg.frame_id   # stamp 0: rviz draws it at the latest transform
    m.ns, m.id, m.type, m.action = ns, marker_id, kind, Marker.ADD
    m.pose.orientation.w = 1.0
    m.color.r, m.color.g, m.color.b = PREVIEW_RGB
    m.color.a = alpha
    m.frame_locked = True
    return m


def _duration(seconds):
    ns = int(round(max(seconds, 0.0) * 1e9))
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def ray_markers(starts_m, ends_m, hit, frame_id, stamp, lifetime_s, width_m=0.01):
    """
    Return a MarkerArray of two LINE_LISTs: hit rays (ns 'hits', green), misses ('misses', red).

    starts_m, ends_m: (K, 3) in frame_id; hit: (K,) bool.
    """
    out = MarkerArray()
    for ident, (ns, color, rows) in enumerate((('hits', _GREEN, hit), ('misses', _RED, ~hit))):
        m = Marker()
        m.header.frame_id = frame_id
        m.header.stamp = stamp
        m.ns = ns
        m.id = ident
        m.type = Marker.LINE_LIST
        m.action = Marker.ADD
        m.pose.orientation.w = 1.0
        m.scale.x = float(width_m)
        m.color = color
        m.lifetime = _duration(lifetime_s)
        seg = np.empty((2 * int(np.count_nonzero(rows)), 3))
        seg[0::2], seg[1::2] = starts_m[rows], ends_m[rows]
        m.points = _points(seg)
        out.markers.append(m)
    return out
