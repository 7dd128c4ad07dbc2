"""
The flat parameter names of a config: from and to a mapping, copies, descriptors.

The parameter interface (ROS parameters, params files, presets, ``--set``) is flat; a config
is composed of parts (``shared``, its patterns, ``physical_model`` with its ``radiometry``,
``atmosphere``, ...) that hold fields of those names. fields.flat_paths is the one mapping
between the two; the nodes, the CLI, presets and the dataset spec go through these functions.
"""

import dataclasses
from typing import Any, Dict, Mapping, Tuple, TypeVar

from ubot_lidar_sim.core.config.fields import flat_fields, flat_paths, group_names
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.errors import ConfigError, did_you_mean

#: The node whose parameters a config class holds (the names of docs/parameters.md).
NODE_OF = {'LidarConfig': 'lidar_3d', 'LaserScanConfig': 'laser_scan',
           'TerrainConfig': 'terrain_sensor'}

C = TypeVar('C')


def from_dict(cls: type[C], mapping: Mapping[str, Any]) -> C:
    """Build a config of class ``cls`` from a parameter mapping; unknown keys raise ConfigError."""
    names = flat_paths(cls)
    for key, value in mapping.items():
        if key not in names:
            node = NODE_OF.get(cls.__name__, cls.__name__)
            raise ConfigError(key, value, f'a {node} parameter name (docs/parameters.md)'
                              f'{did_you_mean(key, sorted(names))}')
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in mapping.items()})


def replace(cfg: C, **changes: Any) -> C:
    """Return a copy of ``cfg`` with ``changes`` applied, re-validated."""
    return from_dict(type(cfg), {**to_dict(cfg), **changes})


def to_dict(cfg: Any) -> Dict[str, Any]:
    """Return the parameters of ``cfg`` as a plain dict (tuples stay tuples)."""
    return {name: getattr(cfg, name) for name in flat_paths(type(cfg))}


def descriptors(cls: type) -> Dict[str, Dict[str, Any]]:
    """Return {name: metadata dict} for every parameter of ``cls`` (for ROS descriptors)."""
    return {f.name: dict(f.metadata) for f in flat_fields(cls)}


def applicable_names(cfg: Any) -> Tuple[str, ...]:
    """
    Return the parameter names that apply to cfg, in parameter order.

    Not those of the patterns other than cfg.pattern, nor the physical model's with model
    'geometric' (cfg.physical None); a config without patterns (terrain) keeps them all.
    """
    skip: set[str] = set()
    pattern = getattr(cfg, 'pattern', None)
    for f in dataclasses.fields(cfg):
        part = getattr(cfg, f.name)
        if getattr(part, 'kind', None) and part is not pattern:
            skip |= group_names(f.type)  # type: ignore[arg-type]
    if getattr(cfg, 'physical', True) is None:
        skip |= group_names(PhysicalModel)
    return tuple(name for name in flat_paths(type(cfg)) if name not in skip)
