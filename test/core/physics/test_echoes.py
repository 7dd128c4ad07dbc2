import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics import footprint
from ubot_lidar_sim.core.physics import radiometry as rad
from ubot_lidar_sim.core.physics.echoes import (Contributions, contributions_from_hits,
                                                process_beams)
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.world.materials import material_index

QUIET = {'noise_enabled': False, 'overlap_range_m': 0.0, 'imperfections': False}


def _two_echo(first_power, second_power, n=1):
    return Contributions.build(np.repeat(np.arange(n), 2), np.tile([5.0, 10.0], n),
                               np.tile([first_power, second_power], n), 0.1, 1.0, [1, 12] * n,
                               [1, 12] * n)


def _run(mode, contrib, n=1, **kw):
    cfg = LidarConfig(return_mode=mode, **{**QUIET, **kw})
    return process_beams(cfg.physical_model, cfg.sensor, contrib, n, np.random.default_rng(0),
                         np.zeros(n, int))


@pytest.mark.parametrize('mode, ranges, flags', [
    ('strongest', [10.0], [2 | 4]),
    ('first', [5.0], [1 | 8]),
    ('last', [10.0], [2 | 4]),
    ('dual_strongest_last', [10.0], [2 | 4]),
    ('dual_first_last', [5.0, 10.0], [1 | 8, 2 | 4]),
    ('triple_first_strongest_last', [5.0, 10.0], [1 | 8, 2 | 4]),
])
def test_return_modes_on_a_beam_whose_last_echo_is_strongest(mode, ranges, flags):
    ret = _run(mode, _two_echo(200.0, 900.0))
    # bound: float64 ranges passed through unchanged or averaged; default rtol 1e-7
    np.testing.assert_allclose(ret.range_m, ranges)
    np.testing.assert_array_equal(ret.return_flags, flags)
    np.testing.assert_array_equal(ret.return_index, np.arange(1, len(ranges) + 1))
    np.testing.assert_array_equal(ret.return_count, [len(ranges)] * len(ranges))


@pytest.mark.parametrize('mode, ranges, flags', [
    ('strongest', [5.0], [1 | 2]),
    ('first', [5.0], [1 | 2]),
    ('last', [10.0], [4 | 8]),
    ('dual_strongest_last', [5.0, 10.0], [1 | 2, 4 | 8]),
    ('dual_first_last', [5.0, 10.0], [1 | 2, 4 | 8]),
    ('triple_first_strongest_last', [5.0, 10.0], [1 | 2, 4 | 8]),
])
def test_return_modes_on_a_beam_whose_first_echo_is_strongest(mode, ranges, flags):
    ret = _run(mode, _two_echo(900.0, 200.0))
    # bound: float64 ranges passed through unchanged or averaged; default rtol 1e-7
    np.testing.assert_allclose(ret.range_m, ranges)
    np.testing.assert_array_equal(ret.return_flags, flags)
    np.testing.assert_array_equal(ret.return_count, [len(ranges)] * len(ranges))


def test_triple_mode_emits_first_strongest_and_last_of_three():
    c = Contributions.build([0, 0, 0, 0], [5.0, 10.0, 15.0, 20.0], [200, 900, 300, 250], 0.1)
    ret = _run('triple_first_strongest_last', c)
    # bound: float64 ranges passed through unchanged or averaged; default rtol 1e-7
    np.testing.assert_allclose(ret.range_m, [5.0, 10.0, 20.0])
    np.testing.assert_array_equal(ret.return_flags, [1, 2, 4])
    np.testing.assert_array_equal(ret.return_index, [1, 2, 3])
    np.testing.assert_array_equal(ret.return_count, [3, 3, 3])


def test_undetected_echoes_take_no_part_in_roles():
    ret = _run('dual_first_last', _two_echo(10.0, 900.0))
    # bound: float64 ranges passed through unchanged or averaged; default rtol 1e-7
    np.testing.assert_allclose(ret.range_m, [10.0])
    np.testing.assert_array_equal(ret.return_flags, [1 | 2 | 4])


def test_contributions_closer_than_min_separation_merge_into_one_echo():
    c = Contributions.build([0, 0, 0, 0], [6.0, 5.0, 5.5, 7.0], [100, 300, 100, 500], 0.1,
                            material=[3, 2, 3, 4], class_id=[3, 2, 3, 4])
    ret = _run('dual_first_last', c)
    assert ret.n_echoes == 2
    # bound: float64 power-weighted mean of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(ret.range_m, [(300 * 5 + 100 * 5.5 + 100 * 6) / 500, 7.0])
    np.testing.assert_array_equal(ret.material, [2, 4])


def test_reflectivity_is_energy_over_reference_and_signal_saturates():
    cfg = LidarConfig(saturation_counts=1000.0, **QUIET)
    s = 0.5 * rad.counts_per_reflectance(cfg.radiometry, 10.0)
    c = Contributions.build([0], [10.0], [0.25 * s], 0.5)
    ret = process_beams(cfg.physical_model, cfg.sensor, c, 1, np.random.default_rng(0), [0])
    # bound: float64 ratios of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(ret.reflectivity, [0.125])
    np.testing.assert_array_equal(ret.intensity, [13])
    np.testing.assert_array_equal(ret.signal, [1000])  # 4500 counts clipped


def test_pulse_stretch_lowers_peak_but_not_reflectivity():
    c = Contributions.build([0, 1], [60.0, 60.0], [200.0, 200.0], 0.2, stretch=[1.0, 0.4])
    ret = _run('strongest', c, n=2)
    np.testing.assert_array_equal(ret.beam, [0])
    c = Contributions.build([0], [60.0], [200.0], 0.2, stretch=[0.5])
    ret = _run('strongest', c)
    # bound: float64 ratios of exact inputs, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(ret.reflectivity, [0.2])
    np.testing.assert_array_equal(ret.signal, [100])


def test_range_window_and_too_close_beams():
    c = Contributions.build([0, 1, 2], [0.05, 50.0, 150.0], [1e4, 1e4, 1e4], 0.1)
    ret = _run('strongest', c, n=3)
    np.testing.assert_array_equal(ret.beam, [1])
    np.testing.assert_array_equal(ret.too_close, [True, False, False])


def test_noise_uses_exactly_two_draws_per_echo_in_one_call():
    cfg = LidarConfig(return_mode='dual_first_last', imperfections=False)
    c = _two_echo(400.0, 900.0, n=3)
    ret = process_beams(cfg.physical_model, cfg.sensor, c, 3, np.random.default_rng(5),
                        np.zeros(3, int))
    z = np.random.default_rng(5).standard_normal((6, 2))
    peak = np.tile([400.0, 900.0], 3)
    expect_s = np.rint(peak + z[:, 0] * np.sqrt(peak + 20.0))
    snr = peak / np.sqrt(peak + 20.0)
    r_e = np.tile([5.0, 10.0], 3)
    expect_r = r_e + z[:, 1] * rad.range_noise_std(cfg.noise, cfg.radiometry, snr, r_e)
    np.testing.assert_array_equal(ret.signal, expect_s)
    # bound: float64 ranges passed through; default rtol 1e-7
    np.testing.assert_allclose(ret.range_m, expect_r)


def test_noise_off_still_draws_so_streams_stay_aligned():
    rng = np.random.default_rng(3)
    _run('strongest', _two_echo(400.0, 900.0, n=4), n=4)
    cfg = LidarConfig(**QUIET)
    process_beams(cfg.physical_model, cfg.sensor, _two_echo(400.0, 900.0, n=4), 4, rng,
                  np.zeros(4, int))
    ref = np.random.default_rng(3)
    ref.standard_normal((8, 2))
    assert rng.standard_normal() == ref.standard_normal()


def test_reference_target_at_r10_is_detected_with_spec_probability():
    n = 40000
    cfg = LidarConfig(return_mode='strongest')
    power = 0.1 * rad.counts_per_reflectance(cfg.radiometry, 60.0)
    c = Contributions.build(np.arange(n), 60.0, power, 0.1)
    ret = process_beams(cfg.physical_model, cfg.sensor, c, n, np.random.default_rng(11),
                        np.zeros(n, int))
    # bound: binomial p = 0.9, n = 40000 seeded: se 1.5e-3, 0.01 is 6.7 sigma
    np.testing.assert_allclose(len(ret) / n, 0.9, atol=0.01)


def test_empty_scan_gives_empty_returns():
    cfg = LidarConfig()
    ret = process_beams(cfg.physical_model, cfg.sensor, Contributions.empty(), 5,
                        np.random.default_rng(0), np.zeros(5, int))
    assert len(ret) == 0 and ret.n_echoes == 0 and ret.too_close.shape == (5,)


def _hits(ray, range_m, material, class_id, foliage, ground):
    """Real raycast.Hits at normal incidence, unit albedo, no smoke."""
    n = len(ray)
    return Hits(ray=np.asarray(ray, np.int64), range_m=np.asarray(range_m, np.float64),
                point=np.zeros((n, 3)), normal=np.tile(np.float32([0.0, 0.0, 1.0]), (n, 1)),
                cos_inc=np.ones(n, np.float32), material=np.asarray(material, np.uint8),
                class_id=np.asarray(class_id, np.uint16), foliage=np.asarray(foliage, bool),
                ground=np.asarray(ground, bool), albedo=np.ones(n, np.float32),
                smoke=np.zeros(n, bool), obj=np.zeros(n, np.int32))


def test_foliage_passes_its_gap_fraction_both_ways(materials):
    table = materials
    crown, wall = material_index('tree_foliage'), material_index('building')
    hits = _hits([0, 0], [8.0, 20.0], [crown, wall], [9, 12], [True, False], [False, False])
    cfg = LidarConfig(sub_rays=1, **QUIET)
    c = contributions_from_hits(cfg.physical_model, cfg.sensor, table, hits, [1.0], [0])
    t = table.transmission[crown]
    # bound: same float64 formulas both sides; default rtol 1e-7 absorbs rounding order
    np.testing.assert_allclose(c.rho_app, [(1 - t) * table.reflectivity[crown],
                                           t * t * table.reflectivity[wall]])
    np.testing.assert_allclose(c.power_counts,
                               c.rho_app * rad.counts_per_reflectance(cfg.radiometry, c.range_m))


def test_hit_contributions_carry_weight_atmosphere_and_pond_rule(materials):
    table = materials
    hits = _hits([1, 7], [10.0, 10.0], [1, 1], [1, 1], [False, False], [True, False])
    cfg = LidarConfig(**QUIET)
    atm = atmosphere(cfg.physical_model, Weather(rain_mm_h=25.0))
    _, w = footprint.sub_ray_pattern(7, cfg.divergence_mrad)
    c = contributions_from_hits(cfg.physical_model, cfg.sensor, table, hits, w, [0, 0], atm,
                                puddle_depth_m=0.01)
    np.testing.assert_array_equal(c.beam, [0, 1])
    np.testing.assert_array_equal(c.material, [material_index('water'), 1])
    t2 = math.exp(-2 * atm.alpha * 10.0)
    # bound: same float64 formulas both sides; default rtol 1e-7 absorbs rounding order
    np.testing.assert_allclose(c.power_counts[1],
                               0.25 * t2 * 0.3 * rad.counts_per_reflectance(cfg.radiometry, 10.0))


def test_a_gap_of_exactly_min_separation_separates_echoes():
    c = Contributions.build([0, 0, 0], [0.475, 1.225, 1.975], [500.0, 500.0, 500.0], 0.1)
    assert _run('strongest', c).n_echoes == 3


@pytest.mark.parametrize('fog_power, range_m, class_id', [
    (300.0, 2.0, 5), (1000.0, 1.4, PRECIPITATION_CLASS)])
def test_a_merged_echo_takes_the_range_and_class_of_its_dominant_side(fog_power, range_m,
                                                                      class_id):
    # A fog return at 1.4 m and a target at 2.0 m (0.6 m apart: one echo) whose power is split
    # over 7 sub-rays of 182 + 6 x 91 = 728 counts: the target side dominates a 300-count fog
    # return though each of its rows is weaker, and reads 2.0 m with its class (a power-weighted
    # mean would read 1.83 m); a 1000-count fog return dominates the target.
    power = [fog_power, 182.0] + [91.0] * 6
    contrib = Contributions.build(np.zeros(8, int), [1.4] + [2.0] * 7, power, 0.05, 1.0,
                                  [0] + [5] * 7, [PRECIPITATION_CLASS] + [5] * 7)
    ret = _run('strongest', contrib)
    assert len(ret) == 1 and ret.n_echoes == 1
    # bound: a mean of equal float64 ranges, exact
    assert ret.range_m[0] == pytest.approx(range_m, abs=1e-12)
    assert ret.class_id[0] == class_id
