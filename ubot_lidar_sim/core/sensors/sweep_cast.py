"""The trace of one sweep's rays: World.trace_rays with the sweep's settings and ray times."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.raycast.ray_times import offset_window, RayTimes
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.world.query import RayBatch, TraceSettings, WorldQuery


@dataclass(frozen=True, eq=False)
class SweepCast:
    """
    World.trace_rays of the rays of one sweep (or column block).

    late_s (B,) s each beam's firing time after the stamp and column (B,) int64 its column
    (None: the world has no actors, no times); column_time_s (C,) s; n_sub sub-rays per beam;
    max_range_m and settings: the trace's (query.py).
    """

    world: WorldQuery
    sweep: Sweep
    late_s: NDArray[np.float64] | None
    column: NDArray[np.int64] | None
    column_time_s: NDArray[np.float64]
    n_sub: int
    max_range_m: float = np.inf
    settings: TraceSettings = TraceSettings()

    @cached_property
    def window_s(self) -> tuple[float, float]:
        """
        Return (lo, hi) s bounding every beam's firing offset from its column, once per cast.

        Taken from the absolute times as firing_window takes them from a cast's rays: the same
        bits as a cast of every beam finds.
        """
        if self.late_s is None or self.column is None:
            return 0.0, 0.0
        stamp_s = self.sweep.stamp_s
        return offset_window((stamp_s + self.late_s)
                             - (stamp_s + np.asarray(self.column_time_s, np.float64))[self.column])

    def window(self) -> tuple[float, float]:
        """Return window_s: asked by a cast whose actors move (ray_times.firing_window)."""
        return self.window_s

    def times(self, beam: NDArray[np.int64] | None = None) -> RayTimes | None:
        """
        Return the RayTimes of rays of beams beam (N,) int (None: no actors).

        beam None: every sub-ray in sweep order (beam major, n_sub per beam).
        """
        if self.late_s is None or self.column is None:
            return None
        if beam is None and self.n_sub == 1:    # one ray per beam: the beams' own arrays
            late, column = self.late_s, self.column
        elif beam is None:
            late, column = np.repeat(self.late_s, self.n_sub), np.repeat(self.column, self.n_sub)
        else:
            late, column = self.late_s[beam], self.column[beam]
        stamp_s = self.sweep.stamp_s
        return RayTimes(stamp_s + late, column,
                        stamp_s + np.asarray(self.column_time_s, np.float64), self.window)

    def trace(self, origins: ArrayLike, dirs: ArrayLike,
              rays32: NDArray[np.float32] | None = None, beam: NDArray[np.int64] | None = None,
              max_range_m: ArrayLike | None = None, settings: TraceSettings | None = None
              ) -> Hits:
        """
        Return the Hits of rays (N, 3), rays32 (N, 6) of beams beam (N,) (None: every ray).

        max_range_m (scalar or (N,)) and settings replace the cast's when given.
        """
        rng = self.max_range_m if max_range_m is None else max_range_m
        return self.world.trace_rays(RayBatch(origins, dirs, rng, rays32, self.times(beam)),
                                     self.settings if settings is None else settings,
                                     self.sweep)
