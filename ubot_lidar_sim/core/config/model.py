"""
The parameters of the sensor models: both models' (ModelShared) and the physical model's.

PhysicalModel is the radiometric model of docs/physics.md: its parameters apply with model
'physical' only (a config's ``physical`` sub-config, None with model 'geometric').
"""

from dataclasses import dataclass
from functools import cached_property

from ubot_lidar_sim.core.config.fields import parameter as _p, Validated
from ubot_lidar_sim.core.detection import detection_threshold, normal_ppf
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.limits import (RAIN_MAX_MM_H, RETURN_MODES, VISIBILITY_ALLOWED,
                                        VISIBILITY_MIN_M)


@dataclass(frozen=True)
class ModelShared(Validated):
    """Parameters of both models (a mixin of the flat configs with min_range_m, max_range_m)."""

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
    self_filter: bool = _p(False, "Drop the returns of the sensor's own robot (class self): no "
                           "lidar point, a laser's range +inf (no return), as a driver's mask.")
    materials_file: str = _p('', 'YAML overriding the material table; empty = defaults.',
                             read_only=True)

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


#: The largest 1-sigma range noise floor, m (range_noise_std_m and the std_m of the bands).
RANGE_NOISE_STD_MAX_M = 10.0


def check_range_noise_bands(bands, std_max_m):
    """
    Check range_noise_bands_m: pairs (range_m >= 0, std_m in [0, max]), ranges increasing.

    Each item is already a finite float (fields.check_field); ConfigError names the parameter,
    the whole value and what is allowed.
    """
    ranges, stds = bands[0::2], bands[1::2]
    if (len(bands) % 2 or any(r < 0.0 for r in ranges)
            or any(b <= a for a, b in zip(ranges, ranges[1:]))
            or any(not 0.0 <= s <= std_max_m for s in stds)):
        raise ConfigError('range_noise_bands_m', bands,
                          'empty or flat pairs [range_m, std_m, ...]: an even count, ranges '
                          f'>= 0 and strictly increasing, std_m in [0, {std_max_m:g}]')


@dataclass(frozen=True)
class PhysicalModel(Validated):
    """Radiometric model (docs/physics.md) of the 3D LiDAR and the 2D scanner."""

    noise_enabled: bool = _p(True, 'Signal and range noise on (the draws happen either way).')
    range_noise_std_m: float = _p(0.0, 'Range-noise floor (1 sigma) at every range while '
                                  'range_noise_bands_m is empty.', 'm', min=0.0,
                                  max=RANGE_NOISE_STD_MAX_M)
    range_noise_bands_m: tuple = _p(
        (), "The datasheet's precision (1 sigma) by range: flat pairs [range_m, std_m, "
        'range_m, std_m, ...], ranges >= 0 and strictly increasing, std_m in [0, 10]; the floor '
        'at an echo range is std_m interpolated linearly between the points (linear '
        "interpolation between a datasheet's points is this package's assumption), held at the "
        'end values outside them; the low-SNR term still adds in quadrature. Physical model of '
        'lidar_3d and laser_scan (the geometric model has no noise). Empty = range_noise_std_m '
        'everywhere.',
        'm', item_type=float)
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
    # The sensor's own imperfections (core/physics/imperfections.py), physical model only.
    # Per-laser calibration residuals: the OS1 datasheet's angular sampling accuracy +/-0.01 deg
    # (Ouster OS1 datasheet, optical performance), taken as 2 sigma; no per-laser range residual
    # ("zero bias for lambertian targets", same table).
    imperfections: bool = _p(True, "The sensor's own imperfections: per-laser calibration "
                             'residuals and range walk (off: an ideally calibrated sensor).')
    calibration_elevation_std_deg: float = _p(
        0.005, 'Per-laser elevation residual of the factory calibration, 1 sigma (OS1 '
        'datasheet: angular accuracy +/-0.01 deg as 2 sigma; 0 = off).', 'deg', min=0.0,
        max=5.0)
    calibration_azimuth_std_deg: float = _p(
        0.005, 'Per-laser azimuth residual, 1 sigma (as the elevation; 0 = off).', 'deg',
        min=0.0, max=5.0)
    calibration_range_std_m: float = _p(
        0.0, 'Per-laser range residual, 1 sigma (0: OS1 datasheet "zero bias for lambertian '
        'targets"; no published residual found for other sensors).', 'm', min=0.0, max=1.0)
    calibration_serial: int = _p(
        0, 'Serial-number seed of the sensor instance: fixes its residuals for every sweep '
        'and seed.', min=0, max=2**63 - 1)
    range_walk_m: float = _p(
        0.011, 'Range walk: a return at the detection threshold reads this much longer than '
        'one range_walk_dynamic_range times stronger (11 mm over 1:1280, a timing receiver '
        'with 6 ns pulses); 0 = off.', 'm', min=0.0, max=1.0)
    range_walk_dynamic_range: float = _p(
        1280.0, 'Signal ratio S / threshold over which range_walk_m is spent; stronger '
        'returns read without walk.', min=1.001, max=1e6)
    # The vendor's dual-return rule (core/physics/return_selection.py).
    dual_second_strongest_when_last: bool = _p(
        False, "dual_strongest_last: when a beam's strongest echo is also its last, emit the "
        'second strongest as the other return (VLP-16 manual 63-9243 Rev D p. 57, VLP-32C '
        'manual 63-9325 Rev C p. 57); off = the strongest alone.')
    range_at_10pct_m: float = _p(60.0, 'Range where a 10 % Lambertian target is detected with '
                                 'probability detection_at_spec.', 'm', min=0.1, max=10000.0)
    signal_at_10pct_counts: float = _p(100.0, 'Mean signal of that target at range_at_10pct_m.',
                                       'counts', min=1.0, max=1e6)
    ambient_counts: float = _p(20.0, 'Background counts added to the shot-noise variance in '
                               'the dark (detector and electronics).', 'counts', min=0.0,
                               max=1e6)
    solar_counts_per_klx: float = _p(0.0, 'Background counts that sunlight adds per klx on the '
                                     'scene, the solar response of the detector '
                                     '(docs/physics.md, "Sunlight"; 0: none known).',
                                     'counts/klx', min=0.0, max=1e6)
    spec_sun_klx: float = _p(0.0, 'Sunlight under which range_at_10pct_m holds (that of the '
                             'datasheet, e.g. 100 klx); the threshold is set there.', 'klx',
                             min=0.0, max=200.0)
    detection_at_spec: float = _p(0.9, 'Detection probability at the spec point.',
                                  min=0.5, max=0.9999)
    overlap_range_m: float = _p(8.3, 'Near-field form factor scale Rov = D_rx / theta_rx: '
                                'factor 1 - exp(-(R/Rov)^2); 0 = full overlap (estimate: '
                                '25 mm / 3 mrad, docs/physics-weather.md).', 'm',
                                min=0.0, max=100.0)
    overlap_exponent: float = _p(2.0, 'Exponent n of the form factor 1 - exp(-(R/Rov)^n): 2 '
                                 '= the square law (default); above 2 a fixed target peaks '
                                 'at a finite range (docs/physics-weather.md, HDL-64E focal '
                                 'distance).', min=2.0, max=20.0)
    saturation_counts: float = _p(65535.0, 'Clip of the reported signal.', 'counts',
                                  min=1.0, max=65535.0)
    range_std_low_snr_m: float = _p(0.03, 'Extra range noise at the spec SNR.', 'm',
                                    min=0.0, max=10.0)
    range_noise_snr_exponent: float = _p(1.0, 'Extra range noise scales as (SNR_spec/SNR)^this '
                                         '(1 = default; ~0.6 fits datasheets).',
                                         min=0.0, max=3.0)
    pond_threshold_m: float = _p(0.003, 'Standing water deeper than this turns ground into '
                                 'water.', 'm', min=0.0, max=1.0)
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
    # Fog and haze microphysics (core/physics/fog_microphysics.py).
    fog_droplet_visibility_m: float = _p(1000.0, 'Fog/haze-only visibility above which no fog '
                                         'droplets remain (WMO: fog < 1 km); droplet share of '
                                         'the extinction 1 - (V / this)^2.', 'm',
                                         min=1.0, max=1e5)
    fog_fluctuation_reference_m: float = _p(12.0, 'Visibility where the gamma shape of the '
                                            "droplets' backscatter is fog_fluctuation_shape; "
                                            'k = shape x this / V (estimate).', 'm',
                                            min=1.0, max=1e5)
    haze_lidar_ratio_sr: float = _p(60.0, 'Lidar ratio of continental haze (Mueller et al. '
                                    '2007: 50-70 sr).', 'sr', min=1.0, max=200.0)
    rain_lidar_ratio_sr: float = _p(220.0, 'Lidar ratio of rain (Mie, water spheres 30 mrad '
                                    'from backscatter; bounds 4 sr (glory) and 1266 sr '
                                    '(Fresnel only), docs/physics-weather.md).', 'sr',
                                    min=1.0, max=2000.0)
    snow_type: str = _p('dry', 'ITU-R P.1817 snow law: dry or wet snow coefficients.',
                        choices=('dry', 'wet'))
    # Flake optics (core/physics/snow_optics.py).
    snow_flake_optics: str = _p('area_law', "Flakes' optical area: area_law (Mitchell 1996 "
                                'aggregates, A = 0.2285 D^1.88 cgs, rate-independent) or '
                                'itu_matched (disc x the ratio matching the ITU-R extinction).',
                                choices=('area_law', 'itu_matched'))
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
    sun_override_klx: float = _p(-1.0, 'Sunlight override, < 0 = use the environment.', 'klx',
                                 min=-1.0, max=200.0)
    smoke_enabled: bool = _p(True, 'Smoke volumes stop the rays.')
    smoke_cell_radius_scale: float = _p(1.0, 'Scale of the smoke cell radius.', min=0.01,
                                        max=100.0)
    smoke_density_threshold: float = _p(0.05, 'Smoke cells with lower effective density are '
                                        'ignored.', min=0.0, max=1.0)
    smoke_visibility_m: float = _p(5.0, 'Meteorological visibility inside smoke of density 1 '
                                   '(density d: this / d); sets the extinction of smoke around '
                                   'the sensor (docs/physics.md, "Smoke").', 'm',
                                   min=0.1, max=1000.0)

    @cached_property
    def detection_threshold_counts(self):
        """Return the detection threshold T = S10 - z sqrt(S10 + ambient), counts (cached)."""
        return detection_threshold(self.signal_at_10pct_counts, self.spec_background_counts,
                                   self.detection_at_spec)

    @property
    def spec_background_counts(self):
        """Return the background at the spec's light, ambient + solar x spec_sun_klx, counts."""
        return self.ambient_counts + self.solar_counts_per_klx * self.spec_sun_klx

    @property
    def detection_z(self):
        """Return the standard-normal quantile z of detection_at_spec."""
        return normal_ppf(self.detection_at_spec)

    def _check_cross(self):
        super()._check_cross()
        check_range_noise_bands(self.range_noise_bands_m, RANGE_NOISE_STD_MAX_M)
        if self.detection_threshold_counts <= 0.0:
            raise ConfigError('detection_at_spec', self.detection_at_spec,
                              'a value giving a positive threshold S10 - z sqrt(S10 + ambient)')
        # An override in use must be a weather the environment could send (Weather's limits).
        if 0.0 <= self.visibility_override_m < VISIBILITY_MIN_M:
            raise ConfigError('visibility_override_m', self.visibility_override_m,
                              VISIBILITY_ALLOWED)
