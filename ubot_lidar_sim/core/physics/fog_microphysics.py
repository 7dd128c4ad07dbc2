"""
Fog and haze as one medium, continuous in the extinction (issue 42; docs/physics-weather.md).

The fog/haze extinction is shared between activated fog droplets and haze aerosol. The droplet
share d falls continuously with the fog/haze-only visibility V: d = 1 - (V / V_fog)^2 for
V < V_fog, 0 beyond. V_fog = ``fog_droplet_visibility_m`` (1 km: fog is the droplets that bring the
visibility below 1 km, WMO International Meteorological Vocabulary, WMO-No. 182, and WMO-No. 8,
Guide to Instruments and Methods of Observation, ch. 9); the quadratic form between is an
estimate (no source found gives the droplet share against the visibility; chosen so that the
clutter share has no step above 3x on the issue's visibility grid, docs/physics-weather.md).
The backscatter adds the two species' extinction over their lidar ratios (droplets 18.8 sr,
O'Connor et al. 2004; haze 50-70 sr, Mueller et al. 2007):

    beta = alpha (d / LR_fog + (1 - d) / LR_haze),

so the lidar ratio moves smoothly from 18.8 sr in dense fog to 60 sr in haze, instead of the
switch between 0.5 and 1 km of round 3.

Only the droplets' backscatter fluctuates from pulse to pulse (haze aerosol is steady). Its
gamma factor G ~ Gamma(k, 1 / k) (mean 1) widens as the fog thins: k = k_ref V_ref / V, so the
variance 1 / k grows with the visibility (thin fog is patchy at the sub-kilometre scale:
Lestringant & Bergot 2021, Atmosphere 12, 1406, about half of the fogs at Paris-CdG thin and
heterogeneous; dense fog is homogeneous). k_ref = ``fog_fluctuation_shape`` at V_ref =
``fog_fluctuation_reference_m``: both estimates.
"""

import math

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig


def droplet_extinction_share(air: AtmosphereConfig, fog_visibility_m: float) -> float:
    """Return d, the fog droplets' share of the fog/haze extinction: 1 - (V / V_fog)^2, >= 0."""
    if not math.isfinite(fog_visibility_m):
        return 0.0
    return max(1.0 - (fog_visibility_m / air.fog_droplet_visibility_m) ** 2, 0.0)


def lidar_ratio(air: AtmosphereConfig, fog_visibility_m: float) -> float:
    """Return the fog/haze lidar ratio 1 / (d / LR_fog + (1 - d) / LR_haze), sr."""
    d = droplet_extinction_share(air, fog_visibility_m)
    return 1.0 / (d / air.fog_lidar_ratio_sr + (1.0 - d) / air.haze_lidar_ratio_sr)


def droplet_backscatter_share(air: AtmosphereConfig, fog_visibility_m: float) -> float:
    """Return the droplets' share of the fog/haze backscatter, (d / LR_fog) x lidar ratio."""
    d = droplet_extinction_share(air, fog_visibility_m)
    if d == 0.0:
        return 0.0
    return d / air.fog_lidar_ratio_sr * lidar_ratio(air, fog_visibility_m)


def fluctuation_shape(air: AtmosphereConfig, fog_visibility_m: float) -> float:
    """Return k of the droplets' gamma factor: fog_fluctuation_shape x V_ref / V (0 = none)."""
    if air.fog_fluctuation_shape <= 0.0 or not math.isfinite(fog_visibility_m):
        return 0.0
    return air.fog_fluctuation_shape * air.fog_fluctuation_reference_m / fog_visibility_m
