"""
Sunlight raises the background: shorter detection range, more false alarms (hand values).

The OS1 datasheet gives 40 m for a 10 % target at 100 klx with 1 false positive in 10,000. The
presets put the threshold there: background A(100 klx) = 20 + 3.554 x 100 = 375.4 counts,
T = 100 - 1.28155 sqrt(475.4) = 72.06 counts, T / sqrt(A) = 3.719 = Phi^-1(1 - 1e-4). In the
dark (A = 20) the same threshold detects a mean signal P with P - T = 1.28155 sqrt(P + 20), P =
85.17 counts: 40 m x sqrt(100 / 85.17) = 43.34 m.
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import from_dict, LidarConfig
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.detection import normal_cdf
from ubot_lidar_sim.core.physics import sunlight
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

Z90 = 1.2815515655446004


@pytest.fixture(scope='module')
def os1():
    return from_dict(LidarConfig, load_preset('ouster_os1_64'))


def test_the_os1_solar_response_comes_from_its_datasheet_false_positive_rate(os1):
    k = sunlight.solar_response_from_false_alarm(100.0, 0.9, 1e-4, 100.0, 20.0)
    # bound: the preset keeps four significant figures of the derived response
    assert os1.solar_counts_per_klx == pytest.approx(k, abs=5e-4)
    assert os1.detection_threshold_counts == pytest.approx(100.0 - Z90 * math.sqrt(475.4),
                                                           abs=0.01)
    # bound: the response's rounding moves A by 0.05 counts, the false alarms by < 1 %
    spec_rate = sunlight.false_alarm_probability(os1.radiometry, 100.0)
    assert spec_rate == pytest.approx(1e-4, rel=0.01)


def test_false_alarms_rise_with_the_sun_as_shot_noise_says(os1):
    t = os1.detection_threshold_counts
    for klx in (0.0, 10.0, 50.0, 100.0):
        a = 20.0 + os1.solar_counts_per_klx * klx
        # bound: the reference Phi(-T / sqrt(A)) by erfc, to 1e-12 relative
        assert sunlight.false_alarm_probability(os1.radiometry, klx) == pytest.approx(
            0.5 * math.erfc(t / math.sqrt(2.0 * a)), rel=1e-12)
    rates = [sunlight.false_alarm_probability(os1.radiometry, k)
             for k in (0.0, 10.0, 50.0, 100.0, 150.0)]
    assert all(b > a for a, b in zip(rates, rates[1:]))


def test_the_os1_sees_a_10_percent_target_to_40_m_at_100_klx_and_43_3_m_in_the_dark(os1):
    # bound: detection_range_m resolves 1 mm
    assert sunlight.detection_range_m(os1.radiometry, 0.1, 100.0) == pytest.approx(40.0, abs=2e-3)
    t = os1.detection_threshold_counts
    u = 0.5 * (Z90 + math.sqrt(Z90 ** 2 + 4.0 * (20.0 + t)))
    dark = 40.0 * math.sqrt(100.0 / (u * u - 20.0))
    # bound: float64 to ~1e-13 m; 0.01 m is the docstring's hand value's precision (worked with
    # T and P to 4 figures, then rounded to 0.01 m), not a rounding of this computation
    assert dark == pytest.approx(43.34, abs=0.01)
    # bound: detection_range_m returns the last point of its 1 mm grid that detects (up to 1 mm
    # short); the form factor's exp(-(43 / 6.5)^2) = 5e-20 and normal_ppf's 1e-12 error on Z90
    # move the range by < 1e-9 m
    assert sunlight.detection_range_m(os1.radiometry, 0.1, 0.0) == pytest.approx(dark, abs=2e-3)


def test_a_10_percent_wall_between_the_two_ranges_is_lost_more_often_in_the_sun(tmp_path, os1):
    # 2000 beams on a 10 % wall 41.5 m ahead: P = 100 (40 / 41.5)^2 = 92.90 counts, detected
    # with Phi((P - T) / sqrt(P + A)): 0.832 at 100 klx, 0.975 in the dark.
    (tmp_path / 'm.yaml').write_text('other: {reflectivity: 0.1}\n')
    materials = MaterialTable.load(str(tmp_path / 'm.yaml'))
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'wall', 'type': 'box', 'size_m': [0.02, 200, 200],
         'pose': {'xyz': [41.51, 0, 0]}, 'material': 'other'}]}, materials=materials)
    cfg = from_dict(LidarConfig, {**load_preset('ouster_os1_64'), 'channels': 1,
                                  'vertical_fov_up_deg': 0.0, 'vertical_fov_down_deg': 0.0,
                                  'horizontal_samples': 2000, 'horizontal_fov_deg': 0.5,
                                  'sub_rays': 1, 'motion_distortion': False,
                                  'imperfections': False, 'max_rays_per_scan': 2000})
    sim = LidarSimulator(cfg, world, materials)
    p = 100.0 * (40.0 / 41.5) ** 2
    t = cfg.detection_threshold_counts
    for klx in (100.0, 0.0):
        a = 20.0 + cfg.solar_counts_per_klx * klx
        want = normal_cdf((p - t) / math.sqrt(p + a))
        got = sim.scan(BodyTwist(np.eye(4)), 0.0, Weather(sun_illuminance_klx=klx)).points.size
        # bound: 4 binomial standard errors of 2000 beams (<= 0.034)
        assert got / 2000 == pytest.approx(want, abs=4.0 * math.sqrt(want * (1 - want) / 2000))
