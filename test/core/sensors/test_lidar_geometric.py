"""lidar_3d model geometric: the first surface of each beam's centre ray, no radiometry."""

import math

import numpy as np
import pytest
from tolerances import assert_wall_ranges

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.return_selection import FLAG_FIRST, FLAG_LAST, FLAG_STRONGEST
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.world import World

# A crown (radius 1 m, centre 5 m ahead at the sensor's height) in front of a wall face at 10 m.
SCENE = {'frame': 'map', 'objects': [
    {'name': 'ground', 'type': 'plane', 'size_m': [200, 200], 'material': 'grass'},
    {'name': 'wall', 'type': 'box', 'size_m': [0.2, 40, 10], 'pose': {'xyz': [10.1, 0, 5]},
     'material': 'concrete'},
    {'name': 'crown', 'type': 'sphere', 'radius_m': 1.0, 'pose': {'xyz': [5, 0, 1.5]},
     'material': 'tree_foliage'},
]}
FAN = {'model': 'geometric', 'channels': 3, 'vertical_fov_up_deg': 5.0,
       'vertical_fov_down_deg': 5.0, 'horizontal_samples': 9, 'horizontal_fov_deg': 80.0}


@pytest.fixture(scope='module')
def world(materials):
    return World.from_dict(SCENE, materials=materials)


def _scan(world, pose=None, air=None, **kw):
    """Scan with the FAN config and kw over it; air: the scan's Weather (None: clear)."""
    cfg = LidarConfig(**{**FAN, **kw})
    still = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 0]))
    return LidarSimulator(cfg, world, world.materials).scan(pose or still, 0.0, air)


def test_each_beam_gives_the_exact_range_of_the_first_surface_it_meets(world):
    res = _scan(world)
    pts = res.points
    assert len(pts) == 27 and res.n_echoes == 27          # 9 columns x 3 rings, all hit
    az = np.arctan2(pts['y'], pts['x'])
    el = np.radians([-5.0, 0.0, 5.0])[pts['ring']]
    on_wall = pts['material'] == 5
    assert_wall_ranges(pts[on_wall], az[on_wall], el[on_wall])
    # The centre beam of the middle ring meets the crown's near side: 5 - 1 = 4 m, exactly
    # (the sphere's float64 root), and stops there (foliage included, nothing behind it).
    # bound: a selection, not a tolerance: the column at azimuth 0, the others whole steps away
    centre = pts[(pts['ring'] == 1) & (np.abs(az) < 1e-9)]
    assert centre['range'].tolist() == [4.0] and centre['material'].tolist() == [9]


def test_the_ranges_are_those_world_cast_gives_for_the_same_rays(world):
    # World.cast (the full first-hit trace, checked against a brute-force caster in
    # test_caster.py) is the reference of the model's one-cast path: equal to the bit.
    cfg = LidarConfig(**{**FAN, 'channels': 16, 'horizontal_samples': 90,
                         'vertical_fov_up_deg': 15.0, 'vertical_fov_down_deg': 25.0,
                         'horizontal_fov_deg': 360.0, 'max_range_m': 30.0})
    sim = LidarSimulator(cfg, world, world.materials)
    pose = BodyTwist(pose_matrix_deg([0.3, -0.2, 1.5], [0, 0, 30]), [1.0, 0, 0, 0, 0, 0.4])
    origins, dirs, _ = sim.rays(pose, 0.0)
    ref = world.cast(origins, dirs, 30.0)
    res = sim.scan(pose, 0.0)
    assert 0 < len(res.points) < cfg.channels * cfg.horizontal_samples   # hits and misses
    np.testing.assert_array_equal(res.beam, ref.ray)
    np.testing.assert_array_equal(res.hit_range_m[ref.ray], ref.range_m)       # float64
    np.testing.assert_array_equal(res.points['range'], ref.range_m.astype(np.float32))
    np.testing.assert_array_equal(res.points['material'], ref.material)
    np.testing.assert_array_equal(res.points['class_id'], ref.class_id)


def test_a_point_is_the_first_strongest_and_last_return_with_no_intensity(world):
    pts = _scan(world).points
    np.testing.assert_array_equal(pts['return_flags'], FLAG_FIRST | FLAG_STRONGEST | FLAG_LAST)
    np.testing.assert_array_equal(pts['return_index'], 1)
    np.testing.assert_array_equal(pts['return_count'], 1)
    for name in ('intensity', 'reflectivity', 'signal'):
        np.testing.assert_array_equal(pts[name], 0)


def test_a_surface_nearer_than_min_range_is_too_close_and_gives_no_point(world):
    res = _scan(world, min_range_m=4.2, channels=1, vertical_fov_up_deg=0.0,
                vertical_fov_down_deg=0.0)
    centre = res.n_beams // 2
    # The beams 10 deg off the axis graze the crown: 5 cos 10 - sqrt(1 - 25 sin^2 10) m.
    side = 5.0 * math.cos(math.radians(10.0)) - math.sqrt(1.0 - 25.0 * math.sin(
        math.radians(10.0)) ** 2)
    # bound: float64 same formula (the geometric model's ranges), ulps << 1e-12 rel
    np.testing.assert_allclose(res.hit_range_m[centre - 1:centre + 2], [side, 4.0, side],
                               rtol=1e-12)
    assert res.too_close.tolist() == [i == centre for i in range(res.n_beams)]
    assert centre not in res.beam.tolist() and len(res.points) == res.n_beams - 1


def test_sub_rays_noise_and_weather_change_nothing(world):
    plain = _scan(world, sub_rays=1, noise_enabled=False, weather=False)
    fog = Weather(rain_mm_h=50.0, visibility_m=30.0)
    other = _scan(world, air=fog, sub_rays=7, noise_enabled=True, weather=True, seed=3)
    assert plain.points.tobytes() == other.points.tobytes()
    # The same settings change the physical model's cloud: the test is not vacuous.
    physical = _scan(world, air=fog, model='physical', sub_rays=7, noise_enabled=True, seed=3)
    assert physical.points.tobytes() != plain.points.tobytes()


def test_a_moving_sensor_traces_each_column_from_its_own_pose(world):
    # 20 m/s towards the wall: the last column of a clockwise sweep fires ~0.1 s after the
    # first, 2 m nearer. Each wall point's x is 10 m minus the distance driven at its time.
    moving = BodyTwist(pose_matrix_deg([0, 0, 1.5], [0, 0, 0]), [20.0, 0, 0, 0, 0, 0])
    pts = _scan(world, pose=moving).points
    wall = pts[pts['material'] == 5]
    assert np.ptp(wall['time']) > 0.01
    # bound: float32 x at 10 m: f32 hit bound 3.2e-5 m + motion at float32 time (7.5e-8 m) < 1e-4
    np.testing.assert_allclose(wall['x'], 10.0 - 20.0 * wall['time'], atol=1e-4)


def test_physical_is_the_default_and_another_model_is_refused_by_name():
    assert LidarConfig().model == 'physical'
    with pytest.raises(ConfigError, match="model.*'ideal'.*geometric"):
        LidarConfig(model='ideal')
