"""
Vehicle trajectories of a recording: constant twist (core.poses) or waypoints at a speed.

A trajectory is a ``pose_at``: called with times (C,) s it returns the world-from-base poses
(C, 4, 4). ``Mounted`` puts a sensor on it (world-from-sensor = world-from-base @ mount).
"""

import numpy as np

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.poses import pose_matrix


class WaypointPath:
    """
    Base frame driving through waypoints (W, 3) m at speed_m_s, then holding the last one.

    Straight segments; the base's x axis points along the segment (yaw from dx, dy; pitch from
    dz; roll 0), so the heading turns at a waypoint from one sample to the next.
    """

    def __init__(self, waypoints_m, speed_m_s, name='waypoints'):
        pts = np.asarray(waypoints_m, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[0] < 2 or pts.shape[1] != 3 or \
                not np.all(np.isfinite(pts)):
            raise ConfigError(name, _plain(waypoints_m), 'at least 2 finite [x, y, z] points')
        seg = np.diff(pts, axis=0)
        length = np.linalg.norm(seg, axis=1)
        if np.any(length <= 0.0):
            raise ConfigError(name, _plain(waypoints_m), 'no two consecutive equal points')
        if not (isinstance(speed_m_s, (int, float)) and 0.0 < speed_m_s < 1e3):
            raise ConfigError('speed_m_s', speed_m_s, 'a speed > 0 and < 1000 m/s')
        self.points = pts
        self.speed_m_s = float(speed_m_s)
        self._cum = np.concatenate([[0.0], np.cumsum(length)])
        self._yaw = np.arctan2(seg[:, 1], seg[:, 0])
        self._pitch = -np.arctan2(seg[:, 2], np.hypot(seg[:, 0], seg[:, 1]))

    def __call__(self, times_s):
        """World-from-base poses (C, 4, 4) at times (C,) s (before 0: the first waypoint)."""
        s = np.clip(np.atleast_1d(np.asarray(times_s, dtype=np.float64)) * self.speed_m_s,
                    0.0, self._cum[-1])
        seg = np.clip(np.searchsorted(self._cum, s, side='right') - 1, 0, len(self._yaw) - 1)
        frac = (s - self._cum[seg]) / (self._cum[seg + 1] - self._cum[seg])
        xyz = self.points[seg] + frac[:, None] * (self.points[seg + 1] - self.points[seg])
        out = np.empty((len(s), 4, 4))
        for i in np.unique(seg):            # one rotation per segment, not per time
            rows = seg == i
            out[rows] = pose_matrix((0.0, 0.0, 0.0), (0.0, self._pitch[i], self._yaw[i]))
        out[:, :3, 3] = xyz
        return out


class Mounted:
    """Sensor trajectory: world-from-sensor (C, 4, 4) = base(times) @ mount (4, 4)."""

    def __init__(self, base, mount):
        self.base = base
        self.mount = np.asarray(mount, dtype=np.float64)

    def __call__(self, times_s):
        """World-from-sensor poses (C, 4, 4) at times (C,) s."""
        return self.base(times_s) @ self.mount[None]


def _plain(value):
    return np.asarray(value).tolist() if isinstance(value, np.ndarray) else value
