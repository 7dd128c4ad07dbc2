"""
The sun's direction: what a beam sees sets its background (hand values).

Hand model (docs/physics.md, "Sunlight"): the OS1 presets' solar response is 3.554 counts per
klx over 20 dark counts, calibrated on a 10 % target lit face-on. With the world's sun
direction s, a beam whose first solid surface (reflectance rho, normal n towards the sensor) is
lit at cos theta_s = max(0, -n . s) has A = 20 + 355.4 x rho cos theta_s / 0.1 at 100 klx, and a
beam into the sky A = 20 + 355.4 x 0.165 / 0.1 = 606.4 counts (Erbs et al. 1982's clear-sky
diffuse fraction). A wall of rho 0.3 ('other') facing the sensor, the sun 45 deg above the
horizon behind the sensor: cos theta_s = 0.7071, A = 773.9 counts; the sun behind the wall:
A = 20. Without a direction every beam has A = 375.4 (test/core/physics/test_sunlight.py).
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import from_dict, LidarConfig
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.core.physics import sunlight
from ubot_lidar_sim.core.physics.return_selection import FLAG_FALSE_ALARM
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

SUN = Weather(sun_illuminance_klx=100.0)
K_SUN = 355.4                           # 3.554 counts/klx x 100 klx (rounded as the preset)


@pytest.fixture(scope='module')
def os1():
    return from_dict(LidarConfig, {**load_preset('ouster_os1_64'), 'seed': 5})


def _world(direction=None):
    data = {'frame': 'map', 'objects': [
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 40, 40], 'pose': {'xyz': [10.1, 0, 0]},
         'material': 'other'}]}
    if direction is not None:
        data['sun'] = {'direction': direction}
    return World.from_dict(data, materials=MaterialTable.load(None))


def _backgrounds(cfg, world):
    """Return the background of a beam at the wall (+x) and one into the sky (+z)."""
    o = np.zeros((2, 3))
    d = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    hits = world.trace(o, d, 200.0, with_normals=True)
    return sunlight.beam_background(cfg.radiometry, SUN, world, MaterialTable.load(None), hits,
                                    d, 1, ~np.asarray(hits.foliage, bool))


def test_a_world_sun_entry_is_a_unit_direction_and_a_zero_one_is_refused_in_one_line():
    # bound: 3/5 and 4/5 of a float64 normalisation, within a few ulp of 1
    np.testing.assert_allclose(_world([3.0, 0.0, -4.0]).sun_direction, [0.6, 0.0, -0.8],
                               rtol=0, atol=1e-15)
    assert World.from_dict({'frame': 'map', 'objects': []}).sun_direction is None
    with pytest.raises(WorldError, match='sun.direction') as err:
        _world([0.0, 0.0, 0.0])
    assert '\n' not in str(err.value)


def test_without_a_direction_every_beam_has_the_isotropic_background(os1):
    # bound: the preset's 3.554 is rounded to 4 digits (5e-4 x 100 klx)
    assert _backgrounds(os1, _world()) == pytest.approx(20.0 + K_SUN, abs=0.05)


def test_a_wall_lit_at_45_deg_and_the_sky_give_the_hand_backgrounds(os1):
    a = _backgrounds(os1, _world([1.0, 0.0, -1.0]))
    # bound: the preset's rounding (5e-4 x 100 klx x g, g <= 2.13) and the float32 normal
    np.testing.assert_allclose(a, [20.0 + K_SUN * 0.3 * math.sqrt(0.5) / 0.1,
                                   20.0 + K_SUN * 0.165 / 0.1], rtol=0, atol=0.15)


def test_a_wall_in_its_own_shadow_has_the_dark_background_and_the_sky_keeps_its_own(os1):
    a = _backgrounds(os1, _world([-1.0, 0.0, -1.0]))
    # bound: the preset's rounding (5e-4 x 100 klx x g, g <= 1.65) and the float32 normal
    np.testing.assert_allclose(a, [20.0, 20.0 + K_SUN * 0.165 / 0.1], rtol=0, atol=0.15)


def test_the_sweep_uses_the_direction_sky_beams_alarm_at_the_sky_background(os1):
    # An empty world with a sun: every beam looks into the sky, A = 606.4 counts.
    materials = MaterialTable.load(None)
    world = World.from_dict({'frame': 'map', 'objects': [], 'sun': {'direction': [1, 0, -1]}},
                            materials=materials)
    pts = LidarSimulator(os1, world, materials).scan(
        BodyTwist(pose_matrix_deg([0.0, 0.0, 1.5], [0.0, 0.0, 0.0])), 0.0, SUN).points
    p = 0.5 * math.erfc(os1.detection_threshold_counts / math.sqrt(2.0 * (20.0 + 1.65 * K_SUN)))
    q = 1.0 - (1.0 - p) ** 158
    n = 64 * 1024
    assert np.all(pts['return_flags'] & FLAG_FALSE_ALARM)
    # Binomial(N, q) within 5 sigma; the isotropic background (q = 0.0157) is 116 sigma away.
    assert abs(pts.size - n * q) <= 5.0 * math.sqrt(n * q * (1.0 - q))


SDF = """<?xml version="1.0"?>
<sdf version="1.7"><world name="w">
  <light type="directional" name="sun"><pose>0 0 10 0 0 {yaw}</pose>
    <direction>{direction}</direction></light>
  <light type="directional" name="second"><direction>0 0 -1</direction></light>
  <model name="wall"><static>true</static><pose>10.1 0 0 0 0 0</pose>
    <link name="l"><visual name="v"><geometry><box><size>0.2 40 40</size></box></geometry>
    </visual></link></model>
</world></sdf>
"""


@pytest.mark.parametrize('yaw, direction, expected', [
    (0.0, '-0.5 0.1 -0.9', np.array([-0.5, 0.1, -0.9]) / math.sqrt(1.07)),     # Gazebo's sun
    (math.pi / 2, '1 0 0', np.array([0.0, 1.0, 0.0]))])                     # turned by its pose
def test_an_sdf_world_takes_its_first_directional_light_as_the_sun(
        tmp_path, yaw, direction, expected):
    path = tmp_path / 'w.sdf'
    path.write_text(SDF.format(yaw=yaw, direction=direction))
    world = World.load(str(path), materials=MaterialTable.load(None))
    # bound: a rotation of a unit vector by sin/cos of pi/2 in float64 (1e-16) and a norm
    np.testing.assert_allclose(world.sun_direction, expected, rtol=0, atol=1e-12)
