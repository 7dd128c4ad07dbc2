"""
The demo's scenario without ROS: the driver's config, the loop it drives and the weather phases.

``DemoDriverConfig`` is the demo_driver node's parameters (one field each, declared by
ros/params.py like the sensors' configs). The rain comes with the visibility the sensors
expect of it: the rain part is the physics' own law (core/physics/atmosphere.rain_part_550),
so the sensors derive no extra fog from it.
"""

from dataclasses import dataclass
import math

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.config.fields import parameter as _p
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.motion.config import SensorMounts
from ubot_lidar_sim.core.physics.atmosphere import KOSCHMIEDER, rain_part_550
from ubot_lidar_sim.core.physics.snow import snow_extinction
from ubot_lidar_sim.core.physics.weather import RAIN_MAX_MM_H, SNOW_DEPTH_MAX_M, SNOW_MAX_MM_H

PHASES = ('clear', 'rain', 'fog', 'smoke', 'snow')
# The rain law of the sensors' default model (rain_db_per_km, rain_exponent).
_RAIN_MODEL = LidarConfig()


@dataclass(frozen=True)
class DemoDriverConfig(SensorMounts):
    """Parameters of the demo_driver node; speed_m_s and weather_cycle may change as it runs."""

    world_frame: str = _p('map', 'World (ground-truth) frame, parent of odom.', read_only=True,
                          nonempty=True)
    odom_frame: str = _p('odom', 'Odometry frame.', read_only=True, nonempty=True)
    base_frame: str = _p('base_link', 'Vehicle base frame.', read_only=True, nonempty=True)
    lidar_frame: str = _p('lidar_3d', 'Frame of the 3D LiDAR.', read_only=True, nonempty=True)
    laser_frame: str = _p('laser', 'Frame of the 2D laser scanner.', read_only=True,
                          nonempty=True)
    speed_m_s: float = _p(2.0, 'Speed along the loop.', 'm/s', min=0.0, max=20.0)
    loop_radius_m: float = _p(12.0, 'Radius of the loop.', 'm', min=0.5, max=1000.0,
                              read_only=True)
    loop_center_m: tuple = _p((0.0, 0.0), 'Centre of the loop in world_frame (x, y).', 'm',
                              item_type=float, length=2, read_only=True)
    base_height_m: float = _p(0.4, 'Height of base_link above z = 0 of the world.', 'm',
                              min=-100.0, max=100.0, read_only=True)
    tf_rate_hz: float = _p(50.0, 'Rate of /tf.', 'Hz', min=1.0, max=1000.0, read_only=True)
    weather_cycle: bool = _p(True, 'Publish the weather cycle on /environment; false: no '
                             'environment message at all (publish your own weather).')
    environment_rate_hz: float = _p(5.0, 'Rate of environment updates.', 'Hz', min=0.1,
                                    max=100.0, read_only=True)
    rain_haze_visibility_m: float = _p(20000.0, 'Visibility of the haze that comes with the '
                                       'rain (the rain adds its own extinction).', 'm',
                                       min=1.0, max=1.0e9, read_only=True)
    phase_durations_s: tuple = _p((5.0, 5.0, 5.0, 5.0, 5.0),
                                  'Durations of the clear, rain, fog, smoke, snow phases.', 's',
                                  item_type=float, length=5, min=0.0, read_only=True)
    rain_max_mm_h: float = _p(25.0, 'Rain rate reached in the rain phase.', 'mm/h', min=0.0,
                              max=RAIN_MAX_MM_H, read_only=True)
    fog_min_visibility_m: float = _p(50.0, 'Visibility reached in the fog phase.', 'm',
                                     min=1.0, max=1.0e6, read_only=True)
    snow_max_mm_h: float = _p(5.0, 'Snowfall (liquid-water equivalent) reached in the snow '
                              'phase.', 'mm/h', min=0.0, max=SNOW_MAX_MM_H, read_only=True)
    snow_depth_m: float = _p(0.05, 'Snow on the ground during the snow phase.', 'm', min=0.0,
                             max=SNOW_DEPTH_MAX_M, read_only=True)
    smoke_radius_m: float = _p(2.0, 'Radius of each smoke puff.', 'm', min=0.01, max=100.0,
                               read_only=True)
    smoke_density: float = _p(0.6, 'Density of the smoke puffs, 0-1.', min=0.0, max=1.0,
                              read_only=True)

    def _check_cross(self):
        if sum(self.phase_durations_s) <= 0.0:
            raise ConfigError('phase_durations_s', list(self.phase_durations_s),
                              '5 values >= 0 with a positive sum')


def phase_text(phase, weather):
    """Return 'phase: <Weather.describe()>', or the phase alone before any weather."""
    return phase if weather is None else f'{phase}: {weather.describe()}'


def loop_pose(t_s, radius_m, speed_m_s, center_xy=(0.0, 0.0)):
    """Return (x_m, y_m, yaw_rad) on the counter-clockwise loop at time t_s, heading tangent."""
    phi = speed_m_s * t_s / radius_m - math.pi / 2.0
    x = center_xy[0] + radius_m * math.cos(phi)
    y = center_xy[1] + radius_m * math.sin(phi)
    return x, y, phi + math.pi / 2.0


def rain_visibility_m(rain_mm_h, haze_visibility_m=math.inf, snow_mm_h=0.0):
    """
    Return the 2 % contrast visibility (m) of rain and snow plus a haze (inf when all clear).

    The extinctions add: 3.912 / V = rain part + snow part (the sensors' laws at 550 nm) +
    3.912 / haze. A little haze keeps the fog part the sensors derive (visibility minus the
    precipitation) from rounding below zero.
    """
    alpha_per_m = (KOSCHMIEDER / haze_visibility_m
                   + rain_part_550(_RAIN_MODEL.atmosphere, rain_mm_h)
                   + snow_extinction(_RAIN_MODEL.atmosphere, _RAIN_MODEL.optics, snow_mm_h, 550.0))
    return KOSCHMIEDER / alpha_per_m if alpha_per_m > 0.0 else math.inf


def scenario_at(t_s, durations_s, rain_max_mm_h, fog_min_visibility_m, fog_start_m=2000.0,
                rain_haze_visibility_m=20000.0, snow_max_mm_h=0.0):
    """
    Return (phase, rain_mm_h, visibility_m, fraction, snow_mm_h) of the scenario at t_s.

    durations_s: 5 phase lengths, s (clear, rain, fog, smoke, snow); fraction is 0-1 within the
    phase. Rain ramps linearly 0 -> rain_max_mm_h, snow likewise to snow_max_mm_h; fog
    visibility falls geometrically from fog_start_m to fog_min_visibility_m, reaching the
    minimum half way and holding it; rain and snow come with a light haze of
    rain_haze_visibility_m.
    """
    cycle = sum(durations_s)
    t = t_s % cycle
    for phase, length in zip(PHASES, durations_s):
        if t < length or phase == PHASES[-1]:
            break
        t -= length
    frac = min(max(t / length, 0.0), 1.0) if length > 0 else 1.0
    rain = snow = 0.0
    vis = math.inf
    if phase == 'rain':
        rain = rain_max_mm_h * min(1.0, frac / 0.75)
        vis = rain_visibility_m(rain, rain_haze_visibility_m)
    elif phase == 'snow':
        snow = snow_max_mm_h * min(1.0, frac / 0.75)
        vis = rain_visibility_m(0.0, rain_haze_visibility_m, snow)
    elif phase == 'fog':
        k = min(1.0, frac / 0.5)
        vis = fog_start_m * (fog_min_visibility_m / fog_start_m) ** k
    return phase, rain, vis, frac, snow
