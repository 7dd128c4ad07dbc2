"""
What the laws read of the sensor's own part: its range window and its per-ring R10 table.

The lidar_3d's own part (core/config/lidar.py LidarSensor, ``cfg.sensor``) sits a layer above
the laws (test/test_layers.py), so a law that reads these fields names this structural view of
it; LidarSensor satisfies it. The 2D scanner's laws run on its LidarConfig
(LaserScanConfig.to_lidar_config). The physical model's parameters come typed as their parts
(core/config/physical_model.py).
"""

from typing import Protocol, Sequence


class SensorPart(Protocol):
    """The sensor's range window, m, and per-ring range_at_10pct_m table (empty: none)."""

    @property
    def min_range_m(self) -> float:
        """Return the nearest range an echo is detected at, m."""

    @property
    def max_range_m(self) -> float:
        """Return the farthest range an echo is detected at, m."""

    @property
    def ring_range_at_10pct_m(self) -> Sequence[float]:
        """Return the per-ring range_at_10pct_m, m (empty: every ring has the radiometry's)."""
