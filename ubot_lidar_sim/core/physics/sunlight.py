"""
Sunlight (docs/physics.md, "Sunlight"): the background the detector must beat.

Sunlight scattered by the scene into the receiver adds shot-noise counts in proportion to the
illuminance E (klx): the background is A(E) = ambient_counts + solar_counts_per_klx x E, the
dark counts plus the detector's solar response. The detection threshold T is set at the
datasheet's light (spec_sun_klx, A_spec = A(spec_sun_klx)): T = S10 - z sqrt(S10 + A_spec), so
the 10 % target at range_at_10pct_m is detected with probability detection_at_spec under that
light. In other light the same T meets another noise: an echo of mean P is detected with
probability Phi((P - T) / sqrt(P + A(E))), so a brighter sun needs a stronger echo (a shorter
range) for the same probability, and a sample without an echo crosses T (a false alarm) with
probability Phi(-T / sqrt(A(E))), which rises with E as shot noise says.

A datasheet that gives its range at 100 klx together with a false-positive rate f fixes the
solar response: T / sqrt(A_spec) = Phi^-1(1 - f) (solar_response_from_false_alarm).

The sun's direction (a world's ``sun``, beam_background): the receiver sees the radiance of what
its beam looks at, rho E max(0, cos theta_s) / pi on a Lambertian surface lit at theta_s, and the
sky's E_d / pi where it looks into the sky. The response is calibrated on the datasheet's target
(SPEC_TARGET_REFLECTANCE, lit face-on), so a beam's background is A = ambient_counts +
solar_counts_per_klx E g with g = rho max(0, cos theta_s) / 0.1 on its first solid surface and
g = SKY_DIFFUSE_FRACTION / 0.1 into the sky. Without a direction every beam has g = 1.
"""

from __future__ import annotations

import math
from typing import Optional, TYPE_CHECKING, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.radiometry import RadiometryConfig
from ubot_lidar_sim.core.detection import normal_ppf
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics.false_alarms import per_bin_probability
from ubot_lidar_sim.core.physics.weather import Weather

if TYPE_CHECKING:       # annotations only
    from ubot_lidar_sim.core.raycast.hits import Hits
    from ubot_lidar_sim.core.world.materials import MaterialTable
    from ubot_lidar_sim.core.world.world import World

#: Reflectance of the datasheet's target the solar response holds for (the 10 % target of the
#: 100 klx range figures, e.g. the Ouster OS1 datasheet's "10% reflective lambertian target").
SPEC_TARGET_REFLECTANCE = 0.1
#: Diffuse share of clear-sky sunlight: the sky's radiance E_d / pi with E_d = this x E (Erbs,
#: Klein & Duffie, Solar Energy 28 (1982) 293-302: diffuse fraction 0.165 at a clearness index
#: above 0.8; broadband, the 905 nm sky is darker by Rayleigh's lambda^-4, so an upper bound).
SKY_DIFFUSE_FRACTION = 0.165


def background_counts(spec: RadiometryConfig, sun_klx: float) -> float:
    """Return the background A(E) = ambient_counts + solar_counts_per_klx x E, counts."""
    return float(spec.ambient_counts + spec.solar_counts_per_klx * sun_klx)


def false_alarm_probability(spec: RadiometryConfig, sun_klx: float) -> float:
    """Return Phi(-T / sqrt(A(E))): a sample without echo crossing the threshold T."""
    return float(per_bin_probability(float(spec.detection_threshold_counts),
                                     np.array([background_counts(spec, sun_klx)]))[0])


def beam_background(spec: RadiometryConfig, weather: Weather, world: World,
                    table: MaterialTable, hits: Hits, beam_dirs: NDArray[np.float64],
                    n_sub: int, solid: ArrayLike) -> Union[float, NDArray[np.float64]]:
    """
    Return each beam's background A (B,) counts, or the scan's one value without a direction.

    weather: the scan's Weather (sun_illuminance_klx E); world.sun_direction: the unit (3,)
    direction sunlight travels (None: no direction, background_counts); table: the
    MaterialTable (reflectivity at the laser's wavelength); hits: the sweep's trace in (ray,
    range) order (normals present), ray = beam x n_sub + k; beam_dirs (B, 3) the beams'
    centre directions (world); solid (H,) bool: hits that stop the beam (a foliage layer or
    pane is seen through).
    """
    sun_klx, sun_direction = weather.sun_illuminance_klx, world.sun_direction
    if sun_direction is None or not sun_klx > 0.0:
        return background_counts(spec, sun_klx)
    n_beams = beam_dirs.shape[0]
    g = np.full(n_beams, SKY_DIFFUSE_FRACTION / SPEC_TARGET_REFLECTANCE)
    ray = np.asarray(hits.ray, np.int64)
    rows = np.flatnonzero((ray % n_sub == 0) & np.asarray(solid, bool))
    if rows.size:
        beam = ray[rows] // n_sub
        order = np.lexsort((np.asarray(hits.range_m)[rows], beam))
        beam, first = np.unique(beam[order], return_index=True)
        rows = rows[order[first]]
        n = np.asarray(hits.normal, np.float64)[rows]
        n = n / np.linalg.norm(n, axis=1, keepdims=True)
        # The face the beam sees: its normal turned towards the sensor.
        n = n * -np.sign(np.sum(n * beam_dirs[beam], axis=1))[:, None]
        cos_sun = np.maximum(0.0, -(n @ np.asarray(sun_direction, np.float64)))
        rho = table.reflectivity[np.asarray(hits.material)[rows]]
        g[beam] = rho * cos_sun / SPEC_TARGET_REFLECTANCE
    return spec.ambient_counts + spec.solar_counts_per_klx * sun_klx * g


def required_signal(spec: RadiometryConfig, sun_klx: float,
                    probability: Optional[float] = None) -> float:
    """
    Return the mean signal P detected with ``probability`` (default detection_at_spec), counts.

    P - T = z sqrt(P + A): with u = sqrt(P + A), u = (z + sqrt(z^2 + 4 (A + T))) / 2.
    """
    z = normal_ppf(spec.detection_at_spec if probability is None else probability)
    a, t = background_counts(spec, sun_klx), spec.detection_threshold_counts
    u = 0.5 * (z + math.sqrt(z * z + 4.0 * (a + t)))
    return u * u - a


def detection_range_m(spec: RadiometryConfig, reflectance: float, sun_klx: float,
                      probability: Optional[float] = None) -> float:
    """
    Return the farthest range (m) where a target is detected with ``probability``, to 1 mm.

    A Lambertian target of ``reflectance`` at normal incidence in clear air (0: nowhere): the
    signal law of docs/physics.md ("Signal", form factor included) on a 1 mm grid up to
    max(10 x range_at_10pct_m, 1 km).
    """
    need = required_signal(spec, sun_klx, probability)
    r = np.arange(1e-3, max(10.0 * spec.range_at_10pct_m, 1000.0), 1e-3)
    ok = reflectance * radiometry.counts_per_reflectance(spec, r) >= need
    return float(r[np.flatnonzero(ok)[-1]]) if ok.any() else 0.0


def solar_response_from_false_alarm(signal_at_10pct_counts: float, detection_at_spec: float,
                                    false_alarm: float, spec_sun_klx: float,
                                    ambient_counts: float) -> float:
    """
    Return solar_counts_per_klx so that the spec's light gives the datasheet's false alarms.

    A_spec solves S10 - z sqrt(S10 + A) = Phi^-1(1 - false_alarm) sqrt(A) (bisection; the left
    side falls and the right side rises with A); the response is (A_spec - ambient) / spec.
    """
    z, z_fa = normal_ppf(detection_at_spec), normal_ppf(1.0 - false_alarm)
    lo, hi = 0.0, signal_at_10pct_counts ** 2
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if signal_at_10pct_counts - z * math.sqrt(signal_at_10pct_counts + mid) > \
                z_fa * math.sqrt(mid):
            lo = mid
        else:
            hi = mid
    return (0.5 * (lo + hi) - ambient_counts) / spec_sun_klx
