"""
When the rays of a cast fire (RayTimes), in a module without numba.

The terrain sensor and ``describe`` (which prints the terrain model's text) import it without
compiling or loading the actor-casting kernels (core/raycast/actor_casting.py).
"""

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray


class RayTimes(NamedTuple):
    """
    When each ray of a cast fires: time_s (N,) s; column (N,) int64 into column_time_s (C,) s.

    A ray fires within a few microseconds (the per-laser offsets) of its column's time; the cull
    uses the column's time with a sphere grown by the actor's motion over that offset.
    """

    time_s: NDArray[np.float64]
    column: NDArray[np.int64]
    column_time_s: NDArray[np.float64]


def one_instant(n: int, time_s: float) -> RayTimes:
    """Return the RayTimes of n rays that all fire at time_s."""
    return RayTimes(np.full(n, float(time_s)), np.zeros(n, np.int64),
                    np.array([float(time_s)]))
