"""
The sensors' configs: frozen, self-validating; field names are the ROS parameter names.

One module a concept: fields (declaration and validation), shared and model (parameter
groups), patterns (one sub-config per scan pattern), lidar, laser, terrain (the configs),
mapping (flat names in and out), presets, params_file and configure (what a sensor runs with).
"""

from ubot_lidar_sim.core.config.laser import LaserScanConfig
from ubot_lidar_sim.core.config.lidar import (AUTO_COLUMN_BLOCKS_MAX, AUTO_SUB_RAYS_PER_BLOCK,
                                              LidarConfig)
from ubot_lidar_sim.core.config.mapping import (applicable_names, descriptors, from_dict, replace,
                                                to_dict)
from ubot_lidar_sim.core.config.model import ModelShared, PhysicalModel
from ubot_lidar_sim.core.config.patterns import PlanarPattern, RosettePattern, SpinningPattern
from ubot_lidar_sim.core.config.terrain import TerrainConfig

__all__ = ['AUTO_COLUMN_BLOCKS_MAX', 'AUTO_SUB_RAYS_PER_BLOCK', 'applicable_names', 'descriptors',
           'from_dict', 'LaserScanConfig', 'LidarConfig', 'ModelShared', 'PhysicalModel',
           'PlanarPattern', 'replace', 'RosettePattern', 'SpinningPattern', 'TerrainConfig',
           'to_dict']
