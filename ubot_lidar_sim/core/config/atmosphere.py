"""The weather along the beam (rain, fog, haze, snow, smoke): a part of PhysicalModel."""

from dataclasses import dataclass

from ubot_lidar_sim.core.config.fields import parameter as _p, Validated
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.limits import RAIN_MAX_MM_H, VISIBILITY_ALLOWED, VISIBILITY_MIN_M


@dataclass(frozen=True)
class AtmosphereConfig(Validated):
    """Rain, fog, haze, snow and smoke laws, their clutter, the weather overrides."""

    pond_threshold_m: float = _p(0.003, 'Standing water deeper than this turns ground into '
                                 'water.', 'm', min=0.0, max=1.0)
    weather: bool = _p(True, 'Rain and fog along the beam (extinction, clutter).')
    rain_db_per_km: float = _p(1.076, 'Rain law coefficient a of a R^b dB/km (Carbonneau 1998).',
                               'dB/km', min=0.0, max=100.0)
    rain_exponent: float = _p(0.67, 'Rain law exponent b (Carbonneau 1998).', min=0.0, max=2.0)
    rain_visibility_model: str = _p('rain_law', 'Rain part of the visibility removed before the '
                                    'fog term: rain_law (the same law) or '
                                    'acres (11.1 km R^-0.63).',
                                    choices=('rain_law', 'acres'))
    fog_lidar_ratio_sr: float = _p(18.8, "Lidar ratio of fog droplets (O'Connor et al. 2004).",
                                   'sr', min=1.0, max=200.0)
    fog_fluctuation_shape: float = _p(4.0, 'Shape k of the gamma pulse-to-pulse factor on the '
                                      "fog droplets' backscatter (mean 1, coefficient of "
                                      'variation 1 / sqrt(k); estimate; haze aerosol is '
                                      'steady, docs/physics-weather.md); 0 = none.',
                                      min=0.0, max=1e6)
    # Fog and haze microphysics (core/physics/fog_microphysics.py).
    fog_droplet_visibility_m: float = _p(1000.0, 'Fog/haze-only visibility above which no fog '
                                         'droplets remain (WMO: fog < 1 km); droplet share of '
                                         'the extinction 1 - (V / this)^2.', 'm',
                                         min=1.0, max=1e5)
    fog_fluctuation_reference_m: float = _p(12.0, 'Visibility where the gamma shape of the '
                                            "droplets' backscatter is fog_fluctuation_shape; "
                                            'k = shape x this / V (estimate).', 'm',
                                            min=1.0, max=1e5)
    haze_lidar_ratio_sr: float = _p(60.0, 'Lidar ratio of continental haze (Mueller et al. '
                                    '2007: 50-70 sr).', 'sr', min=1.0, max=200.0)
    rain_lidar_ratio_sr: float = _p(220.0, 'Lidar ratio of rain (Mie, water spheres 30 mrad '
                                    'from backscatter; bounds 4 sr (glory) and 1266 sr '
                                    '(Fresnel only), docs/physics-weather.md).', 'sr',
                                    min=1.0, max=2000.0)
    snow_type: str = _p('dry', 'ITU-R P.1817 snow law: dry or wet snow coefficients.',
                        choices=('dry', 'wet'))
    # Flake optics (core/physics/snow_optics.py).
    snow_flake_optics: str = _p('area_law', "Flakes' optical area: area_law (Mitchell 1996 "
                                'aggregates, A = 0.2285 D^1.88 cgs, rate-independent) or '
                                'itu_matched (disc x the ratio matching the ITU-R extinction).',
                                choices=('area_law', 'itu_matched'))
    snow_lidar_ratio_sr: float = _p(29.0, 'Lidar ratio of snow flakes (faceted ice, cirrus '
                                    'mean of Chen et al. 2002).', 'sr', min=1.0, max=2000.0)
    rain_drops_per_m3: float = _p(1951.2, 'Drop density N = this x R^rain_drops_exponent '
                                  '(Marshall-Palmer N0/Lambda = 8000/4.1).', '1/m^3',
                                  min=0.0, max=1e6)
    rain_drops_exponent: float = _p(0.21, 'Exponent of the drop density law.', min=0.0, max=2.0)
    clutter_max_range_m: float = _p(10.0, 'Rain, snow and fog clutter is simulated up to this '
                                    'range.', 'm', min=0.0, max=1000.0)
    rain_override_mm_h: float = _p(-1.0, 'Rain rate override, < 0 = use the environment.',
                                   'mm/h', min=-1.0, max=RAIN_MAX_MM_H)
    visibility_override_m: float = _p(-1.0, 'Visibility override (inf = clear), < 0 = use the '
                                      'environment.', 'm', min=-1.0, allow_inf=True)
    sun_override_klx: float = _p(-1.0, 'Sunlight override, < 0 = use the environment.', 'klx',
                                 min=-1.0, max=200.0)
    smoke_enabled: bool = _p(True, 'Smoke volumes stop the rays.')
    smoke_cell_radius_scale: float = _p(1.0, 'Scale of the smoke cell radius.', min=0.01,
                                        max=100.0)
    smoke_density_threshold: float = _p(0.05, 'Smoke cells with lower effective density are '
                                        'ignored.', min=0.0, max=1.0)
    smoke_visibility_m: float = _p(5.0, 'Meteorological visibility inside smoke of density 1 '
                                   '(density d: this / d); sets the extinction of smoke around '
                                   'the sensor (docs/physics.md, "Smoke").', 'm',
                                   min=0.1, max=1000.0)

    def _check_cross(self) -> None:
        super()._check_cross()
        # An override in use must be a weather the environment could send (Weather's limits).
        if 0.0 <= self.visibility_override_m < VISIBILITY_MIN_M:
            raise ConfigError('visibility_override_m', self.visibility_override_m,
                              VISIBILITY_ALLOWED)
