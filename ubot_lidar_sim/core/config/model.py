"""
The sensor models' parameters: both models' (ModelShared) and the physical model's parts.

PhysicalModel (core/config/physical_model.py) is the radiometric model of docs/physics.md; its
parameters apply with model 'physical' only (a config's ``physical``, None with model
'geometric'). SensorConfig is the base of the lidar_3d and laser_scan configs: the views of
their parts.
"""

from dataclasses import dataclass
from typing import Optional

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.fields import Composed, parameter as _p, Validated
from ubot_lidar_sim.core.config.imperfections import ImperfectionsConfig
from ubot_lidar_sim.core.config.optics import EchoesConfig, OpticsConfig
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.config.radiometry import NoiseConfig, RadiometryConfig
from ubot_lidar_sim.core.errors import ConfigError


@dataclass(frozen=True)
class ModelShared(Validated):
    """Parameters of both models (the part ``common`` of the lidar_3d and laser_scan configs)."""

    motion_distortion: bool = _p(True, 'Rolling scan: each column fires at its own time.')
    robot_description: str = _p('', 'The robot the sensor is on (.urdf, .urdf.xacro, model.sdf, '
                                'a model directory or model://NAME; or topic / topic:NAME, the '
                                'URDF text robot_state_publisher latches, waited for: '
                                'docs/robots.md): its other links, posed by /tf, are cast with '
                                'class self. Empty = none.', read_only=True)
    robot_args: str = _p('', "xacro arguments of robot_description, 'name:=value ...'.",
                         read_only=True)
    robot_sensor: str = _p('', 'A <sensor name> of robot_description whose Gazebo values '
                           '(frame, rate, rays, range limits, noise; docs/robots.md) are '
                           "this node's defaults; parameters given win. Empty = none.",
                           read_only=True)
    fleet_body: str = _p('box', "How fleet_frames' robots are drawn: box (fleet_body_size_m on "
                         'each frame) or robot (copies of robot_description, each entry its '
                         'root-link frame PREFIX/ROOT, its links on PREFIX/LINK from /tf; '
                         'docs/robots.md).', choices=('box', 'robot'), read_only=True)
    self_filter: bool = _p(False, "Drop the returns of the sensor's own robot (class self): no "
                           "lidar point, a laser's range +inf (no return), as a driver's mask.")
    materials_file: str = _p('', 'YAML overriding the material table; empty = defaults.',
                             read_only=True)


class SensorConfig(Composed):
    """
    Base of the lidar_3d and laser_scan configs: the views of their parts.

    A subclass has the parts ``common`` (ModelShared), ``physical_model`` (PhysicalModel) and
    fields ``rate_hz``, ``min_range_m``, ``max_range_m`` and ``model`` among its flat names.
    """

    common: ModelShared
    physical_model: PhysicalModel

    @property
    def physical(self) -> Optional[PhysicalModel]:
        """Return the physical model's parameters, None with model 'geometric'."""
        return self.physical_model if self.model == 'physical' else None

    @property
    def optics(self) -> OpticsConfig:
        """Return the beam's part of the physical model."""
        return self.physical_model.optics

    @property
    def echoes(self) -> EchoesConfig:
        """Return the echoes' part of the physical model."""
        return self.physical_model.echoes

    @property
    def sensor_imperfections(self) -> ImperfectionsConfig:
        """Return the imperfections' part of the physical model (imperfections: its switch)."""
        return self.physical_model.sensor_imperfections

    @property
    def noise(self) -> NoiseConfig:
        """Return the noise part of the physical model."""
        return self.physical_model.noise

    @property
    def radiometry(self) -> RadiometryConfig:
        """Return the radiometry part of the physical model."""
        return self.physical_model.radiometry

    @property
    def atmosphere(self) -> AtmosphereConfig:
        """Return the weather part of the physical model."""
        return self.physical_model.atmosphere

    @property
    def detection_threshold_counts(self) -> float:
        """Return the detection threshold of the radiometry, counts."""
        return self.radiometry.detection_threshold_counts

    @property
    def spec_background_counts(self) -> float:
        """Return the background at the spec's light, counts."""
        return self.radiometry.spec_background_counts

    @property
    def detection_z(self) -> float:
        """Return the standard-normal quantile z of detection_at_spec."""
        return self.radiometry.detection_z

    @property
    def material_table_file(self) -> str:
        """Return materials_file, the YAML that overrides the material table ('' = defaults)."""
        return str(self.common.materials_file)

    @property
    def period_s(self) -> float:
        """Return the sweep period 1 / rate_hz, s."""
        return 1.0 / float(self.rate_hz)

    def _check_cross(self) -> None:
        super()._check_cross()
        if self.max_range_m <= self.min_range_m:
            raise ConfigError('max_range_m', self.max_range_m,
                              f'> min_range_m ({self.min_range_m})')
