"""
The whole sensor config as the laws see it: its typed parts and its flat names.

A law that reads more than one part of the config (or a part and the sensor's own fields, e.g.
min_range_m or the per-ring table ring_range_at_10pct_m) takes the whole config, annotated
``SensorView``. The configs themselves (core/config/model.py SensorConfig: LidarConfig,
LaserScanConfig) sit a layer above the laws (test/test_layers.py), so the laws name this
structural view rather than import them; SensorConfig satisfies it.
"""

from typing import Any, Optional, Protocol

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.imperfections import ImperfectionsConfig
from ubot_lidar_sim.core.config.optics import EchoesConfig, OpticsConfig
from ubot_lidar_sim.core.config.radiometry import NoiseConfig, RadiometryConfig


class SensorView(Protocol):
    """The parts of the physical model, by name, and any flat parameter read through (Any)."""

    @property
    def optics(self) -> OpticsConfig:
        """Return the beam's part."""

    @property
    def echoes(self) -> EchoesConfig:
        """Return the echoes' part."""

    @property
    def noise(self) -> NoiseConfig:
        """Return the noise part."""

    @property
    def radiometry(self) -> RadiometryConfig:
        """Return the radiometry part."""

    @property
    def atmosphere(self) -> AtmosphereConfig:
        """Return the weather part."""

    @property
    def sensor_imperfections(self) -> ImperfectionsConfig:
        """Return the imperfections' part."""

    @property
    def physical(self) -> Optional[Any]:
        """Return the physical model's parameters, None with model 'geometric'."""

    def __getattr__(self, name: str) -> Any:
        """Return flat parameter ``name`` (min_range_m, ring_range_at_10pct_m, ...)."""
