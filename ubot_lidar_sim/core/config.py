"""
Frozen, self-validating configs of the three sensors; field names are the ROS parameter names.

Each field is declared with config_fields.parameter (default, description, unit, range or
choices: the ROS descriptor) and validated from it on construction; cross-field rules are each
class's ``_check_cross``.
"""

import dataclasses
from dataclasses import dataclass
from functools import cached_property
import math
from typing import ClassVar

from ubot_lidar_sim.core.beams import planar_and_rosette
from ubot_lidar_sim.core.config_fields import parameter as _p, Validated
from ubot_lidar_sim.core.errors import ConfigError, ScanError
from ubot_lidar_sim.core.physics.radiometry import detection_threshold, normal_ppf
from ubot_lidar_sim.core.physics.return_selection import RETURN_MODES, SINGLE_RETURN_MODES
from ubot_lidar_sim.core.physics.weather import RAIN_MAX_MM_H, weather_from

#: column_blocks 0 (auto) of the physical model of a spinning pattern: one block per this many
#: sub-rays, at most AUTO_COLUMN_BLOCKS_MAX. A block costs ~0.4 ms of fixed work here, so a
#: cheap sweep stays whole, and an expensive one is out ~1 / blocks of its compute time after it
#: ends (computed while it fires). A count of the config, never a measured time: same bytes.
AUTO_SUB_RAYS_PER_BLOCK = 32768
AUTO_COLUMN_BLOCKS_MAX = 8


@dataclass(frozen=True)
class _Shared(Validated):
    """Parameters every sensor node declares (docs/parameters.md)."""

    world_file: str = _p('flat', "World YAML path, or the built-in 'demo' / 'flat'.",
                         read_only=True, nonempty=True)
    world_frame: str = _p('map', 'Ground-truth world frame of the world file and the poses.',
                          read_only=True, nonempty=True)
    seed: int = _p(0, 'Seed of the noise, clutter and roughness streams.', min=0, max=2**63 - 1)
    qos_reliability: str = _p('reliable', 'QoS reliability of the output topic.',
                              choices=('reliable', 'best_effort'), read_only=True)
    qos_depth: int = _p(5, 'QoS history depth of the output topic.', min=1, max=1000,
                        read_only=True)
    ignored_objects: tuple = _p((), 'Names of world objects the rays pass through.',
                                item_type=str)
    fleet_frames: tuple = _p((), 'TF frames of the other robots of a fleet, each drawn as a '
                             'fleet_body_size_m box standing on its frame (an actor, '
                             'docs/worlds.md).', item_type=str, read_only=True)
    fleet_body_size_m: tuple = _p((0.8, 0.6, 0.5), 'Body box (x, y, z) of the fleet robots.',
                                  'm', item_type=float, length=3, min=0.01, max=100.0,
                                  read_only=True)
    fleet_base_height_m: float = _p(0.4, "Height of the fleet robots' frames above the ground "
                                    "(demo_driver's base_height_m): the body box stands on the "
                                    'ground that far below its frame.', 'm', min=0.0, max=100.0,
                                    read_only=True)


@dataclass(frozen=True)
class _Model(Validated):
    """Radiometric model (docs/physics.md) shared by the 3D LiDAR and the 2D scanner."""

    noise_enabled: bool = _p(True, 'Signal and range noise on (the draws happen either way).')
    range_noise_std_m: float = _p(0.0, 'Range-noise floor (1 sigma).', 'm', min=0.0, max=10.0)
    wavelength_nm: float = _p(905.0, 'Laser wavelength (Kim et al. fog/haze scaling).', 'nm',
                              min=350.0, max=2000.0)
    divergence_mrad: float = _p(3.0, 'Full-angle 1/e^2 beam divergence (horizontal).', 'mrad',
                                min=0.0, max=20.0)
    divergence_v_mrad: float = _p(0.0, 'Vertical full-angle divergence, 0 = divergence_mrad '
                                  '(pulse stretching only).', 'mrad', min=0.0, max=20.0)
    pulse_length_m: float = _p(0.0, 'Pulse length in range (FWHM x c / 2); > 0 enables echo '
                               'stretching.', 'm', min=0.0, max=30.0)
    sub_rays: int = _p(7, 'Sub-rays per beam: 1 (pencil) or 7 (centre + hexagon).',
                       choices=(1, 7), read_only=True)
    footprint: str = _p('adaptive', "'adaptive': trace each beam's centre sub-ray, the others "
                        'only where the footprint may straddle surfaces (edges, foliage, smoke, '
                        'grazing incidence; else one echo of the centre hit with the whole '
                        "footprint's power); 'exhaustive': every sub-ray of every beam.",
                        choices=('adaptive', 'exhaustive'))
    max_hits_per_sub_ray: int = _p(4, 'Surfaces recorded along one sub-ray.', min=1, max=8,
                                   read_only=True)
    continue_step_m: float = _p(0.25, 'Skip after a foliage hit before the next search.', 'm',
                                min=0.001, max=10.0)
    min_separation_m: float = _p(0.75, 'Contributions closer than this merge into one echo.',
                                 'm', min=0.01, max=100.0)
    return_mode: str = _p('dual_strongest_last', 'Which detected echoes become points.',
                          choices=RETURN_MODES)
    range_at_10pct_m: float = _p(60.0, 'Range where a 10 % Lambertian target is detected with '
                                 'probability detection_at_spec.', 'm', min=0.1, max=10000.0)
    signal_at_10pct_counts: float = _p(100.0, 'Mean signal of that target at range_at_10pct_m.',
                                       'counts', min=1.0, max=1e6)
    ambient_counts: float = _p(20.0, 'Background counts added to the shot-noise variance.',
                               'counts', min=0.0, max=1e6)
    detection_at_spec: float = _p(0.9, 'Detection probability at the spec point.',
                                  min=0.5, max=0.9999)
    overlap_range_m: float = _p(8.3, 'Near-field form factor scale Rov = D_rx / theta_rx: '
                                'factor 1 - exp(-(R/Rov)^2); 0 = full overlap (estimate: '
                                '25 mm / 3 mrad, docs/physics-weather.md).', 'm',
                                min=0.0, max=100.0)
    saturation_counts: float = _p(65535.0, 'Clip of the reported signal.', 'counts',
                                  min=1.0, max=65535.0)
    range_std_low_snr_m: float = _p(0.03, 'Extra range noise at the spec SNR.', 'm',
                                    min=0.0, max=10.0)
    range_noise_snr_exponent: float = _p(1.0, 'Extra range noise scales as (SNR_spec/SNR)^this '
                                         '(1 = default; ~0.6 fits datasheets).',
                                         min=0.0, max=3.0)
    pond_threshold_m: float = _p(0.003, 'Standing water deeper than this turns ground into '
                                 'water.', 'm', min=0.0, max=1.0)
    motion_distortion: bool = _p(True, 'Rolling scan: each column fires at its own time.')
    weather: bool = _p(True, 'Rain and fog along the beam (extinction, clutter).')
    rain_db_per_km: float = _p(1.076, 'Rain law coefficient a of a R^b dB/km (Carbonneau 1998).',
                               'dB/km', min=0.0, max=100.0)
    rain_exponent: float = _p(0.67, 'Rain law exponent b (Carbonneau 1998).', min=0.0, max=2.0)
    rain_visibility_model: str = _p('rain_law', 'Rain part of the visibility removed before the '
                                    'fog term: rain_law (the same law) or '
                                    'acres (11.1 km R^-0.63).',
                                    choices=('rain_law', 'acres'))
    fog_lidar_ratio_sr: float = _p(18.8, "Lidar ratio of fog droplets (O'Connor et al. 2004).",
                                   'sr', min=1.0, max=200.0)
    fog_fluctuation_shape: float = _p(4.0, 'Shape k of the gamma pulse-to-pulse factor on the '
                                      "fog droplets' backscatter (mean 1, coefficient of "
                                      'variation 1 / sqrt(k); estimate; haze aerosol is '
                                      'steady, docs/physics-weather.md); 0 = none.',
                                      min=0.0, max=1e6)
    haze_lidar_ratio_sr: float = _p(60.0, 'Lidar ratio of continental haze (Mueller et al. '
                                    '2007: 50-70 sr).', 'sr', min=1.0, max=200.0)
    rain_lidar_ratio_sr: float = _p(220.0, 'Lidar ratio of rain (Mie, water spheres 30 mrad '
                                    'from backscatter; bounds 4 sr (glory) and 1266 sr '
                                    '(Fresnel only), docs/physics-weather.md).', 'sr',
                                    min=1.0, max=2000.0)
    snow_type: str = _p('dry', 'ITU-R P.1817 snow law: dry or wet snow coefficients.',
                        choices=('dry', 'wet'))
    snow_lidar_ratio_sr: float = _p(29.0, 'Lidar ratio of snow flakes (faceted ice, cirrus '
                                    'mean of Chen et al. 2002).', 'sr', min=1.0, max=2000.0)
    rain_drops_per_m3: float = _p(1951.2, 'Drop density N = this x R^rain_drops_exponent '
                                  '(Marshall-Palmer N0/Lambda = 8000/4.1).', '1/m^3',
                                  min=0.0, max=1e6)
    rain_drops_exponent: float = _p(0.21, 'Exponent of the drop density law.', min=0.0, max=2.0)
    exit_diameter_m: float = _p(0.01, 'Beam diameter at the exit window.', 'm',
                                min=0.0, max=1.0)
    clutter_max_range_m: float = _p(10.0, 'Rain, snow and fog clutter is simulated up to this '
                                    'range.', 'm', min=0.0, max=1000.0)
    rain_override_mm_h: float = _p(-1.0, 'Rain rate override, < 0 = use the environment.',
                                   'mm/h', min=-1.0, max=RAIN_MAX_MM_H)
    visibility_override_m: float = _p(-1.0, 'Visibility override (inf = clear), < 0 = use the '
                                      'environment.', 'm', min=-1.0, allow_inf=True)
    materials_file: str = _p('', 'YAML overriding the material table; empty = defaults.',
                             read_only=True)
    smoke_enabled: bool = _p(True, 'Smoke volumes stop the rays.')
    smoke_cell_radius_scale: float = _p(1.0, 'Scale of the smoke cell radius.', min=0.01,
                                        max=100.0)
    smoke_density_threshold: float = _p(0.05, 'Smoke cells with lower effective density are '
                                        'ignored.', min=0.0, max=1.0)

    @cached_property
    def detection_threshold_counts(self):
        """Return the detection threshold T = S10 - z sqrt(S10 + ambient), counts (cached)."""
        return detection_threshold(self.signal_at_10pct_counts, self.ambient_counts,
                                   self.detection_at_spec)

    @property
    def detection_z(self):
        """Return the standard-normal quantile z of detection_at_spec."""
        return normal_ppf(self.detection_at_spec)

    @property
    def material_table_file(self):
        """Return materials_file, the YAML that overrides the material table ('' = defaults)."""
        return self.materials_file

    @property
    def period_s(self):
        """Return the sweep period 1 / rate_hz, s."""
        return 1.0 / self.rate_hz

    def _check_cross(self):
        super()._check_cross()
        if self.max_range_m <= self.min_range_m:
            raise ConfigError('max_range_m', self.max_range_m,
                              f'> min_range_m ({self.min_range_m})')
        if self.detection_threshold_counts <= 0.0:
            raise ConfigError('detection_at_spec', self.detection_at_spec,
                              'a value giving a positive threshold S10 - z sqrt(S10 + ambient)')
        # An override in use must be a weather the environment could send (Weather's limits).
        weather_from({'rain_mm_h': 'rain_override_mm_h', 'visibility_m': 'visibility_override_m'},
                     rain_mm_h=max(self.rain_override_mm_h, 0.0),
                     visibility_m=math.inf if self.visibility_override_m < 0.0
                     else self.visibility_override_m)


@dataclass(frozen=True)
class LidarConfig(_Shared, _Model):
    """Every lidar_3d parameter (docs/parameters.md; model: docs/physics.md)."""

    preset_node: ClassVar[str] = 'lidar_3d'     # whose block of a preset file applies
    preset: str = _p('custom', 'Sensor preset the parameters started from.', read_only=True,
                     nonempty=True)
    model: str = _p('physical', "'physical': the radiometric model of docs/physics.md; "
                    "'geometric': the first surface each beam's centre ray meets (exact range; "
                    'no sub-rays, detection statistics, noise or weather; intensity 0).',
                    choices=('physical', 'geometric'))
    channels: int = _p(16, 'Vertical channels (rings).', min=1, max=256, read_only=True)
    horizontal_samples: int = _p(360, 'Columns per sweep; 360 deg does not repeat column 0.',
                                 min=1, max=8192, read_only=True)
    horizontal_fov_deg: float = _p(360.0, 'Horizontal field of view, centred on +x.', 'deg',
                                   min=0.01, max=360.0, read_only=True)
    vertical_fov_up_deg: float = _p(15.0, 'Field of view above the horizon.', 'deg',
                                    min=0.0, max=90.0, read_only=True)
    vertical_fov_down_deg: float = _p(15.0, 'Field of view below the horizon.', 'deg',
                                      min=0.0, max=90.0, read_only=True)
    elevations_deg: tuple = _p((), 'Per-ring elevation table, ring order (overrides the '
                               'uniform spread); empty = uniform.', 'deg', item_type=float,
                               min=-90.0, max=90.0, read_only=True)
    min_range_m: float = _p(0.1, 'Echoes nearer than this are not detected.', 'm',
                            min=0.0, max=1000.0)
    max_range_m: float = _p(100.0, 'Echoes beyond this are not detected; > min_range_m.', 'm',
                            min=0.01, max=10000.0)
    max_rays_per_scan: int = _p(65536, 'channels x horizontal_samples above this is an error.',
                                min=1, max=1048576)
    rate_hz: float = _p(10.0, 'Sweep rate.', 'Hz', min=0.0, min_exclusive=True, max=1000.0,
                        read_only=True)
    frame_id: str = _p('lidar_3d', 'Frame of the published cloud.', read_only=True,
                       nonempty=True)
    sensor_id: str = _p('lidar_3d', 'Sensor id (also keys the random streams).',
                        read_only=True, nonempty=True)
    trigger: str = _p('timer', "'timer': contiguous sweeps at rate_hz, stamps one period apart, "
                      'each block of columns computed as soon as /tf covers it; '
                      "'stream': an alias of 'timer'; 'service': scan on ~/sample.",
                      choices=('timer', 'service', 'stream'), read_only=True)
    column_blocks: int = _p(0, 'Cut each sweep by firing time into this many blocks of columns, '
                            'each traced with random streams of its own: the unit of parallel '
                            'work, computed while the sweep fires; 1 = whole sweeps; 0 = auto '
                            f'(physical model of a spinning pattern: one per '
                            f'{AUTO_SUB_RAYS_PER_BLOCK} sub-rays, at most '
                            f'{AUTO_COLUMN_BLOCKS_MAX}; else 1).',
                            min=0, max=64, read_only=True)
    compute_process: bool = _p(False, 'Compute the sweeps in a child process with its own copy '
                               'of the world (same bytes; frees the node from the GIL).',
                               read_only=True)
    compute_workers: int = _p(1, 'Compute the column blocks in this many child processes (same '
                              'bytes; more cores with column_blocks > 1); 1 = one child if '
                              'compute_process, else none.', min=1, max=8, read_only=True)
    ring_range_at_10pct_m: tuple = _p((), 'Per-ring range_at_10pct_m; empty = the same for all.',
                                      'm', item_type=float, min=0.1, max=10000.0)
    point_layout: str = _p('full', 'PointCloud2 field layout.',
                           choices=('full', 'velodyne', 'ouster', 'livox', 'autoware'),
                           read_only=True)
    livox_custom_msg: bool = _p(False, 'Also publish livox_ros_driver2/msg/CustomMsg on '
                                'livox/lidar (point_layout livox; needs livox_ros_driver2).',
                                read_only=True)
    stamp_at: str = _p('start', "Header stamp at the sweep's first firing or its end.",
                       choices=('start', 'end'))
    spin_direction: str = _p('cw', 'Spin sense seen from above.', choices=('cw', 'ccw'))
    scan_start_azimuth_deg: float = _p(180.0, 'Azimuth where a sweep starts (CCW from +x).',
                                       'deg', min=-360.0, max=360.0)
    pattern_type: str = _p('spinning', "'spinning': rings x columns; 'rosette': Risley prisms "
                           '(Livox), channels = lines, horizontal_samples = shots per line.',
                           choices=planar_and_rosette.PATTERN_TYPES, read_only=True)
    ring_time_offsets_us: tuple = _p((), 'Firing time of each ring after its column (the '
                                     'firing order), ring order; empty = all at once.', 'us',
                                     item_type=float, min=0.0, max=1e6, read_only=True)
    rosette_prism_hz: tuple = _p((7294.0 / 60.0, -4664.0 / 60.0), 'Rotation rates of the two '
                                 'Risley prisms (opposite signs; Livox Mid-70 of HELIOS++).',
                                 'Hz', item_type=float, length=2, min=-1e4, max=1e4,
                                 read_only=True)
    rosette_spin_hz: float = _p(0.0, 'Rotation of the rosette head about z; 0 = forward-looking.',
                                'Hz', min=0.0, max=100.0, read_only=True)

    @property
    def n_column_blocks(self):
        """Return the column blocks of a sweep: column_blocks, or for 0 the automatic number."""
        if self.column_blocks:
            return self.column_blocks
        if self.pattern_type == 'rosette' or self.model == 'geometric':
            return 1
        sub_rays = self.channels * self.horizontal_samples * self.sub_rays
        # At most 256 x 7 sub-rays per column: never more blocks than columns.
        return min(-(-sub_rays // AUTO_SUB_RAYS_PER_BLOCK), AUTO_COLUMN_BLOCKS_MAX)

    def _check_cross(self):
        super()._check_cross()
        rays = self.channels * self.horizontal_samples
        if rays > self.max_rays_per_scan:     # refused, never truncated
            raise ScanError(
                f'max_rays_per_scan: got channels x horizontal_samples = {self.channels} x '
                f'{self.horizontal_samples} = {rays} rays, allowed at most max_rays_per_scan = '
                f'{self.max_rays_per_scan} (lower channels or horizontal_samples, or raise '
                'max_rays_per_scan)')
        # uint32 ns after the stamp: ouster's t, autoware's time_stamp, CustomMsg's offset_time.
        if self.point_layout in ('ouster', 'autoware') and self.stamp_at == 'end':
            field = {'ouster': 't', 'autoware': 'time_stamp'}[self.point_layout]
            raise ConfigError('stamp_at', self.stamp_at,
                              f"'start' with point_layout {self.point_layout!r} ({field} is "
                              'uint32 ns)')
        if self.livox_custom_msg and self.point_layout != 'livox':
            raise ConfigError('livox_custom_msg', self.livox_custom_msg,
                              f'false with point_layout {self.point_layout!r} (true needs '
                              "point_layout 'livox')")
        if self.livox_custom_msg and self.stamp_at == 'end':
            raise ConfigError('stamp_at', self.stamp_at,
                              "'start' with livox_custom_msg true (offset_time is uint32 ns "
                              'after timebase)')
        for name in ('elevations_deg', 'ring_range_at_10pct_m', 'ring_time_offsets_us'):
            value = getattr(self, name)
            if value and len(value) != self.channels:
                raise ConfigError(name, value,
                                  f'empty or a list of channels ({self.channels}) values')
        if self.column_blocks > 1 and (self.pattern_type == 'rosette'
                                       or self.column_blocks > self.horizontal_samples):
            raise ConfigError('column_blocks', self.column_blocks,
                              '1 with pattern_type rosette, else at most horizontal_samples '
                              f'({self.horizontal_samples})')
        if self.pattern_type == 'rosette':
            self._check_rosette()
        elif self.ring_time_offsets_us:
            column_us = 1e6 * self.period_s / self.horizontal_samples
            if max(self.ring_time_offsets_us) >= column_us:
                raise ConfigError('ring_time_offsets_us', self.ring_time_offsets_us,
                                  'offsets below one column period, 1e6 / (rate_hz x '
                                  f'horizontal_samples) = {column_us:.4g} us')

    def _check_rosette(self):
        """Rules of pattern_type rosette: derived times, the cone fits the FOV fields."""
        if self.ring_time_offsets_us:
            raise ConfigError('ring_time_offsets_us', self.ring_time_offsets_us,
                              'empty with pattern_type rosette (lines fire one point interval '
                              'apart)')
        prism = self.rosette_prism_hz
        if prism[0] == 0.0 or prism[1] == 0.0 or prism[0] * prism[1] > 0.0:
            raise ConfigError('rosette_prism_hz', prism, 'two non-zero rates of opposite sign')
        el = planar_and_rosette.rosette_line_elevations_deg(
            self.channels, self.vertical_fov_up_deg, self.vertical_fov_down_deg,
            self.elevations_deg)
        theta = math.degrees(planar_and_rosette.rosette_cone_half_angle_rad(
            self.vertical_fov_up_deg, self.vertical_fov_down_deg, el))
        if theta <= 0.0 or el.max() + theta > 90.0 or el.min() - theta < -90.0:
            raise ConfigError('vertical_fov_up_deg', self.vertical_fov_up_deg,
                              'a vertical field of view whose rosette cone (half-angle (up + '
                              'down) / 2 - spread of elevations_deg / 2) is > 0 and inside '
                              '+-90 deg')
        want = 360.0 if self.rosette_spin_hz > 0.0 else 2.0 * theta
        if abs(self.horizontal_fov_deg - want) > 1e-6:
            raise ConfigError('horizontal_fov_deg', self.horizontal_fov_deg,
                              f'{want:g} for this rosette (360 when the head spins, else twice '
                              'the cone half-angle)')


@dataclass(frozen=True)
class LaserScanConfig(_Shared, _Model):
    """
    laser_scan parameters: a line trace, or a one-channel radiometric LiDAR.

    Rays every resolution_deg, ceil(fov / resolution) of them
    (planar_and_rosette.planar_azimuths_rad).
    """

    preset_node: ClassVar[str] = 'laser_scan'   # whose block of a preset file applies
    preset: str = _p('custom', 'Sensor preset the parameters started from.', read_only=True,
                     nonempty=True)
    model: str = _p('geometric', "'geometric': a line trace (first hit, exact "
                    "range, no detection statistics or weather); 'physical': the radiometric "
                    'model of docs/physics.md on one channel.', choices=('geometric', 'physical'))
    fov_deg: float = _p(360.0, 'Field of view: a full circle from 0 deg, else centred on +x.',
                        'deg', min=0.01, max=360.0, read_only=True)
    resolution_deg: float = _p(1.0, 'Angle between rays (angle_increment); ceil(fov / '
                               'resolution) rays.', 'deg', min=0.0, min_exclusive=True,
                               max=360.0, read_only=True)
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
    sub_rays: int = _p(1, 'Sub-rays per beam: 1 (pencil) or 7 (centre + hexagon).',
                       choices=(1, 7), read_only=True)
    return_mode: str = _p('strongest', 'Which echo gives the range (one per ray).',
                          choices=SINGLE_RETURN_MODES)
    # A 2D scanner's sensitivity, not the 3D lidar default: SICK LMS111-10100, an outdoor 905 nm
    # 2D scanner, "scanning range at 10 % remission 18 m" (SICK product page p109842,
    # https://www.sick.com/br/en/lidar-sensors/2d-lidar-sensors/lms1xx/lms111-10100/p/p109842).
    range_at_10pct_m: float = _p(18.0, 'Range where a 10 % Lambertian target is detected with '
                                 'probability detection_at_spec (SICK LMS111-10100: 18 m).',
                                 'm', min=0.1, max=10000.0)

    @property
    def n_rays(self):
        """Return the rays per scan, ceil(fov / resolution) (docs/presets.md)."""
        return planar_and_rosette.planar_ray_count(self.fov_deg, self.resolution_deg)

    def _check_cross(self):
        super()._check_cross()
        if self.n_rays > 8192:
            raise ConfigError('resolution_deg', self.resolution_deg,
                              f'at most 8192 rays over fov_deg {self.fov_deg} (ceil(fov / '
                              'resolution))')

    def to_lidar_config(self):
        """
        Return the one-channel LidarConfig of this scanner's model (and its radiometry).

        Its beams are the planar rays, which the laser scanner passes to LidarSimulator; the
        grid fields here only describe them (n columns over the span of the rays).
        """
        n = self.n_rays
        hfov = 360.0 if self.fov_deg >= 360.0 else (
            self.fov_deg if n == 1 else (n - 1) * self.resolution_deg)
        lidar_names = {f.name for f in dataclasses.fields(LidarConfig)}
        kw = {k: v for k, v in to_dict(self).items() if k in lidar_names}
        kw.update(channels=1, horizontal_samples=n, horizontal_fov_deg=hfov,
                  vertical_fov_up_deg=0.0, vertical_fov_down_deg=0.0, elevations_deg=(),
                  ring_range_at_10pct_m=(), sensor_id='laser_scan', trigger='timer',
                  point_layout='full', stamp_at='start', max_rays_per_scan=max(n, 1),
                  model=self.model)
        return LidarConfig(**kw)


_TIRES = (1.4, 0.8, 0.0, 1.4, -0.8, 0.0, -1.4, 0.8, 0.0, -1.4, -0.8, 0.0)


@dataclass(frozen=True)
class TerrainConfig(_Shared):
    """terrain_sensor parameters (docs/physics.md); ray order vehicle, FL, FR, RL, RR."""

    base_frame: str = _p('base_link', 'Vehicle frame of the centre and tire positions.',
                         read_only=True, nonempty=True)
    rate_hz: float = _p(50.0, 'Publish rate.', 'Hz', min=0.0, min_exclusive=True, max=1000.0,
                        read_only=True)
    vehicle_center_m: tuple = _p((0.0, 0.0, 0.0), 'Vehicle centre x, y, z in base_frame.', 'm',
                                 item_type=float, length=3)
    tire_positions_m: tuple = _p(_TIRES, 'Tire centres FL, FR, RL, RR as x, y, z in base_frame.',
                                 'm', item_type=float, length=12)
    tire_frames: tuple = _p(('', '', '', ''), 'TF frames of the tires FL, FR, RL, RR; non-empty '
                            'ones override tire_positions_m.', item_type=str, length=4)
    tire_frames_fallback: bool = _p(False, 'Use tire_positions_m while a tire frame is missing '
                                    '(else that ray is reported as a miss).')
    vehicle_center_source: str = _p('constant', 'Source of vehicle_center_to_front_m.',
                                    choices=('constant', 'external'))
    tire_radii_source: str = _p('constant', 'Source of tire_radii_m.',
                                choices=('constant', 'external'))
    vehicle_center_to_front_m: float = _p(0.0, 'VehCntrLngthVal: centre to front distance.', 'm',
                                          min=0.0, max=100.0)
    tire_radii_m: tuple = _p((0.0,) * 4, 'TireRadiiVal FL, FR, RL, RR.', 'm', item_type=float,
                             length=4, min=0.0, max=10.0)
    trace_lengths_m: tuple = _p((5.0,) * 5, 'Trace length of vehicle, FL, FR, RL, RR rays.', 'm',
                                item_type=float, length=5, min=0.0, min_exclusive=True,
                                max=1000.0)
    trace_offsets_m: tuple = _p((0.0,) * 5, 'Start offset back along each ray axis.', 'm',
                                item_type=float, length=5, min=-1000.0, max=1000.0)
    trace_enabled: tuple = _p((True,) * 5, 'Trace the vehicle, FL, FR, RL, RR rays.',
                              item_type=bool, length=5)
    trace_visualization: bool = _p(True, 'Publish ~/rays markers.')

    @property
    def material_table_file(self):
        """Return '' (the default material table): the terrain sensor has no materials_file."""
        return ''


def from_dict(cls, mapping):
    """Build a config of class ``cls`` from a parameter mapping; unknown keys raise ConfigError."""
    names = {f.name for f in dataclasses.fields(cls)}
    for key, value in mapping.items():
        if key not in names:
            raise ConfigError(key, value, f'a {cls.__name__} parameter name')
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
