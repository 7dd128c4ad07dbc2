"""
Weather effects, registered in one place: what the air of a scan holds (docs/architecture.md).

An effect is a WeatherEffect: its name (its Medium's name), ``medium(*parts, weather)`` the
law that turns the scan's Weather into a Medium (atmosphere.py), the PhysicalModel parts it
takes (``parts``, in order: e.g. ('atmosphere', 'optics')), the Weather fields and config
parameters it reads, and its clutter hook: the random stream its granular or fluctuating draws
come from (random_streams.STREAMS; None: jumps of the shared clutter stream). ``atmosphere``
builds a scan's Atmosphere from the registered effects, in registration order, the residual
one (fog/haze: the rest of the visibility, ``medium(*parts, weather, explained_550_per_m)``)
last; the sensors take the clutter streams from ``clutter_streams``. A new effect is its module
and one ``register_effect`` call here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ubot_lidar_sim.core.config.physical_model import PhysicalModel
from ubot_lidar_sim.core.physics import dust, sunlight
from ubot_lidar_sim.core.physics.atmosphere import (Atmosphere, fog_medium, Medium, rain_medium,
                                                    snow_medium)
from ubot_lidar_sim.core.physics.weather import Weather


class WeatherEffect(NamedTuple):
    """One effect in the air: its law, the parts it takes, what it reads, its clutter stream."""

    name: str
    medium: Callable[..., Medium]
    weather_fields: tuple[str, ...]
    parameters: tuple[str, ...]
    stream: str | None = None
    residual: bool = False
    parts: tuple[str, ...] = ('atmosphere',)


EFFECTS: list[WeatherEffect] = []


def register_effect(name: str, medium: Callable[..., Medium], weather_fields: tuple[str, ...],
                    parameters: tuple[str, ...], stream: str | None = None,
                    residual: bool = False, parts: tuple[str, ...] = ('atmosphere',)) -> None:
    """
    Add an effect; its Medium follows those registered before it (a residual one: last).

    parts: the PhysicalModel parts medium takes before the Weather, in order.
    """
    if any(e.name == name for e in EFFECTS):
        raise ValueError(f'weather effect {name!r} is registered already')
    EFFECTS.append(WeatherEffect(name, medium, weather_fields, parameters, stream, residual,
                                 parts))


def effects() -> tuple[WeatherEffect, ...]:
    """Return the effects in the order their media enter an Atmosphere (residual ones last)."""
    return tuple(sorted(EFFECTS, key=lambda e: e.residual))


def atmosphere(model: PhysicalModel, weather: Weather) -> Atmosphere:
    """
    Return the scan's Atmosphere for a Weather (weather.scan_weather: overrides applied).

    model: the physical model (``cfg.physical_model``), whose parts each effect's law takes
    (WeatherEffect.parts) and whose radiometry gives the sunlight's background. The
    atmosphere's ``weather`` false gives clear air. A residual medium (fog/haze) is the
    visibility minus the part the media before it explain (the sum of their alpha_550_per_m).
    """
    if not model.atmosphere.weather:
        return Atmosphere()
    media: list[Medium] = []
    explained = 0.0     # summed in order from 0.0: the bits of a + b for two terms
    for effect in effects():
        parts = [getattr(model, part) for part in effect.parts]
        medium = (effect.medium(*parts, weather, explained) if effect.residual
                  else effect.medium(*parts, weather))
        explained += medium.alpha_550_per_m
        media.append(medium)
    sun = sunlight.background_counts(model.radiometry, weather.sun_illuminance_klx)
    return Atmosphere(tuple(media), background_counts=sun)


def clutter_streams(make_rng: Callable[[str], Any]) -> dict[str, Any]:
    """Return {medium name: make_rng(stream name)} for the effects with a stream of their own."""
    return {e.name: make_rng(e.stream) for e in effects() if e.stream is not None}


register_effect('rain', rain_medium, ('rain_mm_h',),
                ('rain_db_per_km', 'rain_exponent', 'rain_lidar_ratio_sr', 'rain_drops_per_m3',
                 'rain_drops_exponent', 'rain_visibility_model'))
register_effect('snow', snow_medium, ('snowfall_rate_mm_h',),
                ('snow_type', 'snow_lidar_ratio_sr', 'snow_flake_optics', 'wavelength_nm'),
                stream='snow', parts=('atmosphere', 'optics'))
register_effect('dust', dust.dust_medium, ('dust_ug_m3',), (), parts=())
register_effect('fog', fog_medium, ('visibility_m',),
                ('wavelength_nm', 'fog_lidar_ratio_sr', 'haze_lidar_ratio_sr',
                 'fog_droplet_visibility_m', 'fog_fluctuation_shape',
                 'fog_fluctuation_reference_m', 'rain_visibility_model'),
                stream='fog', residual=True, parts=('atmosphere', 'optics'))
