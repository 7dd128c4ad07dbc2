"""
The ray-casting backends by name: the ``caster`` parameter (open3d | embree) in one place.

``caster_factory('embree', threads)`` is the backend.CasterFactory a World is built with. The
default comes from benchmarks/bench_casters.py (docs/performance.md, "Casters").
"""

from __future__ import annotations

from functools import partial

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.limits import CASTER_NAMES, DEFAULT_CASTER
from ubot_lidar_sim.core.raycast.backend import CasterFactory
from ubot_lidar_sim.core.raycast.embree_caster import EmbreeCaster
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster

CASTERS: dict[str, type] = dict(zip(CASTER_NAMES, (Open3dCaster, EmbreeCaster)))


def caster_factory(name: str = DEFAULT_CASTER, threads: int = 0) -> CasterFactory:
    """
    Return the CasterFactory of backend name (a key of CASTERS).

    threads: threads per cast (0: every core; 1: a worker given one CPU casts alone).
    """
    if name not in CASTERS:
        raise ConfigError('caster', name, ' or '.join(CASTERS))
    cls = CASTERS[name]
    return cls if threads == 0 else partial(cls, threads=threads)
