"""
Scan geometry of one sweep: beam directions, rings, columns and column firing times.

Geometry follows document 002 (channels spread uniformly from -down to +up, samples centred on +x,
a 360 deg field of view not repeating its first column); the timing is ColumnTimeOffset of document
001 converted to the ``stamp_at`` convention of CONTRACT §6.
"""

from dataclasses import dataclass
from functools import lru_cache
import math

import numpy as np

from ubot_lidar_sim.core.errors import ScanError


@dataclass(frozen=True, eq=False)
class Beams:
    """
    The B = channels x horizontal_samples beams of one sweep, ring-major (b = ring * H + col).

    dir_sensor (B, 3) float64 unit vectors in the sensor frame; azimuth_rad, elevation_rad (B,);
    ring (B,) uint16; column (B,) int64; column_time_s (C,) firing time of each column relative
    to the header stamp (>= 0 with stamp_at start, < 0 with stamp_at end, 0 without motion
    distortion); column_azimuth_rad (C,) and ring_elevation_rad (R,) are the two axes of the grid.
    """

    dir_sensor: np.ndarray
    azimuth_rad: np.ndarray
    elevation_rad: np.ndarray
    ring: np.ndarray
    column: np.ndarray
    column_time_s: np.ndarray
    column_azimuth_rad: np.ndarray
    ring_elevation_rad: np.ndarray

    @property
    def n_beams(self):
        """Return the number of beams B."""
        return self.dir_sensor.shape[0]

    @property
    def channels(self):
        """Return the number of rings R."""
        return self.ring_elevation_rad.shape[0]

    @property
    def columns(self):
        """Return the number of columns C (horizontal_samples)."""
        return self.column_azimuth_rad.shape[0]


def check_ray_budget(channels, horizontal_samples, max_rays_per_scan):
    """
    Raise ScanError when channels x horizontal_samples exceeds max_rays_per_scan (document 002).

    The scan is refused, never truncated.
    """
    rays = channels * horizontal_samples
    if rays > max_rays_per_scan:
        raise ScanError(
            f'max_rays_per_scan: got channels x horizontal_samples = {channels} x '
            f'{horizontal_samples} = {rays} rays, allowed at most max_rays_per_scan = '
            f'{max_rays_per_scan} (lower channels or horizontal_samples, or raise '
            'max_rays_per_scan)')


def ring_elevations_deg(channels, up_deg, down_deg, table_deg=()):
    """
    Elevation of each ring, deg (R,): the table if given, else uniform from -down to +up.

    One channel sits at the midpoint of the vertical field of view (0 when both are 0).
    """
    if len(table_deg):
        return np.asarray(table_deg, dtype=np.float64)
    if channels == 1:
        return np.array([(up_deg - down_deg) / 2.0])
    return np.linspace(-down_deg, up_deg, channels)


def column_azimuths_rad(horizontal_samples, fov_deg):
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


def column_times_s(azimuth_rad, period_s, spin_direction, start_azimuth_deg, stamp_at,
                   motion_distortion=True):
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


def build_beams(cfg):
    """Return the Beams of ``cfg`` (a LidarConfig), cached; ScanError over the ray budget."""
    return _build_beams(cfg.channels, cfg.horizontal_samples, cfg.horizontal_fov_deg,
                        cfg.vertical_fov_up_deg, cfg.vertical_fov_down_deg,
                        tuple(cfg.elevations_deg), cfg.max_rays_per_scan, 1.0 / cfg.rate_hz,
                        cfg.spin_direction, cfg.scan_start_azimuth_deg, cfg.stamp_at,
                        bool(cfg.motion_distortion))


@lru_cache(maxsize=16)
def _build_beams(channels, samples, hfov_deg, up_deg, down_deg, table_deg, max_rays, period_s,
                 spin, start_deg, stamp_at, motion):
    check_ray_budget(channels, samples, max_rays)
    el = np.radians(ring_elevations_deg(channels, up_deg, down_deg, table_deg))
    az = column_azimuths_rad(samples, hfov_deg)
    el_b = np.repeat(el, samples)
    az_b = np.tile(az, channels)
    cos_el = np.cos(el_b)
    dirs = np.stack([cos_el * np.cos(az_b), cos_el * np.sin(az_b), np.sin(el_b)], axis=1)
    beams = Beams(
        dir_sensor=dirs, azimuth_rad=az_b, elevation_rad=el_b,
        ring=np.repeat(np.arange(channels, dtype=np.uint16), samples),
        column=np.tile(np.arange(samples, dtype=np.int64), channels),
        column_time_s=column_times_s(az, period_s, spin, start_deg, stamp_at, motion),
        column_azimuth_rad=az, ring_elevation_rad=el)
    for a in (beams.dir_sensor, beams.azimuth_rad, beams.elevation_rad, beams.ring, beams.column,
              beams.column_time_s, beams.column_azimuth_rad, beams.ring_elevation_rad):
        a.flags.writeable = False  # shared through the cache
    return beams


def sub_ray_pattern(sub_rays, divergence_mrad):
    """
    Return the SubRayPattern of document 001: offsets (S, 2) rad and weights (S,).

    The offsets lie in the beam's perpendicular plane (see sub_ray_directions).

    1: the centre, weight 1. 7: the centre (0.25) plus six rays on a hexagon of radius
    0.35 x divergence (0.125 each).
    """
    if sub_rays == 1:
        return np.zeros((1, 2)), np.ones(1)
    if sub_rays != 7:
        raise ScanError(f'sub_rays: got {sub_rays!r}, allowed 1 or 7')
    radius = 0.35 * divergence_mrad * 1e-3
    ang = np.arange(6) * (math.pi / 3.0)
    ring = radius * np.stack([np.cos(ang), np.sin(ang)], axis=1)
    offsets = np.vstack([np.zeros((1, 2)), ring])
    weights = np.concatenate([[0.25], np.full(6, 0.125)])
    return offsets, weights


def perpendicular_basis(dirs):
    """
    Two unit vectors orthogonal to each unit direction: u horizontal, v = d x u ((N, 3) each).

    u = z x d normalised (the azimuth direction); along +-z it falls back to x x d.
    """
    d = np.asarray(dirs, dtype=np.float64)
    u = np.stack([-d[:, 1], d[:, 0], np.zeros(len(d))], axis=1)  # z x d
    norm = np.linalg.norm(u, axis=1)
    vertical = norm < 1e-9
    if np.any(vertical):
        u[vertical] = np.cross(np.array([1.0, 0.0, 0.0]), d[vertical])
        norm[vertical] = np.linalg.norm(u[vertical], axis=1)
    u /= norm[:, None]
    v = np.cross(d, u)
    return u, v


def sub_ray_directions(dirs, offsets):
    """
    Sub-ray unit directions (B * S, 3); sub-ray k of beam b at row b * S + k.

    Offset (a, b) turns the beam by the angle |(a, b)| towards a u + b v (u, v from
    perpendicular_basis), so the six hexagon rays sit exactly 0.35 x divergence off the centre.
    """
    d = np.asarray(dirs, dtype=np.float64)
    off = np.asarray(offsets, dtype=np.float64)
    if off.shape[0] == 1 and not np.any(off):
        return d.copy()
    u, v = perpendicular_basis(d)
    ang = np.hypot(off[:, 0], off[:, 1])
    unit = off / np.where(ang > 0.0, ang, 1.0)[:, None]
    cos_a = np.cos(ang)[None, :, None]
    sin_a = np.sin(ang)[None, :, None]
    side = unit[None, :, 0, None] * u[:, None, :] + unit[None, :, 1, None] * v[:, None, :]
    out = cos_a * d[:, None, :] + sin_a * side
    return out.reshape(-1, 3)
