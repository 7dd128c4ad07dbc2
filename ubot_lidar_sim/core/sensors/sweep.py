"""One sweep's inputs besides the sensor's poses: its stamp, weather, index and actor poses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt


@dataclass(frozen=True, eq=False)
class Sweep:
    """
    The sweep whose header stamp is stamp_s (s), passed as one value down the sweep pipeline.

    weather: a Weather (None: clear, dry); scan_index keys the random streams (noise,
    clutter, roughness; core/sensors/random_streams.py); actor_poses {actor name: pose_at}
    poses those of the world's actors (World.actor_frame; None: their trajectories), picklable
    (poses.SampledPath) where the sweep goes to a compute process. The sensor's poses travel
    beside it: a column block takes its own rows of them. World.trace_rays reads actor_poses
    (core/world/query.py SweepActors).
    """

    stamp_s: float
    weather: Weather | None = None
    scan_index: int = 0
    actor_poses: Mapping[str, PoseAt] | None = None

    def __post_init__(self) -> None:
        """Hold stamp_s as a float and scan_index as an int (numpy scalars are accepted)."""
        object.__setattr__(self, 'stamp_s', float(self.stamp_s))
        object.__setattr__(self, 'scan_index', int(self.scan_index))
