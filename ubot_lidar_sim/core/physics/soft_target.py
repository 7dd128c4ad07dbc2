"""
Pulse-integrated return of a continuous scattering volume (fog, haze): one soft echo per beam.

Hahner et al. (ICCV 2021, LiDAR_fog_sim): the power received from a volume of backscatter beta
is the emitted pulse convolved with beta T^2(r) O(r) / r^2. In the signal calibration of
docs/physics.md, "Signal" (a rho = 1 Lambertian target gives counts_per_reflectance(R) =
S10 / 0.1 (R10 / R)^2 O(R)):

    S(R) = pi beta int_0^{2L} g(x) G(R - x) dx,   g(x) = sin^2(pi x / (2 L)),   int g = L,

G(r) = counts_per_reflectance(r) T^2(r) (zero for r <= 0: the volume starts at the sensor) and
L = c tau_H / 2 the pulse length in range (FWHM x c / 2). Far from the sensor, where G is flat
over 2 L, a homogeneous volume is a hard target of reflectance rho_eq = pi beta L. Fog is
continuous and G depends on the ring only through R10, so the profile is evaluated once per scan
on a range grid; each beam reports its peak at or beyond min_range_m (receiver blanking) and
before its nearest solid hit, as one contribution that the echo stage detects with the usual shot
noise. The caller may scale each beam's peak by a random factor (clutter.py: the pulse-to-pulse
fluctuation of the backscatter); the profile itself has no random draws.
"""

import math
from typing import Any, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.config.radiometry import RadiometryConfig
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics.pulse_length import soft_pulse_length_m  # noqa: F401
from ubot_lidar_sim.core.physics.sensor_part import SensorPart

#: Grid steps per pulse length L (the pulse covers 2 L, 16 samples: the peak to < 1 %).
STEPS_PER_PULSE = 8


def pulse_shape(pulse_length_m: float, steps: int = STEPS_PER_PULSE) -> NDArray[np.float64]:
    """Return the midpoint samples g (2 steps,) of sin^2(pi x / (2 L)) on [0, 2 L]; sum g h = L."""
    x = (np.arange(2 * steps) + 0.5) / (2 * steps)
    return np.sin(math.pi * x) ** 2


# soft_profile reads the optics and the echoes (pulse length) and the radiometry: the physical
# model; soft_returns also the sensor's min_range_m and per-ring table.
def soft_profile(model: PhysicalModel, beta_per_m_sr: float, alpha_per_m: float,
                 max_range_m: float) -> Tuple[NDArray[np.floating[Any]], NDArray[np.float64]]:
    """
    Return the range grid R (G,) m and the soft signal S(R) (G,) counts at R10 = range_at_10pct_m.

    R_j = j h (j = 1..G), h = L / STEPS_PER_PULSE, up to max_range_m; the volume is sampled at
    the cell centres (k + 0.5) h, so S(R_j) = pi beta h sum_m g_m G((j - m - 0.5) h).
    """
    length = soft_pulse_length_m(model.optics, model.echoes)
    h = length / STEPS_PER_PULSE
    n = max(int(math.ceil(max_range_m / h)), 0)
    if n == 0 or beta_per_m_sr <= 0.0:
        return np.zeros(0), np.zeros(0)
    r = (np.arange(n) + 0.5) * h
    gain = radiometry.counts_per_reflectance(model.radiometry, r) * np.exp(-2.0 * alpha_per_m * r)
    s = math.pi * beta_per_m_sr * h * np.convolve(gain, pulse_shape(length))[:n]
    return (np.arange(n) + 1) * h, s


def beam_peaks(grid_m: NDArray[np.floating[Any]], profile: NDArray[np.float64],
               limit_m: ArrayLike, min_range_m: float,
               ) -> Tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Return each beam's soft peak: range (B,) m and signal (B,) counts at R10 (0: none).

    The peak is the largest profile value at min_range_m <= R <= min(limit_m, the grid's end);
    limit_m (B,) is the beam's nearest solid hit (inf: none). Ties keep the nearer range.
    """
    limit = np.asarray(limit_m, dtype=np.float64)
    peak_r = np.zeros(limit.shape)
    peak_s = np.zeros(limit.shape)
    j0 = int(np.searchsorted(grid_m, min_range_m, side='left'))
    if grid_m.size == 0 or j0 >= grid_m.size:
        return peak_r, peak_s
    s = profile[j0:]
    run_max = np.maximum.accumulate(s)
    idx = np.arange(s.size)
    # Index of the first maximum up to each grid point: new maxima only where s exceeds all before.
    rises = np.r_[True, s[1:] > run_max[:-1]]
    arg = np.maximum.accumulate(np.where(rises, idx, 0))
    last = np.searchsorted(grid_m, limit, side='right') - 1 - j0
    ok = last >= 0
    k = np.clip(last, 0, s.size - 1)
    peak_r[ok] = grid_m[j0 + arg[k[ok]]]
    peak_s[ok] = run_max[k[ok]]
    return peak_r, peak_s


def soft_returns(model: PhysicalModel, sensor: SensorPart, beta_per_m_sr: float,
                 alpha_per_m: float, limit_m: ArrayLike, beam_ring: ArrayLike, max_range_m: float,
                 fluctuation: Optional[NDArray[np.float64]] = None,
                 background_counts: Optional[float] = None,
                 ) -> Tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """
    Return the soft echo of every beam that can be detected: beam (M,), range (M,), power (M,).

    power is the peak signal in counts with the beam's ring R10, times the beam's backscatter
    factor fluctuation (B,) when given (the profile's shape, hence the peak's range, stays);
    beams whose S satisfies
    S + 5 sqrt(S + A) < T (hopeless(), A = background_counts) are dropped, as are beams
    without a grid point between min_range_m and their nearest solid hit.
    """
    grid, prof = soft_profile(model, beta_per_m_sr, alpha_per_m, max_range_m)
    peak_r, peak_s = beam_peaks(grid, prof, limit_m, sensor.min_range_m)
    ring, spec, table = np.asarray(beam_ring), model.radiometry, sensor.ring_range_at_10pct_m
    if not radiometry.uniform_r10(table):
        peak_s = peak_s * (radiometry.ring_r10(spec, ring, table) / spec.range_at_10pct_m) ** 2
    if fluctuation is not None:
        peak_s = peak_s * fluctuation
    keep = np.flatnonzero((peak_s > 0.0) & ~hopeless(spec, peak_s, background_counts))
    return keep, peak_r[keep], peak_s[keep]


def hopeless(spec: RadiometryConfig, mean_signal: ArrayLike,
             background_counts: Optional[float] = None) -> np.ndarray:
    """
    Return True where a mean signal S cannot be detected: S + 5 sqrt(S + A) < T.

    A: the scan's background (physics/sunlight.py; None: the dark's, ambient_counts).
    """
    a = spec.ambient_counts if background_counts is None else background_counts
    s = np.asarray(mean_signal, dtype=np.float64)
    return s + 5.0 * np.sqrt(s + a) < spec.detection_threshold_counts


def weakest_detectable_counts(spec: RadiometryConfig,
                              background_counts: Optional[float] = None) -> float:
    """Return the mean signal P, counts, at the edge of hopeless(): P + 5 sqrt(P + A) = T."""
    a = spec.ambient_counts if background_counts is None else background_counts
    x = ((-5.0 + math.sqrt(25.0 + 4.0 * (spec.detection_threshold_counts + a))) / 2.0) ** 2
    return max(x - a, 0.0)
