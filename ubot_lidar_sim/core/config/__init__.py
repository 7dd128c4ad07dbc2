"""
The sensors' configs: frozen, self-validating, composed of parts; flat names are the ROS names.

One module a concept: fields (declaration, validation, the flat-name mapping), shared, model,
physical_model, optics, radiometry, atmosphere, imperfections and patterns (the parts), lidar,
laser, terrain (the configs of parts), mapping (flat names in and out), presets, params_file and
configure (what a sensor runs with).
"""

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.fields import flat_fields, flat_paths
from ubot_lidar_sim.core.config.imperfections import ImperfectionsConfig
from ubot_lidar_sim.core.config.laser import LaserScanConfig
from ubot_lidar_sim.core.config.lidar import (AUTO_COLUMN_BLOCKS_MAX, AUTO_SUB_RAYS_PER_BLOCK,
                                              LidarConfig)
from ubot_lidar_sim.core.config.mapping import (applicable_names, descriptors, from_dict, replace,
                                                to_dict)
from ubot_lidar_sim.core.config.model import ModelShared
from ubot_lidar_sim.core.config.optics import EchoesConfig, OpticsConfig
from ubot_lidar_sim.core.config.patterns import PlanarPattern, RosettePattern, SpinningPattern
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.config.radiometry import NoiseConfig, RadiometryConfig
from ubot_lidar_sim.core.config.terrain import TerrainConfig

__all__ = ['applicable_names', 'AtmosphereConfig', 'AUTO_COLUMN_BLOCKS_MAX',
           'AUTO_SUB_RAYS_PER_BLOCK', 'descriptors', 'EchoesConfig', 'flat_fields', 'flat_paths',
           'from_dict', 'ImperfectionsConfig', 'LaserScanConfig', 'LidarConfig', 'ModelShared',
           'NoiseConfig', 'OpticsConfig', 'PhysicalModel', 'PlanarPattern', 'RadiometryConfig',
           'replace', 'RosettePattern', 'SpinningPattern', 'TerrainConfig', 'to_dict']
