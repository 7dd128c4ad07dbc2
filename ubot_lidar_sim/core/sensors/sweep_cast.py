"""The trace of one sweep's rays: World.trace with the sweep's settings and each ray's time."""

from dataclasses import dataclass, field
from typing import Any, Dict, Optional

import numpy as np

from ubot_lidar_sim.core.raycast.actor_casting import RayTimes


@dataclass(frozen=True)
class SweepCast:
    """
    World.trace of the rays of one sweep (or column block) stamped stamp_s.

    settings: World.trace's keyword arguments but times and rays32; late_s (B,) s each beam's
    firing time after the stamp and column (B,) int64 its column (None: the world has no
    actors, no times); column_time_s (C,) s; n_sub sub-rays per beam; actor_poses as in
    World.trace.
    """

    world: Any
    stamp_s: float
    late_s: Optional[np.ndarray]
    column: Optional[np.ndarray]
    column_time_s: np.ndarray
    n_sub: int
    actor_poses: Optional[Dict] = None
    settings: Dict = field(default_factory=dict)

    def times(self, beam=None):
        """
        Return the RayTimes of rays of beams beam (N,) int (None: no actors).

        beam None: every sub-ray in sweep order (beam major, n_sub per beam).
        """
        if self.late_s is None:
            return None
        if beam is None:
            beam = np.repeat(np.arange(self.late_s.size), self.n_sub)
        return RayTimes(self.stamp_s + self.late_s[beam], self.column[beam],
                        self.stamp_s + np.asarray(self.column_time_s, np.float64))

    def trace(self, origins, dirs, rays32, beam=None):
        """Return the Hits of rays (N, 3), rays32 (N, 6) of beams beam (N,) (None: every ray)."""
        return self.world.trace(origins, dirs, rays32=rays32, times=self.times(beam),
                                actor_poses=self.actor_poses, **self.settings)
