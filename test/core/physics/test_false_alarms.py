"""
False alarms from the background: points at uniform ranges on beams without a return.

Hand model (docs/physics.md, "Sunlight"): the OS1 presets' threshold T = 72.06 counts meets a
background A = 20 + 3.554 x E; a range bin without an echo crosses T with p = erfc(T /
sqrt(2 A)) / 2 (1.0e-4 at 100 klx, 1e-58 in the dark), a beam has n = floor((120 - 0.8) / 0.75)
= 158 bins, so a beam without a return gives a false point with q = 1 - (1 - p)^n (0.0157 at
100 klx). Over N such beams the count is Binomial(N, q): within 5 sigma of N q (a test that
fails with probability 6e-7 when the model is right).
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import from_dict, LidarConfig
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.labels import FALSE_ALARM_CLASS
from ubot_lidar_sim.core.physics import false_alarms
from ubot_lidar_sim.core.physics.return_selection import FLAG_FALSE_ALARM
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World


@pytest.fixture(scope='module')
def os1():
    return from_dict(LidarConfig, {**load_preset('ouster_os1_64'), 'seed': 3})


def q_by_hand(cfg, klx):
    """Return q = 1 - (1 - p)^158 with p = erfc(T / sqrt(2 A)) / 2, A = 20 + 3.554 klx."""
    a = 20.0 + 3.554 * klx
    p = 0.5 * math.erfc(cfg.detection_threshold_counts / math.sqrt(2.0 * a))
    return 1.0 - (1.0 - p) ** 158


def _scan(cfg, klx, world=None):
    materials = MaterialTable.load(None)
    world = world or World.from_dict({'frame': 'map', 'objects': []}, materials=materials)
    return LidarSimulator(cfg, world, materials).scan(
        BodyTwist(pose_matrix_deg([0.0, 0.0, 1.5], [0.0, 0.0, 0.0])), 0.0,
        Weather(sun_illuminance_klx=klx))


def test_the_hand_figures_of_the_os1(os1):
    # bound: half a unit in the last printed digit of the hand figures (3.554, 0.0157)
    assert os1.solar_counts_per_klx == pytest.approx(3.554, abs=5e-4)
    assert false_alarms.bins_per_beam(os1.echoes, os1.sensor) == 158
    # bound: the hand figure 0.0157 is rounded to 3 significant digits
    assert q_by_hand(os1, 100.0) == pytest.approx(0.0157, abs=1e-4)


def test_the_kernel_gives_the_erfc_tail_of_each_background(os1):
    a = np.array([0.0, 20.0, 100.0, 375.4, 1000.0, 1e5])
    got = false_alarms.per_bin_probability(os1.detection_threshold_counts, a)
    ref = [0.0] + [0.5 * math.erfc(os1.detection_threshold_counts / math.sqrt(2.0 * v))
                   for v in a[1:]]
    # bound: both are libm's erfc of the same double (the division and sqrt correctly rounded)
    np.testing.assert_allclose(got, ref, rtol=1e-15, atol=0.0)


def test_false_points_into_an_empty_sky_at_100_klx_match_the_binomial_count(os1):
    pts = _scan(os1, 100.0).points
    n = 64 * 1024                                   # every beam: nothing to return from
    q = q_by_hand(os1, 100.0)
    assert abs(pts.size - n * q) <= 5.0 * math.sqrt(n * q * (1.0 - q))
    assert np.all(pts['class_id'] == FALSE_ALARM_CLASS)
    assert np.all(pts['return_flags'] & FLAG_FALSE_ALARM)
    # Uniform over [0.8, 120] m: the mean within 5 sigma of 60.4 m (sigma 119.2 / sqrt(12 K)).
    assert np.all((pts['range'] >= 0.8) & (pts['range'] <= 120.0))
    assert abs(pts['range'].mean() - 60.4) <= 5.0 * 119.2 / math.sqrt(12.0 * pts.size)


def test_no_false_point_in_the_dark(os1):
    assert _scan(os1, 0.0).points.size == 0


def test_beams_with_a_return_keep_it_and_only_quiet_beams_get_false_points(os1):
    materials = MaterialTable.load(None)
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'ground', 'type': 'plane', 'size_m': [60, 60], 'material': 'concrete'}]},
        materials=materials)
    scan = _scan(os1, 100.0, world)
    pts, beam = scan.points, scan.beam
    false = (pts['return_flags'] & FLAG_FALSE_ALARM) != 0
    assert np.all((pts['class_id'] == FALSE_ALARM_CLASS) == false)
    assert not set(beam[false]) & set(beam[~false])
    assert np.all(np.diff(beam) >= 0)               # still in beam order
    # The beams without a real return: Binomial(N, q) false points, N counted here.
    n = scan.n_beams - np.unique(beam[~false]).size
    q = q_by_hand(os1, 100.0)
    assert 0 < n < scan.n_beams
    assert abs(false.sum() - n * q) <= 5.0 * math.sqrt(n * q * (1.0 - q))


def test_a_certain_alarm_lands_on_every_quiet_beam_in_beam_order_and_spares_the_rest(os1):
    # A background of 1e6 counts: p = erfc(72 / sqrt(2e6)) / 2 = 0.48, q = 1 - 0.52^158 = 1.
    from ubot_lidar_sim.core.physics.echoes import Returns
    u8, two = np.uint8, np.ones(2)
    ret = Returns(beam=np.array([1, 3]), range_m=np.array([5.0, 7.0]), reflectivity=two * 0.3,
                  signal=np.array([900, 800], np.uint16), intensity=np.array([30, 30], u8),
                  class_id=np.array([72, 50], np.uint16), material=np.array([2, 5], u8),
                  return_index=np.ones(2, u8), return_count=np.ones(2, u8),
                  return_flags=np.full(2, 7, u8), n_echoes=2,
                  too_close=np.array([False, False, False, False, True, False]),
                  instance_id=np.array([0, 2], np.uint16))
    out = false_alarms.with_false_alarms(os1.physical_model, os1.sensor, ret, 1e6,
                                         np.zeros(6, int), np.random.default_rng(1))
    np.testing.assert_array_equal(out.beam, [0, 1, 2, 3, 5])     # beam 4 was too close
    false = np.array([True, False, True, False, True])
    np.testing.assert_array_equal(out.class_id[~false], [72, 50])
    np.testing.assert_array_equal(out.range_m[~false], [5.0, 7.0])
    np.testing.assert_array_equal(out.instance_id, [0, 0, 0, 2, 0])
    assert np.all(out.class_id[false] == FALSE_ALARM_CLASS)
    assert np.all(out.return_flags[false] == FLAG_FALSE_ALARM | 7)
    assert np.all(out.signal[false] == round(os1.detection_threshold_counts))
