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
"""

import math

import numpy as np

from ubot_lidar_sim.core.detection import normal_ppf
from ubot_lidar_sim.core.physics import radiometry


def background_counts(cfg, sun_klx):
    """Return the background A(E) = ambient_counts + solar_counts_per_klx x E, counts."""
    return float(cfg.ambient_counts + cfg.solar_counts_per_klx * sun_klx)


def false_alarm_probability(cfg, sun_klx):
    """Return Phi(-T / sqrt(A(E))): a sample without echo crossing the threshold T."""
    a = background_counts(cfg, sun_klx)
    # erfc keeps the far tail (Phi(-16) ~ 1e-58) that 1 + erf(x) rounds to 0.
    return 0.5 * math.erfc(cfg.detection_threshold_counts / math.sqrt(2.0 * a)) if a > 0.0 \
        else 0.0


def required_signal(cfg, sun_klx, probability=None):
    """
    Return the mean signal P detected with ``probability`` (default detection_at_spec), counts.

    P - T = z sqrt(P + A): with u = sqrt(P + A), u = (z + sqrt(z^2 + 4 (A + T))) / 2.
    """
    z = normal_ppf(cfg.detection_at_spec if probability is None else probability)
    a, t = background_counts(cfg, sun_klx), cfg.detection_threshold_counts
    u = 0.5 * (z + math.sqrt(z * z + 4.0 * (a + t)))
    return u * u - a


def detection_range_m(cfg, reflectance, sun_klx, probability=None):
    """
    Return the farthest range (m) where a target is detected with ``probability``, to 1 mm.

    A Lambertian target of ``reflectance`` at normal incidence in clear air (0: nowhere): the
    signal law of docs/physics.md ("Signal", form factor included) on a 1 mm grid up to
    max(10 x range_at_10pct_m, 1 km).
    """
    need = required_signal(cfg, sun_klx, probability)
    r = np.arange(1e-3, max(10.0 * cfg.range_at_10pct_m, 1000.0), 1e-3)
    ok = reflectance * radiometry.counts_per_reflectance(cfg, r) >= need
    return float(r[np.flatnonzero(ok)[-1]]) if ok.any() else 0.0


def solar_response_from_false_alarm(signal_at_10pct_counts, detection_at_spec, false_alarm,
                                    spec_sun_klx, ambient_counts):
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
