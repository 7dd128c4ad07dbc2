"""
The air along the beams (docs/physics-weather.md): extinction and backscatter.

Each scatterer is a Medium with its extinction alpha and backscatter beta at the laser
wavelength. Rain from the Carbonneau (1998) law, backscatter from its lidar ratio and drops from
Marshall-Palmer drops (particles.py); fog/haze from the visibility (Koschmieder) minus the part the
precipitation explains, scaled to the laser wavelength with Kim et al. (2001). Each effect's
(parts, Weather) -> Medium is registered in weather_effects.py, which builds a scan's Atmosphere;
clutter.py draws its returns.
Snow: the ITU-R snow law, Gunn-Marshall flakes and a faceted-ice lidar ratio (snow.py).
"""

from dataclasses import dataclass
import logging
import math
from typing import Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.config.atmosphere import AtmosphereConfig
from ubot_lidar_sim.core.config.optics import OpticsConfig
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics import fog_microphysics
from ubot_lidar_sim.core.physics import particles
from ubot_lidar_sim.core.physics import snow
from ubot_lidar_sim.core.physics.weather import Weather

_LOG = logging.getLogger(__name__)
DB_PER_NEPER = 10.0 * math.log10(math.e)  # 4.343 dB per neper
KOSCHMIEDER = 3.912  # -ln(0.02): 2 % contrast visibility
_clamp_warned = False


def rain_extinction(air: AtmosphereConfig, rain_mm_h: ArrayLike) -> Union[float, np.ndarray]:
    """Return alpha = rain_db_per_km R^rain_exponent / 4.343 / 1000, 1/m (R <= 0: 0)."""
    r = np.asarray(rain_mm_h, dtype=np.float64)
    out = air.rain_db_per_km * np.maximum(r, 0.0) ** air.rain_exponent / DB_PER_NEPER / 1000.0
    return np.where(r > 0, out, 0.0) if out.ndim else float(out if r > 0 else 0.0)


def kim_q(visibility_km: float) -> float:
    """Return the Kim, McArthur & Korevaar (2001) exponent q for a visibility in km."""
    v = float(visibility_km)
    if v > 50.0:
        return 1.6
    if v > 6.0:
        return 1.3
    if v > 1.0:
        return 0.16 * v + 0.34
    if v > 0.5:
        return v - 0.5
    return 0.0


def rain_part_550(air: AtmosphereConfig, rain_mm_h: float) -> float:
    """
    Return the rain part of the 550 nm extinction the visibility contains, 1/m.

    'rain_law' (default): the same law as rain_extinction (drops are large, extinction is
    wavelength-neutral). 'acres': V_rain = 11.1 km R^-0.63 (docs/physics-weather.md, "Fog and
    haze").
    """
    if rain_mm_h <= 0.0:
        return 0.0
    if air.rain_visibility_model == 'acres':
        return KOSCHMIEDER / (11100.0 * rain_mm_h ** -0.63)
    return float(rain_extinction(air, rain_mm_h))


def fog_residual_550(visibility_m: float, precipitation_550_per_m: float = 0.0) -> float:
    """
    Return the fog/haze part of the 550 nm extinction, 3.912 / V minus its precipitation, 1/m.

    precipitation_550_per_m: the part of the visibility the precipitation explains (the sum of
    the precipitation media's alpha_550_per_m). Clamped at >= 0; a clamp beyond rounding (the
    visibility is clearer than the precipitation alone implies) is logged once per process.
    """
    global _clamp_warned
    if not math.isfinite(visibility_m):
        return 0.0
    total = KOSCHMIEDER / max(visibility_m, 1e-3)
    residual = total - precipitation_550_per_m
    if residual < -1e-9 * total and not _clamp_warned:
        _LOG.warning('visibility %.0f m is clearer than the precipitation alone implies '
                     '(%.3g /km); fog/haze extinction clamped to 0', visibility_m,
                     precipitation_550_per_m * 1000.0)
        _clamp_warned = True
    return residual if residual > 1e-12 * total else 0.0


def fog_extinction(optics: OpticsConfig, visibility_m: float,
                   precipitation_550_per_m: float = 0.0) -> float:
    """
    Return the fog/haze extinction at the laser wavelength, 1/m (0 for infinite visibility).

    fog_residual_550 scaled by (wavelength / 550 nm)^-q, q of the fog/haze-only visibility.
    """
    residual = fog_residual_550(visibility_m, precipitation_550_per_m)
    if residual <= 0.0:
        return 0.0
    q = kim_q(KOSCHMIEDER / residual / 1000.0)
    return residual * (optics.wavelength_nm / 550.0) ** -q


def fog_lidar_ratio(air: AtmosphereConfig, fog_visibility_m: float) -> float:
    """Return the fog/haze lidar ratio, sr, continuous in the visibility (fog_microphysics)."""
    return fog_microphysics.lidar_ratio(air, fog_visibility_m)


def droplet_backscatter_share(air: AtmosphereConfig, fog_visibility_m: float) -> float:
    """
    Return the share of the fog/haze backscatter from fog droplets (fog_microphysics).

    Only this part fluctuates from pulse to pulse (docs/physics-weather.md).
    """
    return fog_microphysics.droplet_backscatter_share(air, fog_visibility_m)


def drop_density(air: AtmosphereConfig, rain_mm_h: float) -> float:
    """Return the raindrop density rain_drops_per_m3 R^rain_drops_exponent, 1/m^3 (0 dry)."""
    return air.rain_drops_per_m3 * rain_mm_h ** air.rain_drops_exponent if rain_mm_h > 0 else 0.0


@dataclass(frozen=True)
class Medium:
    """
    One scatterer in the air at the laser wavelength.

    alpha_per_m extinction, 1/m; beta_per_m_sr backscatter, 1/(m sr); granular: discrete
    particles (drops, flakes) of number density particles_per_m3, drawn one by one in the beam
    volume (particles.py), else a continuous medium (fog, haze); alpha_550_per_m its part of
    the 550 nm extinction the visibility contains (precipitation only: the fog/haze term is the
    rest); slope_per_mm the Lambda of the exponential melted-diameter distribution; particle
    the kind of particle ('drop', or the snow_type 'dry' / 'wet'); fluctuating_share the share
    of a continuous medium's backscatter that fluctuates from pulse to pulse (fog droplets);
    fluctuation_shape the gamma shape k of that fluctuation (0: none).
    """

    name: str
    alpha_per_m: float = 0.0
    beta_per_m_sr: float = 0.0
    granular: bool = False
    particles_per_m3: float = 0.0
    alpha_550_per_m: float = 0.0
    slope_per_mm: float = 0.0
    particle: str = 'drop'
    fluctuating_share: float = 0.0
    fluctuation_shape: float = 0.0


@dataclass(frozen=True)
class Atmosphere:
    """The media of one scan (precipitation first, fog/haze last) and the class of clutter."""

    media: Tuple[Medium, ...] = ()
    clutter_class: int = PRECIPITATION_CLASS
    #: The scan's shot-noise background, counts (physics/sunlight.py; None: ambient_counts).
    background_counts: Optional[float] = None

    @property
    def alpha(self) -> float:
        """Return the total extinction coefficient, 1/m."""
        return _sum(m.alpha_per_m for m in self.media)

    @property
    def beta(self) -> float:
        """Return the total backscatter coefficient, 1/(m sr)."""
        return _sum(m.beta_per_m_sr for m in self.media)

    @property
    def active(self) -> bool:
        """Return True when there is anything in the air to simulate."""
        return self.alpha > 0.0 or any(m.beta_per_m_sr > 0.0 for m in self.media)

    def medium(self, name: str) -> Medium:
        """Return the medium called name (an empty one when the scan has none)."""
        return next((m for m in self.media if m.name == name), Medium(name))

    def two_way_transmission(self, range_m: ArrayLike) -> NDArray[np.float64]:
        """Return exp(-2 alpha R) (shape of range_m, m): the loss out to R and back."""
        return np.exp(-2.0 * self.alpha * np.asarray(range_m, dtype=np.float64))


def _sum(values):
    """Sum floats in order from 0.0 (the bits of a + b for two terms)."""
    total = 0.0
    for v in values:
        total += v
    return total


# The media laws take the parts they read: rain the atmosphere, fog and snow the atmosphere and
# the optics (the wavelength); weather_effects.py's registry names them per effect.
def rain_medium(air: AtmosphereConfig, weather: Weather) -> Medium:
    """Return the rain Medium: Carbonneau extinction, lidar-ratio backscatter, drop density."""
    rain = weather.rain_mm_h
    alpha = float(rain_extinction(air, rain))
    n = drop_density(air, rain)
    # Marshall-Palmer: n = N0 / Lambda with N0 fixed, so Lambda = N0 / n.
    return Medium('rain', alpha, alpha / air.rain_lidar_ratio_sr, True, n,
                  rain_part_550(air, rain), particles.MP_N0 / n if n > 0.0 else 0.0, 'drop')


def fog_medium(air: AtmosphereConfig, optics: OpticsConfig, weather: Weather,
               precipitation_550_per_m: float = 0.0) -> Medium:
    """Return the fog/haze Medium: what the visibility holds beyond the precipitation."""
    residual = fog_residual_550(weather.visibility_m, precipitation_550_per_m)
    alpha = fog_extinction(optics, weather.visibility_m, precipitation_550_per_m)
    fog_vis = KOSCHMIEDER / residual if residual > 0 else math.inf
    if alpha <= 0.0:
        return Medium('fog', alpha, 0.0)
    return Medium('fog', alpha, alpha / fog_lidar_ratio(air, fog_vis),
                  fluctuating_share=droplet_backscatter_share(air, fog_vis),
                  fluctuation_shape=fog_microphysics.fluctuation_shape(air, fog_vis))


def snow_medium(air: AtmosphereConfig, optics: OpticsConfig, weather: Weather) -> Medium:
    """Return the snow Medium: ITU-R extinction, faceted-ice lidar ratio, Gunn-Marshall flakes."""
    rate = weather.snowfall_rate_mm_h
    alpha = snow.snow_extinction(air, optics, rate)
    alpha_550 = snow.snow_extinction(air, optics, rate, 550.0)
    return Medium('snow', alpha, alpha / air.snow_lidar_ratio_sr, True,
                  snow.flakes_per_m3(rate), alpha_550,
                  snow.flake_slope_per_mm(rate) if rate > 0.0 else 0.0, air.snow_type)
