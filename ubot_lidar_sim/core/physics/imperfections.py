"""
The sensor's own imperfections: per-laser calibration residuals and range walk (physical model).

Calibration residuals. A multi-laser sensor reports each point along its nominal (calibrated)
laser direction, at the measured range plus the laser's range correction; what the factory
calibration leaves is a per-laser residual: the laser fires along elevation + d_el and azimuth +
d_az of the nominal ones and its ranges carry d_range. The model draws d_el, d_az, d_range per
ring once per sensor instance, normal with standard deviations
calibration_{elevation,azimuth}_std_deg and calibration_range_std_m, from the stream keyed by
(calibration_serial, sensor_id, 0, STREAM_CALIBRATION): the same for every sweep and every seed
of that instance, another for another serial. Rays are traced along the fired directions; points
are placed along the nominal ones at range + d_range. Default sizes: the Ouster OS1 datasheet's
angular sampling accuracy, +/-0.01 deg (vertical and horizontal), taken as 2 sigma, and no range
residual (the same table: "zero bias for lambertian targets"); no calibration paper's per-laser
residual table was reachable (docs/physics.md).

Range walk. A leading-edge discriminator fires when the echo crosses the threshold T: a Gaussian
pulse of peak S crosses it sqrt(2 ln(S / T)) pulse sigmas before its peak, so a weak echo triggers
late and reads long. Receivers compensate most of it; what remains is published as a walk over a
dynamic range: 74 ps = 11 mm over 1:1280 with 6 ns pulses ("An integrated laser radar receiver
with resonance-based timing discrimination", abstract). The model keeps the leading edge's shape
and that size: walk(S) = range_walk_m x (1 - sqrt(clip(ln(S / T) / ln(D), 0, 1))), D =
range_walk_dynamic_range: range_walk_m at the threshold, 0 from D x T up (the range calibration's
zero is on strong returns).

Both apply in the physical model with ``imperfections`` on (the default); model geometric (the
ideal sensor) and ``imperfections: false`` have neither.
"""

import math
from typing import Callable, Optional, Protocol, Tuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.imperfections import ImperfectionsConfig
from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.config.radiometry import RadiometryConfig

#: Per-ring (d_el_rad, d_az_rad, d_range_m), each (channels,): an instance's residuals.
Calibration = Tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]


class FiringBeams(Protocol):
    """What fired() reads of the sensor's Beams (core/beams/firing.py, a layer above)."""

    @property
    def dir_sensor(self) -> NDArray[np.float64]:
        """Return the nominal unit directions (B, 3) in the sensor frame."""

    @property
    def ring(self) -> NDArray[np.integer]:
        """Return each beam's laser index, shape (B,)."""


def residuals(imperfections: ImperfectionsConfig, channels: int, rng: np.random.Generator,
              ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return (d_el_rad, d_az_rad, d_range_m), each (channels,), drawn from rng in that order."""
    draws = rng.standard_normal((3, channels))
    return (draws[0] * math.radians(imperfections.calibration_elevation_std_deg),
            draws[1] * math.radians(imperfections.calibration_azimuth_std_deg),
            draws[2] * imperfections.calibration_range_std_m)


# physical, active and instance take the physical model's parameters, None with model geometric
# (a config's ``physical``): the ideal sensor has no imperfections.
def physical(model: Optional[PhysicalModel]) -> bool:
    """Return True in the physical model (their only model) with imperfections on."""
    return model is not None and bool(model.sensor_imperfections.imperfections)


def range_walk_m(imperfections: ImperfectionsConfig, spec: RadiometryConfig,
                 signal_counts: ArrayLike) -> NDArray[np.float64]:
    """
    Return the range walk (N,) m of echoes of measured signal (N,) counts (0 when off).

    A law of the physical model's echoes (echoes.process_beams); T is the radiometry's threshold.
    """
    s = np.asarray(signal_counts, np.float64)
    if not imperfections.imperfections or imperfections.range_walk_m <= 0.0:
        return np.zeros(s.shape)
    t = float(spec.detection_threshold_counts)
    x = np.log(np.maximum(s, t) / t) / math.log(imperfections.range_walk_dynamic_range)
    return imperfections.range_walk_m * (1.0 - np.sqrt(np.minimum(x, 1.0)))


def active(model: Optional[PhysicalModel]) -> bool:
    """Return True when the physical model has a calibration residual to apply."""
    if model is None or not physical(model):
        return False
    imp = model.sensor_imperfections
    return (imp.calibration_elevation_std_deg > 0.0 or imp.calibration_azimuth_std_deg > 0.0
            or imp.calibration_range_std_m > 0.0)


def instance(model: Optional[PhysicalModel], channels: int,
             make_rng: Callable[[], np.random.Generator]) -> Optional[Calibration]:
    """Return the instance's residuals (residuals() from make_rng()), or None when inactive."""
    if model is None or not active(model):
        return None
    return residuals(model.sensor_imperfections, channels, make_rng())


def fired(beams: FiringBeams, calibration: Optional[Calibration]) -> NDArray[np.float64]:
    """Return the directions (B, 3) the beams fire along: dir_sensor without residuals."""
    if calibration is None:
        return beams.dir_sensor
    return fired_directions(beams.dir_sensor, beams.ring, calibration[0], calibration[1])


def reported_range(range_m: NDArray[np.float64], beams: FiringBeams, beam: ArrayLike,
                   calibration: Optional[Calibration]) -> NDArray[np.float64]:
    """Return the points' ranges (P,) plus their laser's range residual (unchanged without)."""
    if calibration is None:
        return range_m
    return range_m + calibration[2][beams.ring[np.asarray(beam, np.int64)]]


def fired_directions(dir_sensor: ArrayLike, ring: ArrayLike, d_el_rad: NDArray[np.float64],
                     d_az_rad: NDArray[np.float64]) -> NDArray[np.float64]:
    """
    Return the unit directions (B, 3) the lasers fire along.

    The nominal azimuth (about +z from +x) and elevation (from the xy plane) plus the ring's
    residuals.
    """
    d = np.asarray(dir_sensor, np.float64)
    r = np.asarray(ring, np.int64)
    az = np.arctan2(d[:, 1], d[:, 0]) + d_az_rad[r]
    el = np.arctan2(d[:, 2], np.hypot(d[:, 0], d[:, 1])) + d_el_rad[r]
    c = np.cos(el)
    return np.stack([c * np.cos(az), c * np.sin(az), np.sin(el)], axis=1)
