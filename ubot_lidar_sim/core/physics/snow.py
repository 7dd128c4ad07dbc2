"""
Snow at the laser wavelength: extinction of falling snow, flake number density, snow cover.

Extinction: the ITU-R free-space-optics snow law (ITU-R P.1817; the 'ITU' snow model of MATLAB's
snowpl), alpha = a(lambda) S^b dB/km with S the snowfall rate in mm/h liquid-water equivalent and
lambda in nm: dry snow a = 5.42e-5 lambda + 5.4958776, b = 1.38; wet snow a = 1.023e-4 lambda +
3.7855466, b = 0.72. Flakes: the Gunn & Marshall (1958) distribution of melted diameters,
N(D) = N0 exp(-Lambda D), N0 = 3.8e3 S^-0.87 m^-3 mm^-1, Lambda = 2.55 S^-0.48 mm^-1, as LISA
(Kilic et al. 2021) samples it; exponential like Marshall-Palmer rain, so the granular clutter
draws of rain apply unchanged (backscatter ~ D^2, brightness X = E^2 / 2). Cover: ground hits
become the material 'snow' while snow_depth_m > 0.
"""

import math
from typing import Optional, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.optics import OpticsConfig
from ubot_lidar_sim.core.material_ids import MATERIAL_NAMES
from ubot_lidar_sim.core.physics.radiometry import pond_material
# The law constants live in a module without numba (describe states them).
from ubot_lidar_sim.core.physics.snow_laws import (  # noqa: F401
    GM_LAMBDA, GM_LAMBDA_EXP, GM_N0, GM_N0_EXP, SNOW_LAWS)

DB_PER_NEPER = 10.0 * math.log10(math.e)


def snow_db_per_km(snow_type: str, wavelength_nm: float, snowfall_mm_h: float) -> float:
    """Return the ITU-R snow attenuation a(lambda) S^b, dB/km (S <= 0: 0)."""
    slope, intercept, b = SNOW_LAWS[snow_type]
    s = float(snowfall_mm_h)
    return (slope * wavelength_nm + intercept) * s ** b if s > 0.0 else 0.0


def snow_extinction(air: AtmosphereConfig, optics: OpticsConfig, snowfall_mm_h: float,
                    wavelength_nm: Optional[float] = None) -> float:
    """Return the snow extinction coefficient at the laser (or a given) wavelength, 1/m."""
    lam = optics.wavelength_nm if wavelength_nm is None else wavelength_nm
    return float(snow_db_per_km(air.snow_type, lam, snowfall_mm_h)) / DB_PER_NEPER / 1000.0


def flake_slope_per_mm(snowfall_mm_h: float) -> float:
    """Return the Gunn-Marshall slope Lambda = 2.55 S^-0.48, 1/mm (melted diameter)."""
    return GM_LAMBDA * snowfall_mm_h ** GM_LAMBDA_EXP


def flakes_per_m3(snowfall_mm_h: float) -> float:
    """Return the Gunn-Marshall flake number density N0 / Lambda, 1/m^3 (0 without snow)."""
    if snowfall_mm_h <= 0.0:
        return 0.0
    return GM_N0 * snowfall_mm_h ** GM_N0_EXP / flake_slope_per_mm(snowfall_mm_h)


SNOW = MATERIAL_NAMES.index('snow')


def snow_material(material: ArrayLike, ground: ArrayLike,
                  snow_depth_m: float) -> NDArray[np.uint8]:
    """
    Return materials with ground hits turned into snow while snow_depth_m > 0 (a new uint8 array).

    Snow covers puddles too: apply after the pond rule.
    """
    m = np.array(material, dtype=np.uint8)
    if snow_depth_m > 0.0:
        m[np.broadcast_to(np.asarray(ground, dtype=bool), m.shape)] = SNOW
    return m


def ground_material(material: ArrayLike, ground: ArrayLike,
                    puddle_depth_m: Union[float, NDArray[np.float64]], pond_threshold_m: float,
                    snow_depth_m: float) -> NDArray[np.uint8]:
    """
    Return hits' materials under the weather (a new uint8 array): the one rule for ground hits.

    A ground hit is water where the puddle is deep enough (radiometry.pond_material), then snow
    while snow_depth_m > 0 (the cover hides the puddle too); other hits keep their material.
    """
    return snow_material(pond_material(material, ground, puddle_depth_m, pond_threshold_m),
                         ground, snow_depth_m)
