"""
The physical model's parameters, by part: the part the radiometric laws read (issue 49).

PhysicalModel is the radiometric model of docs/physics.md, composed of its parts (optics,
echoes, noise, sensor_imperfections, radiometry, atmosphere); its parameters apply with model
'physical' only. It sits with its parts below core/physics (test/test_layers.py), so a law that
reads several of them takes it typed (``cfg.physical_model``).
"""

from dataclasses import dataclass

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.fields import Composed
from ubot_lidar_sim.core.config.imperfections import ImperfectionsConfig
from ubot_lidar_sim.core.config.optics import EchoesConfig, OpticsConfig
from ubot_lidar_sim.core.config.radiometry import NoiseConfig, RadiometryConfig


@dataclass(frozen=True, init=False)
class PhysicalModel(Composed):
    """Radiometric model (docs/physics.md) of the 3D LiDAR and the 2D scanner, by part."""

    noise: NoiseConfig
    optics: OpticsConfig
    echoes: EchoesConfig
    sensor_imperfections: ImperfectionsConfig     # the flat name imperfections is its switch
    radiometry: RadiometryConfig
    atmosphere: AtmosphereConfig
