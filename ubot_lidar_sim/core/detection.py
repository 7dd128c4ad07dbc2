"""
The detection threshold of the radiometric model (docs/physics.md): pure arithmetic, no numpy.

Config checks it (a positive threshold) and the physics applies it, so it sits in the base
layer both import.
"""

import math


def normal_cdf(x: float) -> float:
    """Return the standard normal CDF at x (math.erf, no scipy)."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def normal_ppf(p: float) -> float:
    """Return the inverse standard normal CDF by bisection (|error| < 1e-12), 0 < p < 1."""
    lo, hi = -40.0, 40.0
    while hi - lo > 1e-13:
        mid = 0.5 * (lo + hi)
        if normal_cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def detection_threshold(signal_at_10pct_counts: float, ambient_counts: float,
                        detection_at_spec: float) -> float:
    """
    Return T = S10 - z sqrt(S10 + ambient), z = normal_ppf(detection_at_spec), counts.

    A false-alarm definition of range only changes z: detection_threshold_from_z covers it.
    """
    return detection_threshold_from_z(signal_at_10pct_counts, ambient_counts,
                                      normal_ppf(detection_at_spec))


def detection_threshold_from_z(signal_at_10pct_counts: float, ambient_counts: float,
                               z: float) -> float:
    """Return T = S10 - z sqrt(S10 + ambient) for a given quantile z, counts."""
    return signal_at_10pct_counts - z * math.sqrt(signal_at_10pct_counts + ambient_counts)
