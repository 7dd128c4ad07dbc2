"""
The sensor's own imperfections (issue 42): per-laser calibration residuals.

A multi-laser sensor reports each point along its nominal (calibrated) laser direction, at the
measured range plus the laser's range correction; what the factory calibration leaves is a
per-laser residual: the laser fires along elevation + d_el and azimuth + d_az of the nominal
ones and its ranges carry d_range. The model draws d_el, d_az, d_range per ring once per sensor
instance, normal with standard deviations calibration_{elevation,azimuth}_std_deg and
calibration_range_std_m, from the stream keyed by (calibration_serial, sensor_id, 0,
STREAM_CALIBRATION): the same for every sweep and every seed of that instance, another for
another serial. Rays are traced along the fired directions; points are placed along the nominal
ones at range + d_range. Only in the physical model, and only with a standard deviation > 0:
the defaults are 0 (off) because no calibration paper or factory file read in this session gave
the residual sizes (open, docs/physics.md).
"""

import math

import numpy as np


def residuals(cfg, channels, rng):
    """Return (d_el_rad, d_az_rad, d_range_m), each (channels,), drawn from rng in that order."""
    draws = rng.standard_normal((3, channels))
    return (draws[0] * math.radians(cfg.calibration_elevation_std_deg),
            draws[1] * math.radians(cfg.calibration_azimuth_std_deg),
            draws[2] * cfg.calibration_range_std_m)


def active(cfg):
    """Return True when the physical model has a calibration residual to apply."""
    return getattr(cfg, 'model', 'physical') == 'physical' and (
        cfg.calibration_elevation_std_deg > 0.0 or cfg.calibration_azimuth_std_deg > 0.0
        or cfg.calibration_range_std_m > 0.0)


def instance(cfg, channels, make_rng):
    """Return the instance's residuals (residuals() from make_rng()), or None when inactive."""
    return residuals(cfg, channels, make_rng()) if active(cfg) else None


def fired(beams, calibration):
    """Return the directions (B, 3) the beams fire along: dir_sensor without residuals."""
    if calibration is None:
        return beams.dir_sensor
    return fired_directions(beams.dir_sensor, beams.ring, calibration[0], calibration[1])


def reported_range(range_m, beams, beam, calibration):
    """Return the points' ranges (P,) plus their laser's range residual (unchanged without)."""
    if calibration is None:
        return range_m
    return range_m + calibration[2][beams.ring[np.asarray(beam, np.int64)]]


def fired_directions(dir_sensor, ring, d_el_rad, d_az_rad):
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
