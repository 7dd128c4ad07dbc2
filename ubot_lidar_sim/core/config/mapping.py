"""
The flat parameter names of a config: from and to a mapping, copies, descriptors.

The parameter interface (ROS parameters, params files, presets, ``--set``) is flat; a config's
sub-configs (its ``pattern`` and ``physical``) hold fields of those names.
"""

import dataclasses

from ubot_lidar_sim.core.config.fields import group_names
from ubot_lidar_sim.core.config.model import PhysicalModel
from ubot_lidar_sim.core.errors import ConfigError, did_you_mean

#: The node whose parameters a config class holds (the names of docs/parameters.md).
NODE_OF = {'LidarConfig': 'lidar_3d', 'LaserScanConfig': 'laser_scan',
           'TerrainConfig': 'terrain_sensor'}


def from_dict(cls, mapping):
    """Build a config of class ``cls`` from a parameter mapping; unknown keys raise ConfigError."""
    names = {f.name for f in dataclasses.fields(cls)}
    for key, value in mapping.items():
        if key not in names:
            node = NODE_OF.get(cls.__name__, cls.__name__)
            raise ConfigError(key, value, f'a {node} parameter name (docs/parameters.md)'
                              f'{did_you_mean(key, sorted(names))}')
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in mapping.items()})


def replace(cfg, **changes):
    """Return a copy of ``cfg`` with ``changes`` applied, re-validated."""
    return from_dict(type(cfg), {**to_dict(cfg), **changes})


def to_dict(cfg):
    """Return the parameters of ``cfg`` as a plain dict (tuples stay tuples)."""
    return {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}


def descriptors(cls):
    """Return {name: metadata dict} for every parameter of ``cls`` (for ROS descriptors)."""
    return {f.name: dict(f.metadata) for f in dataclasses.fields(cls)}


def applicable_names(cfg):
    """
    Return the parameter names that apply to cfg, in field order.

    Not those of the patterns other than cfg.pattern, nor the physical model's with model
    'geometric' (cfg.physical None); a config without sub-configs (terrain) keeps them all.
    """
    skip = set()
    pattern = getattr(cfg, 'pattern', None)
    for base in type(cfg).__mro__:
        if vars(base).get('kind') and base is not type(pattern):
            skip |= group_names(base)
    if getattr(cfg, 'physical', True) is None:
        skip |= group_names(PhysicalModel)
    return tuple(f.name for f in dataclasses.fields(cfg) if f.name not in skip)
