"""
Vehicle trajectories of a recording: constant twist or waypoints at a speed (both core.poses).

A trajectory is a ``pose_at``: called with times (C,) s it returns the world-from-base poses
(C, 4, 4). ``Mounted`` puts a sensor on it (world-from-sensor = world-from-base @ mount).
"""

import numpy as np


class Mounted:
    """Sensor trajectory: world-from-sensor (C, 4, 4) = base(times) @ mount (4, 4)."""

    def __init__(self, base, mount):
        self.base = base
        self.mount = np.asarray(mount, dtype=np.float64)

    def __call__(self, times_s):
        """World-from-sensor poses (C, 4, 4) at times (C,) s."""
        return self.base(times_s) @ self.mount[None]
