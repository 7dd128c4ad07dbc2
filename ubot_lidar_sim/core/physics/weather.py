"""
One scan's weather, the single value that carries it from an entrance to the physics.

The environment topic (``ros/conversions.environment_to_weather``), the CLI (``--rain``,
``--visibility``) and the core all build a ``Weather``; its validation holds the limits every
one of them applies, and ``weather_from`` names a refused value as the entrance calls it. A
sensor hands the Weather whole to the physics, so a new effect is a field here, not a new
argument along the pipeline.
"""

from dataclasses import dataclass, field, replace
import math
import re
from typing import Any, Mapping, Optional

import numpy as np

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.limits import (RAIN_ALLOWED, RAIN_MAX_MM_H, VISIBILITY_ALLOWED,
                                        VISIBILITY_MIN_M)
from ubot_lidar_sim.core.physics import radiometry

#: Limits of every entrance: RAIN_MAX_MM_H, VISIBILITY_MIN_M in core/limits.py, and these.
PUDDLE_MAX_M = 1.0
#: Snowfall, liquid-water equivalent: 10 mm/h is already a whiteout (visibility ~130 m).
SNOW_MAX_MM_H = 100.0
SNOW_DEPTH_MAX_M = 10.0
SMOKE_MAX_VOLUMES = 1024
#: Brightest sunlight accepted, klx: clear-sky noon sun is ~100-130 klx at the ground.
SUN_MAX_KLX = 200.0
SMOKE_RADIUS_MAX_M = 1000.0
#: Heaviest dust accepted, ug/m^3: 0.1 g/m^3 is a severe dust storm (visibility ~65 m).
DUST_MAX_UG_M3 = 1e5


def _number(name, value, allowed, lo=-math.inf, hi=math.inf, allow_inf=False):
    """Return value as a float in [lo, hi] (inf only with allow_inf), else raise ConfigError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(name, value, allowed) from None
    if not lo <= v <= hi or (math.isinf(v) and not allow_inf):
        raise ConfigError(name, value, allowed)
    return v


@dataclass(frozen=True, eq=False)
class Weather:
    """
    One scan's weather (the Environment message): rain, visibility, wetness, puddles, smoke.

    rain_mm_h 0 to RAIN_MAX_MM_H; visibility_m >= VISIBILITY_MIN_M or inf (clear; 550 nm, 2 %
    contrast, rain included); surface_wetness <= 1 (< 0: derive it from the rain);
    puddle_depth_m 0 to PUDDLE_MAX_M; snowfall_rate_mm_h 0 to SNOW_MAX_MM_H (liquid-water
    equivalent); snow_depth_m 0 to SNOW_DEPTH_MAX_M (> 0: ground is snow);
    smoke (K, 4) x, y, z, radius_m in the world frame and
    smoke_density (K,) 0-1, K <= SMOKE_MAX_VOLUMES. A refused value raises ConfigError naming
    the field; a smoke volume is named smoke[i].center, smoke[i].radius_m or smoke[i].density.
    sun_illuminance_klx 0 (dark, the default) to SUN_MAX_KLX: sunlight on the scene
    (physics/sunlight.py). dust_ug_m3 0 to DUST_MAX_UG_M3: airborne mineral dust, mass
    concentration (physics/dust.py).
    """

    rain_mm_h: float = 0.0
    visibility_m: float = math.inf
    surface_wetness: float = -1.0
    puddle_depth_m: float = 0.0
    smoke: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    smoke_density: np.ndarray = field(default_factory=lambda: np.zeros(0))
    snowfall_rate_mm_h: float = 0.0
    snow_depth_m: float = 0.0
    sun_illuminance_klx: float = 0.0
    dust_ug_m3: float = 0.0

    def __post_init__(self):
        def put(name, value):
            object.__setattr__(self, name, value)

        put('rain_mm_h', _number('rain_mm_h', self.rain_mm_h, RAIN_ALLOWED, 0.0, RAIN_MAX_MM_H))
        put('visibility_m', _number('visibility_m', self.visibility_m, VISIBILITY_ALLOWED,
                                    VISIBILITY_MIN_M, allow_inf=True))
        put('surface_wetness', _number('surface_wetness', self.surface_wetness,
                                       '0 to 1, or negative to derive it from the rain rate',
                                       hi=1.0))
        put('puddle_depth_m', _number('puddle_depth_m', self.puddle_depth_m,
                                      f'0 to {PUDDLE_MAX_M:g} m', 0.0, PUDDLE_MAX_M))
        put('snowfall_rate_mm_h', _number('snowfall_rate_mm_h', self.snowfall_rate_mm_h,
                                          f'0 to {SNOW_MAX_MM_H:g} mm/h', 0.0, SNOW_MAX_MM_H))
        put('snow_depth_m', _number('snow_depth_m', self.snow_depth_m,
                                    f'0 to {SNOW_DEPTH_MAX_M:g} m', 0.0, SNOW_DEPTH_MAX_M))
        put('sun_illuminance_klx', _number('sun_illuminance_klx', self.sun_illuminance_klx,
                                           f'0 to {SUN_MAX_KLX:g} klx', 0.0, SUN_MAX_KLX))
        put('dust_ug_m3', _number('dust_ug_m3', self.dust_ug_m3,
                                  f'0 to {DUST_MAX_UG_M3:g} ug/m^3', 0.0, DUST_MAX_UG_M3))
        smoke = np.asarray(self.smoke, dtype=np.float64).reshape(-1, 4)
        density = np.asarray(self.smoke_density, dtype=np.float64).reshape(-1)
        _check_smoke(smoke, density)
        put('smoke', smoke)
        put('smoke_density', density)

    @property
    def wetness(self) -> float:
        """Return the surface wetness to use, 0-1 (derived from the rain when negative)."""
        return radiometry.surface_wetness(self.surface_wetness, self.rain_mm_h)

    def describe(self) -> str:
        """Return the weather in a few words ('rain 4.0 mm/h, visibility 600 m'; 'clear')."""
        words = []
        if self.rain_mm_h > 0.0:
            words.append(f'rain {self.rain_mm_h:.1f} mm/h')
        if math.isfinite(self.visibility_m):
            words.append(f'visibility {self.visibility_m:.0f} m')
        if self.surface_wetness >= 0.0:
            words.append(f'wetness {self.surface_wetness:.2f}')
        if self.puddle_depth_m > 0.0:
            words.append(f'puddles {self.puddle_depth_m * 1000.0:.0f} mm')
        if self.snowfall_rate_mm_h > 0.0:
            words.append(f'snow {self.snowfall_rate_mm_h:.1f} mm/h')
        if self.snow_depth_m > 0.0:
            words.append(f'snow cover {self.snow_depth_m * 100.0:.0f} cm')
        if self.sun_illuminance_klx > 0.0:
            words.append(f'sun {self.sun_illuminance_klx:g} klx')
        if self.dust_ug_m3 > 0.0:
            words.append(f'dust {self.dust_ug_m3:g} ug/m^3')
        if len(self.smoke):
            words.append(f'{len(self.smoke)} smoke volume{"s" if len(self.smoke) > 1 else ""}')
        return ', '.join(words) or 'clear'


def _check_smoke(smoke, density):
    """Raise ConfigError for too many volumes, a count mismatch or the first bad volume."""
    n = smoke.shape[0]
    if n > SMOKE_MAX_VOLUMES:
        raise ConfigError('smoke', f'{n} volumes', f'at most {SMOKE_MAX_VOLUMES}')
    if density.shape[0] != n:
        raise ConfigError('smoke_density', density.shape[0], f'{n} values')
    bad_centre = ~np.all(np.isfinite(smoke[:, :3]), axis=1)
    bad_radius = ~((smoke[:, 3] > 0.0) & (smoke[:, 3] <= SMOKE_RADIUS_MAX_M))
    bad_density = ~((density >= 0.0) & (density <= 1.0))
    bad = np.flatnonzero(bad_centre | bad_radius | bad_density)
    if bad.size == 0:
        return
    i = int(bad[0])
    if bad_centre[i]:
        raise ConfigError(f'smoke[{i}].center', smoke[i, :3].tolist(), 'finite x, y, z')
    if bad_radius[i]:
        raise ConfigError(f'smoke[{i}].radius_m', float(smoke[i, 3]),
                          f'> 0 and <= {SMOKE_RADIUS_MAX_M:g}')
    raise ConfigError(f'smoke[{i}].density', float(density[i]), '0 to 1')


def weather_from(names: Mapping[str, str], **values: Any) -> Weather:
    """
    Return Weather(**values); a refused value's ConfigError names it as the caller does.

    names maps a Weather field to the caller's name ({'rain_mm_h': '--rain'}); a smoke volume's
    'smoke[i].radius_m' maps through 'smoke'. Fields not in names keep their own name.
    """
    try:
        return Weather(**values)
    except ConfigError as err:
        own = re.match(r'\w+', err.name).group()
        raise ConfigError(names.get(own, own) + err.name[len(own):], err.value,
                          err.allowed) from None


def scan_weather(air: AtmosphereConfig, weather: Optional[Weather] = None) -> Weather:
    """
    Return the weather a scan simulates: ``weather`` (None: clear, dry) with the overrides.

    air.rain_override_mm_h, air.visibility_override_m and air.sun_override_klx win when >= 0.
    """
    weather = Weather() if weather is None else weather
    changes = {}
    if air.rain_override_mm_h >= 0.0:
        changes['rain_mm_h'] = air.rain_override_mm_h
    if air.visibility_override_m >= 0.0:
        changes['visibility_m'] = air.visibility_override_m
    if air.sun_override_klx >= 0.0:
        changes['sun_illuminance_klx'] = air.sun_override_klx
    return replace(weather, **changes) if changes else weather
