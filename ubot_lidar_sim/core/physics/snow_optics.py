"""
Optical cross-section of a particle from its geometric diameter (issue 42).

Drops: their disc, pi / 4 D^2. Snow flakes (snow_flake_optics 'area_law', the default): the
projected area of an aggregate from its maximum dimension, A = gamma D^sigma, the
area-dimensional power law of Mitchell (1996, J. Atmos. Sci. 53, 1710, Table 1: aggregates of
side planes, columns and bullets, 0.8-4.5 mm; gamma = 0.2285, sigma = 1.88 in cgs units: A in
cm^2, D in cm), so each flake's optics depends on its size only, not on the snowfall rate;
capped at its disc (coefficients and cgs units as the P3 scheme's table generator uses them,
P3-microphysics create_p3_lookupTable_1.f90 v5.1.6; the paper's table not read). The ITU-R
law gives the mean extinction of the medium only. Mitchell's area is the projection on the
horizontal plane (his law is for fall speeds, the area normal to the fall); a falling aggregate is
a horizontally aligned oblate spheroid of axial ratio 0.6 (Hogan et al. 2012, J. Appl. Meteor.
Climatol. 51, 655, from simultaneous radar and aircraft measurements), so a beam along the
horizontal sees 0.6 of that area (side_area_m2; the beams of a spinning lidar are within
~25 deg of the horizontal, where the projection sqrt(0.36 cos^2 e + sin^2 e) is 0.60-0.69).
'itu_matched' (round 3): the disc times the area ratio that makes the drawn flakes' extinction
the ITU-R law's (particles.flake_area_ratio; it rises with the rate, 0.23 to 0.42 from 0.5 to
5 mm/h).
"""

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig

#: Mitchell (1996), Table 1, aggregates of side planes, columns and bullets: A = gamma D^sigma,
#: cgs (cm^2, cm).
MITCHELL_GAMMA_CGS, MITCHELL_SIGMA = 0.2285, 1.88
#: The same law in mm: A_mm2 = 100 gamma (D_mm / 10)^sigma = AREA_MM2 D_mm^sigma.
AREA_MM2 = 100.0 * MITCHELL_GAMMA_CGS * 10.0 ** -MITCHELL_SIGMA
#: Hogan et al. (2012): aggregates fall as horizontally aligned oblate spheroids, axial ratio 0.6;
#: seen from the side their projection is this share of the one seen from above.
AXIAL_RATIO = 0.6
#: Below this diameter, mm, the law would exceed the disc (A <= pi / 4 D^2 there on).
DISC_BELOW_MM = (AREA_MM2 / (math.pi / 4.0)) ** (1.0 / (2.0 - MITCHELL_SIGMA))


def uses_area_law(air: AtmosphereConfig, medium: Any) -> bool:
    """Return True when a medium's particles take the aggregate area law (flakes, default)."""
    return medium.particle != 'drop' and air.snow_flake_optics == 'area_law'


def aggregate_area_m2(geometric_mm: ArrayLike) -> NDArray[np.float64]:
    """Return a flake's optical area, m^2: min(Mitchell's gamma D^sigma, its disc)."""
    d = np.asarray(geometric_mm, dtype=np.float64)
    return np.minimum(AREA_MM2 * d ** MITCHELL_SIGMA, math.pi / 4.0 * d * d) * 1e-6


def aggregate_diameter_mm(area_m2: ArrayLike) -> NDArray[np.float64]:
    """Return the geometric diameter, mm, of a flake of optical area area_m2 (the inverse)."""
    a = np.asarray(area_m2, dtype=np.float64) * 1e6
    disc = np.sqrt(a / (math.pi / 4.0))
    return np.where(disc < DISC_BELOW_MM, disc, (a / AREA_MM2) ** (1.0 / MITCHELL_SIGMA))


def side_area_m2(geometric_mm: ArrayLike) -> NDArray[np.float64]:
    """Return a falling flake's optical area seen along the horizontal, m^2: 0.6 x the above."""
    return AXIAL_RATIO * aggregate_area_m2(geometric_mm)


def side_diameter_mm(area_m2: ArrayLike) -> NDArray[np.float64]:
    """Return the geometric diameter, mm, of a flake of side-view area area_m2 (the inverse)."""
    return aggregate_diameter_mm(np.asarray(area_m2, dtype=np.float64) / AXIAL_RATIO)
