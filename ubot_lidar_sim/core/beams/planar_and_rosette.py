"""
Beam patterns beside the spinning grid: the 2D scanner's planar rays and the Livox rosette.

The planar rays are a ray every resolution degrees (LaserScan); the Risley-prism rosette of Livox
sensors is non-repetitive and fires every point at its own time.

Pure functions over numpy arrays (no loop over beams); firing.build_beams assembles their
output into Beams. Angles in radians unless the name ends in ``_deg``; times in seconds.
"""

from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import NDArray

PATTERN_TYPES = ('spinning', 'rosette')
# fov / resolution that is an integer in decimal (270 / 0.1) must not gain a ray from rounding.
_COUNT_EPS = 1e-9


def planar_ray_count(fov_deg: float, resolution_deg: float) -> int:
    """
    Return the rays N of a 2D scan: ceil(fov / resolution), at least 1.

    The scanner casts ``for (i = 0; i < 360; i += Resolution)``: a ray every resolution over
    the half-open field of view, so 7 deg gives 52 rays, 100 deg 4 and 270 deg 2.
    """
    return max(1, math.ceil(fov_deg / resolution_deg - _COUNT_EPS))


def planar_azimuths_rad(fov_deg: float, resolution_deg: float, centre_deg: float = 0.0
                        ) -> NDArray[np.float64]:
    """
    Return the ray azimuths (N,), counter-clockwise from +x, one resolution apart (REP 117).

    A full circle starts at 0 (rays at 0, res, 2 res, ...; docs/presets.md); a partial field
    of view is centred on centre_deg (0: +x): angle_min = centre - (N - 1) res / 2, so with
    centre 0 one ray looks along +x. Ray k is exactly angle_min + k angle_increment, as a
    LaserScan consumer computes it.
    """
    n = planar_ray_count(fov_deg, resolution_deg)
    step = math.radians(resolution_deg)
    start = 0.0 if fov_deg >= 360.0 else math.radians(centre_deg) - (n - 1) * step / 2.0
    return start + np.arange(n) * step


def planar_times_s(n_rays: int, resolution_deg: float, period_s: float) -> NDArray[np.float64]:
    """
    Return each ray's firing time after the first, s (N,): k x time_increment.

    The mirror turns once per period, so rays one resolution apart fire period x res / 360
    apart (LaserScan time_increment).
    """
    return np.arange(n_rays) * (period_s * resolution_deg / 360.0)


def rosette_line_elevations_deg(n_lines: int, up_deg: float, down_deg: float,
                                table_deg: Sequence[float] = ()) -> NDArray[np.float64]:
    """
    Return the elevation of each line's prism axis, deg (L,).

    The table when given (Avia: its six lasers sit one above the other), else every line on the
    middle of the vertical field of view, (up - down) / 2.
    """
    if len(table_deg):
        return np.asarray(table_deg, dtype=np.float64)
    return np.full(n_lines, (up_deg - down_deg) / 2.0)


def rosette_cone_half_angle_rad(up_deg: float, down_deg: float,
                                line_elevations_deg: NDArray[np.float64]
                                ) -> float:
    """
    Return the half-angle of the cone the prisms sweep, rad.

    The lines' cones together fill the vertical field of view: theta = (up + down) / 2 - (spread
    of the line axes) / 2. Avia: (38.6 + 38.6) / 2 - 6.8 / 2 = 35.2 deg, half its 70.4 deg
    circle; Mid-360: (52 + 7) / 2 = 29.5 deg about an axis at 22.5 deg.
    """
    el = np.asarray(line_elevations_deg, dtype=np.float64)
    spread = float(el.max() - el.min()) if el.size else 0.0
    return math.radians((up_deg + down_deg) / 2.0 - spread / 2.0)


def rosette_times_s(n_lines: int, shots: int, rate_hz: float
                    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """
    Return the column times (C,) and the line offsets (L,) of one frame, s.

    Point i of the frame fires at i x (period / (L C)) and belongs to line i mod L (what
    livox_ros_driver2 writes: line = i % line_num, time = packet time + i x point interval):
    column c = i // L fires at c L dt, line l at l dt after its column.
    """
    dt = 1.0 / (rate_hz * n_lines * shots)
    return np.arange(shots) * (n_lines * dt), np.arange(n_lines) * dt


def risley_directions(t_s: NDArray[np.float64], cone_half_angle_rad: float,
                      prism_hz: Sequence[float], axis_elevation_rad: NDArray[np.float64],
                      spin_hz: float = 0.0) -> NDArray[np.float64]:
    """
    Return unit directions (L, C, 3) in the sensor frame of a two-prism Risley scanner.

    t_s (L, C) absolute firing times; axis_elevation_rad (L,) each line's cone axis. First-order
    Risley model: the deflection is the sum of two rotating vectors of half the cone angle each,
    delta(t) = theta / 2 (exp(i (2 pi f1 t + phi_l)) + exp(i 2 pi f2 t)), with the prisms at
    f1 and f2 (opposite signs: counter-rotating). |delta| <= theta, and since f1 / f2 is not a
    ratio of small integers the rosette never closes, so the covered part of the cone grows with
    integration time. Line l starts prism 1 at phi_l = 2 pi l / L. The beam leaves the axis by
    |delta| towards arg(delta) (0 = left, pi / 2 = up), the axis is tilted up by its elevation,
    then the head turns about z by 2 pi spin_hz t (Mid-360; 0 = forward-looking, Avia).
    """
    t = np.asarray(t_s, dtype=np.float64)
    n_lines = t.shape[0]
    phase = (2.0 * math.pi / n_lines) * np.arange(n_lines)[:, None]
    a1 = (2.0 * math.pi * prism_hz[0]) * t + phase
    a2 = (2.0 * math.pi * prism_hz[1]) * t
    half = 0.5 * cone_half_angle_rad
    dy = half * (np.cos(a1) + np.cos(a2))
    dz = half * (np.sin(a1) + np.sin(a2))
    rho = np.hypot(dy, dz)
    psi = np.arctan2(dz, dy)
    sin_rho = np.sin(rho)
    x, y, z = np.cos(rho), sin_rho * np.cos(psi), sin_rho * np.sin(psi)
    el = np.asarray(axis_elevation_rad, dtype=np.float64)[:, None]
    cos_el, sin_el = np.cos(el), np.sin(el)
    x, z = x * cos_el - z * sin_el, x * sin_el + z * cos_el
    if spin_hz:
        alpha = (2.0 * math.pi * spin_hz) * t
        cos_a, sin_a = np.cos(alpha), np.sin(alpha)
        x, y = x * cos_a - y * sin_a, x * sin_a + y * cos_a
    return np.stack([x, y, z], axis=-1)


def azimuth_elevation_rad(dirs: NDArray[np.float64]
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the azimuth (CCW from +x) and elevation of unit directions (..., 3), rad."""
    d = np.asarray(dirs, dtype=np.float64)
    return np.arctan2(d[..., 1], d[..., 0]), np.arcsin(np.clip(d[..., 2], -1.0, 1.0))
