"""
Scan geometry of one sweep: beam directions, rings, columns and firing times.

The spinning grid (docs/physics.md, "Scan geometry and motion distortion"): channels spread
uniformly from -down to +up, samples centred on +x, a 360 deg field of view not repeating its
first column; the timing is
each column's firing time after the sweep's first firing (the ``stamp_at`` convention), plus
each ring's firing offset inside its column. ``pattern_type: rosette`` (Livox) and the planar rays
of the 2D scanner come from planar_and_rosette.py in the same Beams.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.beams import planar_and_rosette


@dataclass(frozen=True, eq=False)
class Beams:
    """
    The B = channels x horizontal_samples beams of one sweep, ring-major (b = ring * H + col).

    dir_sensor (B, 3) float64 unit vectors in the sensor frame; azimuth_rad, elevation_rad (B,);
    ring (B,) uint16; column (B,) int64; column_time_s (C,) firing time of each column relative
    to the header stamp (>= 0 with stamp_at start, < 0 with stamp_at end, 0 without motion
    distortion); ring_time_offset_s (R,) when each ring fires after its column (a laser's place
    in the firing order, 0 when a column fires at once), so beam b fires at
    column_time_s[column] + ring_time_offset_s[ring]. column_azimuth_rad (C,) and
    ring_elevation_rad (R,) are the axes of a spinning grid; for a rosette, the azimuth of line
    0's beam in each column and each line's prism-axis elevation.
    """

    dir_sensor: np.ndarray
    azimuth_rad: np.ndarray
    elevation_rad: np.ndarray
    ring: np.ndarray
    column: np.ndarray
    column_time_s: np.ndarray
    column_azimuth_rad: np.ndarray
    ring_elevation_rad: np.ndarray
    ring_time_offset_s: np.ndarray

    @property
    def n_beams(self) -> int:
        """Return the number of beams B."""
        return self.dir_sensor.shape[0]

    @property
    def channels(self) -> int:
        """Return the number of rings R."""
        return self.ring_elevation_rad.shape[0]

    @property
    def columns(self) -> int:
        """Return the number of columns C (horizontal_samples)."""
        return self.column_azimuth_rad.shape[0]


def ring_elevations_deg(channels: int, up_deg: float, down_deg: float,
                        table_deg: Sequence[float] = ()) -> NDArray[np.float64]:
    """
    Elevation of each ring, deg (R,): the table if given, else uniform from -down to +up.

    One channel sits at the midpoint of the vertical field of view (0 when both are 0).
    """
    if len(table_deg):
        return np.asarray(table_deg, dtype=np.float64)
    if channels == 1:
        return np.array([(up_deg - down_deg) / 2.0])
    return np.linspace(-down_deg, up_deg, channels)


def column_azimuths_rad(horizontal_samples: int, fov_deg: float) -> NDArray[np.float64]:
    """
    Azimuth of each column, rad (C,), counter-clockwise from +x and centred on it.

    360 deg: step fov/N from -180 deg, the first column is not repeated. A partial field of view
    includes both ends: step fov/(N-1); one sample looks along +x.
    """
    n = horizontal_samples
    fov = math.radians(fov_deg)
    if n == 1:
        return np.zeros(1)
    if fov_deg >= 360.0:
        return -math.pi + np.arange(n) * (fov / n)
    return -fov / 2.0 + np.arange(n) * (fov / (n - 1))


def column_times_s(azimuth_rad: NDArray[np.float64], period_s: float, spin_direction: str,
                   start_azimuth_deg: float, stamp_at: str, motion_distortion: bool = True
                   ) -> NDArray[np.float64]:
    """
    Return each column's firing time relative to the header stamp, s (C,) (ColumnTimeOffset).

    phi = (az - start) for ccw or (start - az) for cw, wrapped to [0, 2 pi), fires phi / 2 pi of
    the period after the sweep start: [0, period) with stamp_at 'start', [-period, 0) with 'end'.
    All 0 without motion distortion (every beam traced from the pose at the stamp).
    """
    az = np.asarray(azimuth_rad, dtype=np.float64)
    if not motion_distortion:
        return np.zeros_like(az)
    start = math.radians(start_azimuth_deg)
    phi = (az - start) if spin_direction == 'ccw' else (start - az)
    frac = np.mod(phi, 2.0 * math.pi) / (2.0 * math.pi)
    # np.mod can return exactly 1.0 for tiny negative phi: fold it back to the sweep start.
    frac = np.where(frac >= 1.0, 0.0, frac)
    t = frac * period_s
    return t - period_s if stamp_at == 'end' else t


def build_beams(cfg: Any, scan_index: int = 0) -> Beams:
    """
    Return the Beams of ``cfg`` (a LidarConfig, which keeps to its ray budget) for a sweep.

    A spinning grid is the same every sweep (cached); a rosette continues at t = scan_index /
    rate_hz, so no two sweeps repeat (the last few are cached).
    """
    pattern = cfg.pattern
    if pattern.kind == 'rosette':
        return _rosette_beams(cfg.channels, cfg.horizontal_samples, cfg.vertical_fov_up_deg,
                              cfg.vertical_fov_down_deg, tuple(cfg.elevations_deg),
                              cfg.rate_hz, tuple(pattern.rosette_prism_hz),
                              pattern.rosette_spin_hz, cfg.stamp_at, bool(cfg.motion_distortion),
                              int(scan_index))
    offsets_s = tuple(np.asarray(pattern.ring_time_offsets_us, dtype=np.float64) * 1e-6)
    return _build_beams(cfg.channels, cfg.horizontal_samples, cfg.horizontal_fov_deg,
                        cfg.vertical_fov_up_deg, cfg.vertical_fov_down_deg,
                        tuple(cfg.elevations_deg), 1.0 / cfg.rate_hz,
                        pattern.spin_direction, pattern.scan_start_azimuth_deg, cfg.stamp_at,
                        bool(cfg.motion_distortion), offsets_s)


def _beams(dirs, ring_elevation_rad, column_time_s, column_azimuth_rad, ring_time_offset_s,
           azimuth_rad=None):
    """
    Assemble read-only Beams from ring-major directions (R, C, 3) and the grid's axes.

    azimuth_rad (B,) as given (a planar scan keeps its angles as the message states them), else
    atan2 of the directions.
    """
    n_rings, n_cols = dirs.shape[:2]
    dirs = dirs.reshape(-1, 3)
    az, el = planar_and_rosette.azimuth_elevation_rad(dirs)
    az = az if azimuth_rad is None else np.asarray(azimuth_rad, dtype=np.float64)
    beams = Beams(
        dir_sensor=dirs, azimuth_rad=az, elevation_rad=el,
        ring=np.repeat(np.arange(n_rings, dtype=np.uint16), n_cols),
        column=np.tile(np.arange(n_cols, dtype=np.int64), n_rings),
        column_time_s=np.asarray(column_time_s, dtype=np.float64),
        column_azimuth_rad=np.asarray(column_azimuth_rad, dtype=np.float64),
        ring_elevation_rad=np.asarray(ring_elevation_rad, dtype=np.float64),
        ring_time_offset_s=np.asarray(ring_time_offset_s, dtype=np.float64))
    for name in Beams.__dataclass_fields__:
        getattr(beams, name).flags.writeable = False  # shared through the caches
    return beams


def grid_beams(column_azimuth_rad: NDArray[np.float64], ring_elevation_rad: NDArray[np.float64],
               column_time_s: NDArray[np.float64]) -> Beams:
    """
    Return the Beams of a grid given by its axes: azimuths (C,), elevations (R,), rad.

    For a grid that is not the spinning pattern's (a Gazebo sensor's min + k step on both
    axes, core/robot); column_time_s (C,) as column_times_s gives it, rings fire at once.
    """
    az = np.asarray(column_azimuth_rad, dtype=np.float64)
    el = np.asarray(ring_elevation_rad, dtype=np.float64)
    az_b, el_b = np.tile(az, len(el)), np.repeat(el, len(az))
    dirs = np.stack([np.cos(el_b) * np.cos(az_b), np.cos(el_b) * np.sin(az_b), np.sin(el_b)],
                    axis=1)
    return _beams(dirs.reshape(len(el), len(az), 3), el, column_time_s, az, np.zeros(len(el)),
                  azimuth_rad=az_b)


@lru_cache(maxsize=16)
def _build_beams(channels, samples, hfov_deg, up_deg, down_deg, table_deg, period_s, spin,
                 start_deg, stamp_at, motion, offsets_s):
    el = np.radians(ring_elevations_deg(channels, up_deg, down_deg, table_deg))
    az = column_azimuths_rad(samples, hfov_deg)
    el_b = np.repeat(el, samples)
    az_b = np.tile(az, channels)
    cos_el = np.cos(el_b)
    dirs = np.stack([cos_el * np.cos(az_b), cos_el * np.sin(az_b), np.sin(el_b)], axis=1)
    offsets = np.asarray(offsets_s) if offsets_s and motion else np.zeros(channels)
    beams = Beams(
        dir_sensor=dirs, azimuth_rad=az_b, elevation_rad=el_b,
        ring=np.repeat(np.arange(channels, dtype=np.uint16), samples),
        column=np.tile(np.arange(samples, dtype=np.int64), channels),
        column_time_s=column_times_s(az, period_s, spin, start_deg, stamp_at, motion),
        column_azimuth_rad=az, ring_elevation_rad=el, ring_time_offset_s=offsets)
    for name in Beams.__dataclass_fields__:
        getattr(beams, name).flags.writeable = False  # shared through the cache
    return beams


@lru_cache(maxsize=4)
def _rosette_beams(lines, shots, up_deg, down_deg, table_deg, rate_hz, prism_hz, spin_hz,
                   stamp_at, motion, scan_index):
    """Return the Beams of sweep scan_index of a Risley rosette (lines x shots)."""
    el_deg = planar_and_rosette.rosette_line_elevations_deg(lines, up_deg, down_deg, table_deg)
    theta = planar_and_rosette.rosette_cone_half_angle_rad(up_deg, down_deg, el_deg)
    col_t, line_t = planar_and_rosette.rosette_times_s(lines, shots, rate_hz)
    t_abs = scan_index / rate_hz + col_t[None, :] + line_t[:, None]
    dirs = planar_and_rosette.risley_directions(t_abs, theta, prism_hz, np.radians(el_deg),
                                                spin_hz)
    if not motion:
        col_t, line_t = np.zeros_like(col_t), np.zeros_like(line_t)
    elif stamp_at == 'end':
        col_t = col_t - 1.0 / rate_hz
    az0 = planar_and_rosette.azimuth_elevation_rad(dirs[0])[0]
    return _beams(dirs, np.radians(el_deg), col_t, az0, line_t)


def planar_beams(azimuth_rad: NDArray[np.float64], ray_time_s: NDArray[np.float64]) -> Beams:
    """
    Return the Beams of a 2D scan: one ring, ray k (a column) at azimuth_rad[k], elevation 0.

    ray_time_s (N,) firing time of each ray after the header stamp
    (planar_and_rosette.planar_times_s).
    """
    az = np.asarray(azimuth_rad, dtype=np.float64)
    dirs = np.stack([np.cos(az), np.sin(az), np.zeros_like(az)], axis=1)[None]
    return _beams(dirs, np.zeros(1), ray_time_s, az, np.zeros(1), azimuth_rad=az)
