"""
Bad inputs at the library entrances: each gets a typed error whose message names the input.

Entrances: the transform buffer (what /tf feeds), the Environment conversion (what the
environment topic feeds), the core Weather and configs (what parameters feed); the files are in
test_bad_files.py. docs/reliability.md lists every case with what it gets.
"""

import math

from geometry_msgs.msg import Point
import numpy as np
import pytest

from ubot_lidar_sim.core.config import LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.core.errors import ConfigError, ScanError
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.ros.conversions import environment_to_weather
from ubot_lidar_sim.ros.tf_buffer import CycleError, ExtrapolationError, FrameNotFoundError
from ubot_lidar_sim.ros.tf_buffer import InvalidTransformError, TransformBuffer
from ubot_lidar_sim_msgs.msg import Environment, SmokeVolume

Q_ID = (0.0, 0.0, 0.0, 1.0)
NAN = math.nan
INF = math.inf


# -- transform buffer (the /tf and /tf_static entrance) ----------------------------------------
@pytest.fixture
def buf():
    b = TransformBuffer(cache_time_s=10.0, tolerance_s=0.05)
    b.set_transform('map', 'odom', 100.0, (0, 0, 0), Q_ID, static=True)
    b.set_transform('odom', 'base_link', 100.0, (1.0, 2.0, 0.0), Q_ID)
    b.set_transform('odom', 'base_link', 101.0, (2.0, 2.0, 0.0), Q_ID)
    return b


TF_CASES = {
    'tf_nan_translation': (('odom', 'base_link', 101.5, (NAN, 0, 0), Q_ID),
                           InvalidTransformError, r"'odom' -> 'base_link': translation .*not "
                           r'finite'),
    'tf_inf_translation': (('odom', 'base_link', 101.5, (0, INF, 0), Q_ID),
                           InvalidTransformError, 'translation .*not finite'),
    'tf_zero_quaternion': (('odom', 'base_link', 101.5, (0, 0, 0), (0, 0, 0, 0)),
                           InvalidTransformError, "'base_link': quaternion is zero"),
    'tf_non_unit_quaternion': (('odom', 'base_link', 101.5, (0, 0, 0), (0, 0, 0, 2.0)),
                               InvalidTransformError, r'norm 2, allowed 1 \+- 1e-3'),
    'tf_nan_quaternion': (('odom', 'base_link', 101.5, (0, 0, 0), (NAN, 0, 0, 1)),
                          InvalidTransformError, 'quaternion .*not finite'),
    'tf_nan_stamp': (('odom', 'base_link', NAN, (0, 0, 0), Q_ID),
                     InvalidTransformError, 'stamp nan not finite'),
    'tf_stamp_far_in_the_past': (('odom', 'base_link', 101.0 - 3600.0, (0, 0, 0), Q_ID),
                                 InvalidTransformError, 'older than the history'),
    'tf_cycle_in_the_frame_tree': (('base_link', 'map', 101.5, (0, 0, 0), Q_ID),
                                   CycleError, "'map' is already an ancestor of 'base_link'"),
    'tf_parent_equals_child': (('base_link', 'base_link', 101.5, (0, 0, 0), Q_ID),
                               CycleError, 'same parent and child'),
    'tf_frame_id_with_slash': (('/odom', 'base_link', 101.5, (0, 0, 0), Q_ID),
                               InvalidTransformError, 'must not start with "/"'),
    'tf_empty_frame_id': (('odom', '', 101.5, (0, 0, 0), Q_ID),
                          InvalidTransformError, 'child frame id must be a non-empty string'),
}


@pytest.mark.parametrize('case', sorted(TF_CASES))
def test_bad_transform_is_refused_by_name_and_the_last_good_pose_is_kept(buf, case):
    args, exc, pattern = TF_CASES[case]
    before = buf.lookup_many('map', 'base_link', [100.0, 100.5, 101.0])
    with pytest.raises(exc, match=pattern):
        buf.set_transform(*args)
    after = buf.lookup_many('map', 'base_link', [100.0, 100.5, 101.0])
    np.testing.assert_array_equal(after, before)
    # bound: float64 TF interpolation of exact inputs, ulps; default rtol 1e-7 / approx 1e-6
    np.testing.assert_allclose(after[1, :3, 3], [1.5, 2.0, 0.0])
    assert np.all(np.isfinite(after))


def test_lookup_far_in_the_future_is_an_extrapolation_error_not_a_held_pose(buf):
    with pytest.raises(ExtrapolationError, match=r"'odom' -> 'base_link': time 3701\.0+ s is "
                       r'outside the history \[100\.0+, 101\.0+\]'):
        buf.lookup_many('map', 'base_link', [101.0, 101.0 + 3600.0])
    # Within the tolerance (0.05 s) the end value is held, beyond it refused.
    # bound: float64 TF interpolation of exact inputs, ulps; default rtol 1e-7 / approx 1e-6
    np.testing.assert_allclose(buf.lookup('map', 'base_link', 101.04)[:3, 3], [2, 2, 0])
    with pytest.raises(ExtrapolationError):
        buf.lookup('map', 'base_link', 101.06)


def test_lookup_at_a_nan_time_is_refused(buf):
    with pytest.raises(ExtrapolationError, match='times must be finite'):
        buf.lookup_many('map', 'base_link', [101.0, NAN])


def test_unknown_frame_is_frame_not_found_listing_the_known_ones(buf):
    with pytest.raises(FrameNotFoundError, match=r"frame 'lidar' does not exist \(known: "
                       r"\['base_link', 'map', 'odom'\]\)"):
        buf.lookup('map', 'lidar', 101.0)


def test_frame_that_disappears_from_the_tree_disconnects_the_old_path(buf):
    # base_link gets a new parent that is not connected to map: the old chain is gone.
    buf.set_transform('elsewhere', 'base_link', 101.2, (0, 0, 0), Q_ID)
    with pytest.raises(FrameNotFoundError, match=r"'map' and 'base_link' are not connected "
                       r"\(roots 'map' and 'elsewhere'\)"):
        buf.lookup('map', 'base_link', 101.2)
    # bound: float64 TF interpolation of exact inputs, ulps; default rtol 1e-7 / approx 1e-6
    assert buf.latest_common_time('elsewhere', 'base_link') == pytest.approx(101.2)


def test_frame_whose_publisher_stops_ages_out_instead_of_holding_its_pose(buf):
    # bound: float64 TF interpolation of exact inputs, ulps; default rtol 1e-7 / approx 1e-6
    assert buf.latest_common_time('map', 'base_link') == pytest.approx(101.0)
    # Ten seconds later nothing new arrived: a lookup "now" is refused, not answered stale.
    with pytest.raises(ExtrapolationError, match='outside the history'):
        buf.lookup('map', 'base_link', 111.0)
    buf.clear()
    with pytest.raises(FrameNotFoundError, match='known: none'):
        buf.lookup('map', 'base_link', 101.0)


# -- Environment messages (the environment topic entrance) -------------------------------------
def _env(**kw):
    msg = Environment(rain_rate_mm_h=0.0, visibility_m=INF, surface_wetness=-1.0,
                      puddle_depth_m=0.0)
    smoke = kw.pop('smoke', None)
    for k, v in kw.items():
        setattr(msg, k, v)
    if smoke is not None:
        msg.header.frame_id = kw.get('frame_id', 'map')
        msg.smoke = [SmokeVolume(center=Point(x=c[0], y=c[1], z=c[2]), radius_m=r, density=d)
                     for c, r, d in smoke]
    return msg


ENV_CASES = {
    'env_rain_nan': ({'rain_rate_mm_h': NAN}, 'environment.rain_rate_mm_h: got nan'),
    'env_rain_negative': ({'rain_rate_mm_h': -1.0}, 'rain_rate_mm_h: got -1.0, allowed 0 to'),
    'env_rain_inf': ({'rain_rate_mm_h': INF}, 'rain_rate_mm_h: got inf'),
    'env_rain_1e9_mm_h': ({'rain_rate_mm_h': 1e9}, r'rain_rate_mm_h: got 1000000000\.0, '
                          r'allowed 0 to 500'),
    'env_visibility_zero': ({'visibility_m': 0.0}, r'visibility_m: got 0\.0, allowed inf '
                            r'\(clear\) or >= 1'),
    'env_visibility_negative': ({'visibility_m': -5.0}, 'visibility_m: got -5.0'),
    'env_visibility_nan': ({'visibility_m': NAN}, 'visibility_m: got nan'),
    'env_wetness_above_1': ({'surface_wetness': 2.0}, 'surface_wetness: got 2.0'),
    'env_wetness_nan': ({'surface_wetness': NAN}, 'surface_wetness: got nan'),
    'env_puddle_nan': ({'puddle_depth_m': NAN}, 'puddle_depth_m: got nan'),
    'env_puddle_1e6_m': ({'puddle_depth_m': 1e6}, 'puddle_depth_m: got 1000000.0'),
    'env_smoke_negative_radius': ({'smoke': [((1, 2, 1), -1.0, 0.5)]},
                                  r'smoke\[0\]\.radius_m: got -1\.0, allowed > 0'),
    'env_smoke_nan_centre': ({'smoke': [((NAN, 2, 1), 1.0, 0.5)]},
                             r'smoke\[0\]\.center: got \[nan, 2\.0, 1\.0\], allowed finite '
                             'x, y, z'),
    'env_smoke_density_above_1': ({'smoke': [((1, 2, 1), 1.0, 0.5), ((0, 0, 0), 1.0, 1.5)]},
                                  r'smoke\[1\]\.density: got 1\.5, allowed 0 to 1'),
    'env_smoke_in_another_frame': ({'smoke': [((1, 2, 1), 1.0, 0.5)], 'frame_id': 'odom'},
                                   "header.frame_id: got 'odom'"),
    'env_smoke_2000_volumes': ({'smoke': [((0, 0, 0), 1.0, 0.5)] * 2000},
                               r"smoke: got '2000 volumes', allowed at most 1024"),
}


@pytest.mark.parametrize('case', sorted(ENV_CASES))
def test_bad_environment_message_is_refused_naming_the_field(case):
    kw, pattern = ENV_CASES[case]
    kw = dict(kw)
    frame = kw.pop('frame_id', None)
    msg = _env(**kw)
    if frame is not None:
        msg.header.frame_id = frame
    with pytest.raises(ConfigError, match=pattern):
        environment_to_weather(msg, 'map')


def test_good_environment_message_passes_with_its_values():
    w = environment_to_weather(_env(rain_rate_mm_h=12.0, visibility_m=300.0,
                                    smoke=[((1, 2, 1), 1.5, 0.6)]), 'map')
    assert (w.rain_mm_h, w.visibility_m) == (12.0, 300.0)
    # bound: float64 TF interpolation of exact inputs, ulps; default rtol 1e-7 / approx 1e-6
    np.testing.assert_allclose(w.smoke, [[1, 2, 1, 1.5]])


WEATHER_CASES = {
    'weather_smoke_negative_radius': ({'smoke': [[0, 0, 1, -1.0]], 'smoke_density': [0.5]},
                                      r'smoke\[0\]\.radius_m: got -1\.0, allowed > 0 and '
                                      '<= 1000'),
    'weather_rain_nan': ({'rain_mm_h': NAN}, 'rain_mm_h: got nan'),
    'weather_rain_inf': ({'rain_mm_h': INF}, 'rain_mm_h: got inf'),
    'weather_visibility_zero': ({'visibility_m': 0.0}, r'visibility_m: got 0\.0, allowed inf '
                                r'\(clear\) or >= 1 m'),
    'weather_rain_1e9_mm_h': ({'rain_mm_h': 1e9}, 'rain_mm_h: got 1000000000.0, allowed 0 to 500'),
    'weather_puddle_negative': ({'puddle_depth_m': -0.1}, 'puddle_depth_m: got -0.1'),
    'weather_smoke_density_count_mismatch': ({'smoke': [[0, 0, 1, 1.0]], 'smoke_density': []},
                                             'smoke_density: got 0, allowed 1 values'),
}


@pytest.mark.parametrize('case', sorted(WEATHER_CASES))
def test_bad_core_weather_is_refused_naming_the_field(case):
    kw, pattern = WEATHER_CASES[case]
    with pytest.raises(ConfigError, match=pattern):
        Weather(**kw)


# -- configs (what parameter sets and --set feed) ---------------------------------------------
CONFIG_CASES = {
    'param_channels_0': (LidarConfig, {'channels': 0}, r'channels: got 0, allowed int in '
                         r'\[1, 256\]'),
    'param_channels_wrong_type': (LidarConfig, {'channels': 'sixteen'},
                                  "channels: got 'sixteen', allowed int"),
    'param_channels_fractional': (LidarConfig, {'channels': 16.5}, 'channels: got 16.5'),
    'param_max_range_below_min': (LidarConfig, {'min_range_m': 5.0, 'max_range_m': 2.0},
                                  r'max_range_m: got 2\.0, allowed > min_range_m \(5\.0\)'),
    'param_max_range_nan': (LidarConfig, {'max_range_m': NAN}, 'max_range_m: got nan'),
    'param_return_mode_unknown': (LidarConfig, {'return_mode': 'all'},
                                  "return_mode: got 'all', allowed one of 'strongest'"),
    'param_rate_zero': (LidarConfig, {'rate_hz': 0.0}, r'rate_hz: got 0\.0, allowed float in '
                        r'\(0\.0, 1000\.0\]'),
    'param_sub_rays_3': (LidarConfig, {'sub_rays': 3}, 'sub_rays: got 3, allowed one of 1, 7'),
    'param_bool_as_string': (LidarConfig, {'noise_enabled': 'yes'},
                             "noise_enabled: got 'yes', allowed a bool"),
    'param_unknown_name': (LidarConfig, {'chanels': 16}, 'chanels: got 16, allowed a '
                           'lidar_3d parameter name'),
    'param_ring_table_wrong_length': (LidarConfig, {'ring_range_at_10pct_m': [50.0] * 3},
                                      r'allowed empty or a list of channels \(16\) values'),
    'param_resolution_too_fine': (LaserScanConfig, {'resolution_deg': 0.001},
                                  r'resolution_deg: got 0\.001, allowed at most 8192 rays'),
    'param_tire_radii_wrong_length': (TerrainConfig, {'tire_radii_m': [0.3] * 3},
                                      r'tire_radii_m: got \(0\.3, 0\.3, 0\.3\), allowed a list '
                                      'of 4 float'),
    'param_tire_radii_nan': (TerrainConfig, {'tire_radii_m': [0.3, NAN, 0.3, 0.3]},
                             'tire_radii_m: got nan'),
    'param_tire_positions_wrong_length': (TerrainConfig, {'tire_positions_m': [0.0] * 11},
                                          'tire_positions_m: .*allowed a list of 12'),
}


@pytest.mark.parametrize('case', sorted(CONFIG_CASES))
def test_bad_parameter_is_refused_naming_parameter_value_and_range(case):
    from ubot_lidar_sim.core.config import from_dict

    cls, params, pattern = CONFIG_CASES[case]
    with pytest.raises(ConfigError, match=pattern):
        from_dict(cls, params)


def test_more_rays_than_max_rays_per_scan_is_an_error_never_a_truncation():
    with pytest.raises(ScanError, match='131072.*65536'):
        LidarConfig(channels=128, horizontal_samples=1024, max_rays_per_scan=65536)


def test_external_tire_radii_of_the_wrong_length_are_refused_by_the_core(flat_world):
    sensor = TerrainSensor(TerrainConfig(), flat_world)
    with pytest.raises(ConfigError, match=r'tire_radii_m: got \[0\.3, 0\.3, 0\.3\], allowed a '
                       'list of 4 values'):
        sensor.sample(np.eye(4), tire_radii_m=[0.3] * 3)


@pytest.mark.parametrize('radii', [[NAN] * 4, [-1.0] * 4, [INF] * 4],
                         ids=['nan', 'negative', 'inf'])
def test_external_tire_radii_that_are_not_finite_and_non_negative_are_refused_by_the_core(
        radii, flat_world):
    sensor = TerrainSensor(TerrainConfig(), flat_world)
    with pytest.raises(ConfigError, match='tire_radii_m'):
        sensor.sample(np.eye(4), tire_radii_m=radii)


# -- files: worlds, meshes, materials, parameters ---------------------------------------------
