"""
World's typed query: a batch of rays, the settings of their trace, and the sweep they belong to.

``World.trace_rays(rays, settings, sweep)`` traces a RayBatch under TraceSettings; the sweep is
anything with ``actor_poses`` (SweepActors: core/sensors/sweep.py's Sweep, or ActorPoses). A
caller that holds a world through WorldQuery sees only what a sweep asks of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.limits import glass_physical
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt, RayTimes
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.world.materials import MaterialTable


@dataclass(frozen=True)
class RayBatch:
    """
    Rays of one trace: origins (N, 3), unit dirs (N, 3), world frame; max_range_m scalar or (N,).

    rays32 (N, 6) float32: the first cast's rays when the caller has them (origins without
    -0.0; sensors.sweep_passes.rotate_sub_rays), which saves a pass over the rays. times: when
    each ray meets the world's actors (raycast.actor_casting.RayTimes; None: t = 0 s).
    """

    origins: ArrayLike
    dirs: ArrayLike
    max_range_m: ArrayLike
    rays32: NDArray[np.float32] | None = None
    times: RayTimes | None = None


@dataclass(frozen=True)
class TraceSettings:
    """
    How World.trace_rays traces a RayBatch; checked when built (ConfigError names the field).

    A foliage hit lets the ray go on from hit + continue_step_m, up to max_hits (1-8) hits; a
    solid hit stops it. smoke: per-scan cells (K, 4) x, y, z, radius_m with smoke_density (K,),
    or (K, 5) with the density last; they join the world's static smoke unless smoke_enabled
    is False. A cell whose effective density (density x (1 - (b / r)^2), b the ray's closest
    approach, r = radius_m x smoke_radius_scale) is >= smoke_density_threshold ends the ray
    with a smoke hit at its entry point. Texture: reflectivity_sd / micro_slope_deg (17,)
    override those of ``materials`` (a MaterialTable; None: the world's). with_points /
    with_normals False leave Hits.point / Hits.normal None (two passes saved). glass:
    'physical' lets panes pass the ray on as foliage does (docs/physics.md, "Glass and
    mirrors"), 'opaque' stops it.
    """

    max_hits: int = 4
    continue_step_m: float = 0.25
    ignored: str | Iterable[str] = ()
    smoke: ArrayLike | None = None
    smoke_radius_scale: float = 1.0
    smoke_density_threshold: float = 0.05
    smoke_density: ArrayLike | None = None
    smoke_enabled: bool = True
    materials: MaterialTable | None = None
    reflectivity_sd: ArrayLike | None = None
    micro_slope_deg: ArrayLike | None = None
    with_points: bool = True
    with_normals: bool = True
    glass: str = 'opaque'

    def __post_init__(self) -> None:
        """Check the values (ConfigError naming the field, the value and what is allowed)."""
        glass_physical(self.glass)
        if isinstance(self.max_hits, bool) or not isinstance(self.max_hits, (int, np.integer)) \
                or not 1 <= self.max_hits <= 8:
            raise ConfigError('max_hits', self.max_hits, 'an int in [1, 8]')
        if not self.continue_step_m > 0.0:
            raise ConfigError('continue_step_m', self.continue_step_m, '> 0')
        if not self.smoke_radius_scale >= 0.01:
            raise ConfigError('smoke_radius_scale', self.smoke_radius_scale, '>= 0.01')
        if not 0.0 <= self.smoke_density_threshold <= 1.0:
            raise ConfigError('smoke_density_threshold', self.smoke_density_threshold, '0-1')


class SweepActors(Protocol):
    """What a trace reads of its sweep: where the world's actors are ({name: pose_at} or None)."""

    @property
    def actor_poses(self) -> Mapping[str, PoseAt] | None:
        """Return {actor name: pose_at} posing those actors (World.actor_frame), or None."""


@dataclass(frozen=True)
class ActorPoses:
    """A SweepActors of its own, for a trace outside a sensor's sweep (World.trace)."""

    actor_poses: Mapping[str, PoseAt] | None = None


NO_ACTOR_POSES = ActorPoses()


class WorldQuery(Protocol):
    """The queries a sweep puts to its world (core/world/world.py's World answers them)."""

    def trace_rays(self, rays: RayBatch, settings: TraceSettings,
                   sweep: SweepActors = NO_ACTOR_POSES) -> Hits:
        """Return the Hits of rays sorted by (ray, range), traced under settings."""

    def ground_albedo(self, points: NDArray[np.float64], material: NDArray[np.uint8],
                      sd_table: NDArray[np.float64]) -> NDArray[np.float32]:
        """Return the albedo (K,) of the ground texture at points (K, 3) of materials (K,)."""
