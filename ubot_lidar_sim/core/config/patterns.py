"""
The scan patterns of a config, one sub-config each: spinning, rosette (3D LiDAR), planar (2D).

A flat config carries its patterns' fields (the parameter names do not change); its ``pattern``
is the sub-config of its pattern_type, whose ``check`` holds the rules it has with the fields
every pattern shares (channels, fields of view, rate).
"""

from dataclasses import dataclass
import math
from typing import Any, ClassVar

from ubot_lidar_sim.core.beams import planar_and_rosette
from ubot_lidar_sim.core.config.fields import Floats, parameter as _p, Validated
from ubot_lidar_sim.core.errors import ConfigError


@dataclass(frozen=True)
class SpinningPattern(Validated):
    """Rings x columns of a spinning head (pattern_type spinning)."""

    kind: ClassVar[str] = 'spinning'
    spin_direction: str = _p('cw', 'Spin sense seen from above.', choices=('cw', 'ccw'))
    scan_start_azimuth_deg: float = _p(180.0, 'Azimuth where a sweep starts (CCW from +x).',
                                       'deg', min=-360.0, max=360.0)
    ring_time_offsets_us: Floats = _p((), 'Firing time of each ring after its column (the '
                                      'firing order), ring order; empty = all at once.', 'us',
                                      item_type=float, min=0.0, max=1e6, read_only=True)

    def check(self, cfg: Any) -> None:
        """Check the rules with cfg's shared fields: offsets below one column period."""
        if self.ring_time_offsets_us:
            column_us = 1e6 * cfg.period_s / cfg.horizontal_samples
            if max(self.ring_time_offsets_us) >= column_us:
                raise ConfigError('ring_time_offsets_us', self.ring_time_offsets_us,
                                  'offsets below one column period, 1e6 / (rate_hz x '
                                  f'horizontal_samples) = {column_us:.4g} us')


@dataclass(frozen=True)
class RosettePattern(Validated):
    """Risley prisms (Livox): channels = lines, horizontal_samples = shots per line."""

    kind: ClassVar[str] = 'rosette'
    rosette_prism_hz: Floats = _p((7294.0 / 60.0, -4664.0 / 60.0), 'Rotation rates of the two '
                                  'Risley prisms (opposite signs; Livox Mid-70 of HELIOS++).',
                                  'Hz', item_type=float, length=2, min=-1e4, max=1e4,
                                  read_only=True)
    rosette_spin_hz: float = _p(0.0, 'Rotation of the rosette head about z; 0 = forward-looking.',
                                'Hz', min=0.0, max=100.0, read_only=True)

    def check(self, cfg: Any) -> None:
        """Check the rules with cfg's shared fields: derived times, the cone fits the FOV."""
        if cfg.ring_time_offsets_us:
            raise ConfigError('ring_time_offsets_us', cfg.ring_time_offsets_us,
                              'empty with pattern_type rosette (lines fire one point interval '
                              'apart)')
        prism = self.rosette_prism_hz
        if prism[0] == 0.0 or prism[1] == 0.0 or prism[0] * prism[1] > 0.0:
            raise ConfigError('rosette_prism_hz', prism, 'two non-zero rates of opposite sign')
        el = planar_and_rosette.rosette_line_elevations_deg(
            cfg.channels, cfg.vertical_fov_up_deg, cfg.vertical_fov_down_deg,
            cfg.elevations_deg)
        theta = math.degrees(planar_and_rosette.rosette_cone_half_angle_rad(
            cfg.vertical_fov_up_deg, cfg.vertical_fov_down_deg, el))
        if theta <= 0.0 or el.max() + theta > 90.0 or el.min() - theta < -90.0:
            raise ConfigError('vertical_fov_up_deg', cfg.vertical_fov_up_deg,
                              'a vertical field of view whose rosette cone (half-angle (up + '
                              'down) / 2 - spread of elevations_deg / 2) is > 0 and inside '
                              '+-90 deg')
        want = 360.0 if self.rosette_spin_hz > 0.0 else 2.0 * theta
        if abs(cfg.horizontal_fov_deg - want) > 1e-6:
            raise ConfigError('horizontal_fov_deg', cfg.horizontal_fov_deg,
                              f'{want:g} for this rosette (360 when the head spins, else twice '
                              'the cone half-angle)')


@dataclass(frozen=True)
class PlanarPattern(Validated):
    """
    The rays of a 2D scanner: every resolution_deg, ceil(fov / resolution) of them.

    planar_and_rosette.planar_azimuths_rad gives their azimuths.
    """

    kind: ClassVar[str] = 'planar'
    fov_deg: float = _p(360.0, 'Field of view: a full circle from 0 deg, else centred on '
                        'fov_centre_deg (+x by default).',
                        'deg', min=0.01, max=360.0, read_only=True)
    resolution_deg: float = _p(1.0, 'Angle between rays (angle_increment); ceil(fov / '
                               'resolution) rays.', 'deg', min=0.0, min_exclusive=True,
                               max=360.0, read_only=True)
    fov_centre_deg: float = _p(0.0, 'Direction a partial field of view is centred on, CCW from '
                               '+x (a Gazebo scan of min_angle .. max_angle: their mean).',
                               'deg', min=-180.0, max=180.0, read_only=True)

    @property
    def n_rays(self) -> int:
        """Return the rays per scan, ceil(fov / resolution) (docs/presets.md)."""
        return int(planar_and_rosette.planar_ray_count(self.fov_deg, self.resolution_deg))

    def check(self, cfg: Any) -> None:
        """Check the rule of the ray count: at most 8192 rays."""
        if self.n_rays > 8192:
            raise ConfigError('resolution_deg', self.resolution_deg,
                              f'at most 8192 rays over fov_deg {self.fov_deg} (ceil(fov / '
                              'resolution))')
