"""
When the rays of a cast fire (RayTimes), in a module without numba.

The terrain sensor and ``describe`` (which prints the terrain model's text) import it without
compiling or loading the actor-casting kernels (core/raycast/actor_casting.py).
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray


class RayTimes(NamedTuple):
    """
    When each ray of a cast fires: time_s (N,) s; column (N,) int64 into column_time_s (C,) s.

    A ray fires within a few microseconds (the per-laser offsets) of its column's time; the cull
    uses the column's time with a sphere grown by the actor's motion over that offset.
    window_s (lo <= 0 <= hi) s, when given, bounds every ray's offset time_s - column_time_s
    [column]: its producer knows it once per sweep (a sweep's beams), so no cast of the sweep
    scans its rays for it (None: firing_window reads it from the rays). A callable returning
    it is asked only by a cast whose actors move (actors that hold one pose need no window).
    """

    time_s: NDArray[np.float64]
    column: NDArray[np.int64]
    column_time_s: NDArray[np.float64]
    window_s: tuple[float, float] | Callable[[], tuple[float, float]] | None = None


def firing_window(times: RayTimes) -> tuple[float, float]:
    """Return (lo <= 0, hi >= 0) s bounding the rays' offsets from their column's time."""
    window = times.window_s
    if callable(window):
        return window()
    if window is not None:
        return window
    return offset_window(np.asarray(times.time_s, np.float64)
                         - np.asarray(times.column_time_s, np.float64)[times.column])


def offset_window(late_s: NDArray[np.float64]) -> tuple[float, float]:
    """Return (min(late_s.min(), 0), max(late_s.max(), 0)) s; (0, 0) for no offsets."""
    if late_s.size == 0:
        return 0.0, 0.0
    return min(float(late_s.min()), 0.0), max(float(late_s.max()), 0.0)


def one_instant(n: int, time_s: float) -> RayTimes:
    """Return the RayTimes of n rays that all fire at time_s."""
    return RayTimes(np.full(n, float(time_s)), np.zeros(n, np.int64),
                    np.array([float(time_s)]))
