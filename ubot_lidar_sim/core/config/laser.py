"""The 2D laser scanner's config: a line trace, or a one-channel radiometric LiDAR."""

from dataclasses import dataclass
from typing import ClassVar

from ubot_lidar_sim.core.config.fields import flat_paths, parameter as _p, Validated
from ubot_lidar_sim.core.config.lidar import LidarConfig
from ubot_lidar_sim.core.config.mapping import to_dict
from ubot_lidar_sim.core.config.model import ModelShared, SensorConfig
from ubot_lidar_sim.core.config.optics import EchoesConfig
from ubot_lidar_sim.core.config.patterns import PlanarPattern
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.config.radiometry import RadiometryConfig
from ubot_lidar_sim.core.config.shared import SharedParams
from ubot_lidar_sim.core.limits import SINGLE_RETURN_MODES


@dataclass(frozen=True)
class LaserSensor(Validated):
    """The laser_scan's own parameters: its model, ranges, rate, frame and ray markers."""

    preset: str = _p('custom', 'Sensor preset the parameters started from.', read_only=True,
                     nonempty=True)
    model: str = _p('geometric', "'geometric': a line trace (first hit, exact "
                    "range, no detection statistics or weather); 'physical': the radiometric "
                    'model of docs/physics.md on one channel.', choices=('geometric', 'physical'))
    rate_hz: float = _p(30.0, 'Scan rate.', 'Hz', min=0.0, min_exclusive=True, max=1000.0,
                        read_only=True)
    min_range_m: float = _p(0.1, 'range_min: nearer returns read -inf.', 'm', min=0.0,
                            max=1000.0)
    max_range_m: float = _p(100.0, 'range_max: no return reads +inf.', 'm', min=0.01,
                            max=10000.0)
    enabled: bool = _p(True, 'Publish scans.')
    frame_id: str = _p('laser', 'Frame of the scan.', read_only=True, nonempty=True)
    debug_rays: bool = _p(True, 'Publish ~/rays markers (hits green, misses red).')
    debug_ray_lifetime_s: float = _p(1.0, 'Lifetime of the ray markers.', 's', min=0.0,
                                     max=3600.0)


@dataclass(frozen=True)
class LaserEchoes(EchoesConfig):
    """The echoes of a 2D scanner: a pencil or a 7-ray footprint, one return per ray."""

    sub_rays: int = _p(1, 'Sub-rays per beam: 1 (pencil) or 7 (centre + hexagon).',
                       choices=(1, 7), read_only=True)
    return_mode: str = _p('strongest', 'Which echo gives the range (one per ray).',
                          choices=SINGLE_RETURN_MODES)


@dataclass(frozen=True)
class LaserRadiometry(RadiometryConfig):
    """The radiometry of a 2D scanner: its own spec range."""

    # A 2D scanner's sensitivity, not the 3D lidar default: SICK LMS111-10100, an outdoor 905 nm
    # 2D scanner, "scanning range at 10 % remission 18 m" (SICK product page p109842,
    # https://www.sick.com/br/en/lidar-sensors/2d-lidar-sensors/lms1xx/lms111-10100/p/p109842).
    range_at_10pct_m: float = _p(18.0, 'Range where a 10 % Lambertian target is detected with '
                                 'probability detection_at_spec (SICK LMS111-10100: 18 m).',
                                 'm', min=0.1, max=10000.0)


@dataclass(frozen=True, init=False)
class LaserPhysicalModel(PhysicalModel):
    """The physical model of a 2D scanner: a 2D scanner's echoes and radiometry."""

    echoes: LaserEchoes
    radiometry: LaserRadiometry


@dataclass(frozen=True, init=False)
class LaserScanConfig(SensorConfig):
    """
    laser_scan parameters: a line trace, or a one-channel radiometric LiDAR, by part.

    Built from the flat parameters as LidarConfig. Views: ``pattern`` (PlanarPattern: rays every
    resolution_deg, ceil(fov / resolution) of them) and ``physical`` (None with model
    'geometric').
    """

    preset_node: ClassVar[str] = 'laser_scan'   # whose block of a preset file applies
    common: ModelShared
    physical_model: LaserPhysicalModel
    shared: SharedParams
    planar: PlanarPattern
    sensor: LaserSensor

    @property
    def pattern(self) -> PlanarPattern:
        """Return the planar pattern's part."""
        return self.planar

    @property
    def n_rays(self) -> int:
        """Return the rays per scan, ceil(fov / resolution) (docs/presets.md)."""
        return self.planar.n_rays

    def _check_cross(self) -> None:
        super()._check_cross()
        self.pattern.check(self)

    def to_lidar_config(self) -> LidarConfig:
        """
        Return the one-channel LidarConfig of this scanner's model (and its radiometry).

        Its beams are the planar rays, which the laser scanner passes to LidarSimulator; the
        grid fields here only describe them (n columns over the span of the rays).
        """
        n = self.n_rays
        hfov = 360.0 if self.fov_deg >= 360.0 else (
            self.fov_deg if n == 1 else (n - 1) * self.resolution_deg)
        lidar_names = flat_paths(LidarConfig)
        kw = {k: v for k, v in to_dict(self).items() if k in lidar_names}
        kw.update(channels=1, horizontal_samples=n, horizontal_fov_deg=hfov,
                  vertical_fov_up_deg=0.0, vertical_fov_down_deg=0.0, elevations_deg=(),
                  ring_range_at_10pct_m=(), sensor_id='laser_scan', trigger='timer',
                  point_layout='full', stamp_at='start', max_rays_per_scan=max(n, 1),
                  model=self.model)
        return LidarConfig(**kw)
