"""
The detector's part of the physical model: radiometry (spec point, background) and noise.

Parts of PhysicalModel (core/config/model.py); docs/physics.md gives the laws.
"""

from dataclasses import dataclass
from functools import cached_property

from ubot_lidar_sim.core.config.fields import Floats, parameter as _p, Validated
from ubot_lidar_sim.core.detection import detection_threshold, normal_ppf
from ubot_lidar_sim.core.errors import ConfigError

#: The largest 1-sigma range noise floor, m (range_noise_std_m and the std_m of the bands).
RANGE_NOISE_STD_MAX_M = 10.0


def check_range_noise_bands(bands: Floats, std_max_m: float) -> None:
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
class NoiseConfig(Validated):
    """Signal and range noise: the range-noise floor (or bands) and the low-SNR term."""

    noise_enabled: bool = _p(True, 'Signal and range noise on (the draws happen either way).')
    range_noise_std_m: float = _p(0.0, 'Range-noise floor (1 sigma) at every range while '
                                  'range_noise_bands_m is empty.', 'm', min=0.0,
                                  max=RANGE_NOISE_STD_MAX_M)
    range_noise_bands_m: Floats = _p(
         (), "The datasheet's precision (1 sigma) by range: flat pairs [range_m, std_m, "
         'range_m, std_m, ...], ranges >= 0 and strictly increasing, std_m in [0, 10]; the floor '
         'at an echo range is std_m interpolated linearly between the points (linear '
         "interpolation between a datasheet's points is this package's assumption), held at the "
         'end values outside them; the low-SNR term still adds in quadrature. Physical model of '
         'lidar_3d and laser_scan (the geometric model has no noise). Empty = range_noise_std_m '
         'everywhere.',
         'm', item_type=float)
    range_std_low_snr_m: float = _p(0.03, 'Extra range noise at the spec SNR.', 'm',
                                    min=0.0, max=10.0)
    range_noise_snr_exponent: float = _p(1.0, 'Extra range noise scales as (SNR_spec/SNR)^this '
                                         '(1 = default; ~0.6 fits datasheets).',
                                         min=0.0, max=3.0)

    def _check_cross(self) -> None:
        super()._check_cross()
        check_range_noise_bands(self.range_noise_bands_m, RANGE_NOISE_STD_MAX_M)


@dataclass(frozen=True)
class RadiometryConfig(Validated):
    """The spec point, background and receiver: what sets the signal and the threshold."""

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

    @cached_property
    def detection_threshold_counts(self) -> float:
        """Return the detection threshold T = S10 - z sqrt(S10 + ambient), counts (cached)."""
        return float(detection_threshold(self.signal_at_10pct_counts,
                                         self.spec_background_counts, self.detection_at_spec))

    @property
    def spec_background_counts(self) -> float:
        """Return the background at the spec's light, ambient + solar x spec_sun_klx, counts."""
        return self.ambient_counts + self.solar_counts_per_klx * self.spec_sun_klx

    @property
    def detection_z(self) -> float:
        """Return the standard-normal quantile z of detection_at_spec."""
        return float(normal_ppf(self.detection_at_spec))

    def _check_cross(self) -> None:
        super()._check_cross()
        if self.detection_threshold_counts <= 0.0:
            raise ConfigError('detection_at_spec', self.detection_at_spec,
                              'a value giving a positive threshold S10 - z sqrt(S10 + ambient)')
