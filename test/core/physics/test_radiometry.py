import math

import numpy as np
import pytest

from ubot_lidar_sim.core import detection
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.material_ids import WATER
from ubot_lidar_sim.core.physics import footprint
from ubot_lidar_sim.core.physics import radiometry as rad
from ubot_lidar_sim.core.world.materials import material_index, MaterialTable

TABLE = MaterialTable.load()


def test_one_sub_ray_is_the_centre_with_weight_one():
    off, w = footprint.sub_ray_pattern(1, 3.0)
    np.testing.assert_array_equal(off, [[0.0, 0.0]])
    np.testing.assert_array_equal(w, [1.0])


def test_seven_sub_rays_are_centre_plus_hexagon_at_035_divergence():
    off, w = footprint.sub_ray_pattern(7, 3.0)
    assert off.shape == (7, 2)
    # bound: float64 weights and radii of exact decimals, a few ulps; default rtol 1e-7 absorbs
    np.testing.assert_allclose(w, [0.25] + [0.125] * 6)
    np.testing.assert_allclose(w.sum(), 1.0)
    np.testing.assert_allclose(np.hypot(off[1:, 0], off[1:, 1]), 0.35 * 3e-3)
    np.testing.assert_allclose(off[0], [0.0, 0.0])  # bound: exact zero centre; default rtol 1e-7


def test_threshold_for_defaults_by_hand():
    # bound: bisection to 1e-13 of an erf within ulps (pdf 0.18): error < 1e-12 << 1e-10
    np.testing.assert_allclose(detection.normal_ppf(0.9), 1.2815515655446004, atol=1e-10)
    # bound: z truncated to 1e-10: 5e-10 counts of 86, 6e-12 rel << 1e-9; z = 0: default rtol 1e-7
    np.testing.assert_allclose(detection.detection_threshold(100.0, 20.0, 0.9),
                               100.0 - 1.2815515655 * math.sqrt(120.0), rtol=1e-9)
    np.testing.assert_allclose(detection.detection_threshold_from_z(100.0, 20.0, 0.0), 100.0)


def test_reference_target_gives_s10_at_r10():
    cfg = LidarConfig()
    # bound: float64 formula; default rtol 1e-7
    np.testing.assert_allclose(0.1 * rad.counts_per_reflectance(cfg.radiometry, 60.0), 100.0)


def test_80pct_target_reaches_10pct_threshold_at_r10_sqrt8():
    cfg = LidarConfig(overlap_range_m=0.0)
    # bound: same float64 formula both sides, sqrt(8)^2 = 8 within a few ulps << 1e-12
    spec = cfg.radiometry
    np.testing.assert_allclose(0.8 * rad.counts_per_reflectance(spec, 60.0 * math.sqrt(8.0)),
                               0.1 * rad.counts_per_reflectance(spec, 60.0), rtol=1e-12)


def test_overlap_factor_and_range_floor():
    cfg = LidarConfig(overlap_range_m=2.0)
    # bound: same float64 formula both sides (exp, pow within ulps); default rtol 1e-7 absorbs them
    np.testing.assert_allclose(0.1 * rad.counts_per_reflectance(cfg.radiometry, 2.0),
                               100.0 * (60.0 / 2.0) ** 2 * (1.0 - math.exp(-1.0)))
    cfg0 = LidarConfig(overlap_range_m=0.0)
    # bound: float64 formula at the 1 mm range floor, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(0.1 * rad.counts_per_reflectance(cfg0.radiometry, 0.0),
                               100.0 * (60.0 / 1e-3) ** 2)


def test_overlap_exponent_gives_the_form_factor_1_minus_exp_of_the_nth_power():
    # R = Rov: 1 - 1/e for every n; R = Rov / 2, n = 4: 1 - exp(-1/16); n = 2 is the square law.
    cfg4 = LidarConfig(overlap_range_m=2.0, overlap_exponent=4.0)
    # bound: same float64 formula both sides (exp, pow within ulps); default rtol 1e-7 absorbs them
    np.testing.assert_allclose(0.1 * rad.counts_per_reflectance(cfg4.radiometry, 2.0),
                               100.0 * (60.0 / 2.0) ** 2 * (1.0 - math.exp(-1.0)))
    np.testing.assert_allclose(0.1 * rad.counts_per_reflectance(cfg4.radiometry, 1.0),
                               100.0 * (60.0 / 1.0) ** 2 * (1.0 - math.exp(-1.0 / 16.0)))
    cfg2 = LidarConfig(overlap_range_m=2.0)
    assert cfg2.overlap_exponent == 2.0
    r = np.array([0.3, 1.0, 7.0])
    twice = LidarConfig(overlap_range_m=2.0, overlap_exponent=2.0).radiometry
    assert np.array_equal(rad.counts_per_reflectance(cfg2.radiometry, r),
                          rad.counts_per_reflectance(twice, r))


def test_a_fixed_target_peaks_at_a_finite_range_only_above_the_square_law():
    # O(R) / R^2 is monotone for n = 2; for n = 4 it peaks where n u = 2 (e^u - 1), u = (R/Rov)^4.
    r = np.linspace(0.05, 20.0, 4000)
    s2 = rad.counts_per_reflectance(LidarConfig(overlap_range_m=8.0).radiometry, r)
    assert np.all(np.diff(s2) < 0.0)
    s4 = rad.counts_per_reflectance(
        LidarConfig(overlap_range_m=8.0, overlap_exponent=4.0).radiometry, r)
    u = 1.2564312086261695                  # the root of 4 u = 2 (e^u - 1) (Newton)
    assert abs(4.0 * u - 2.0 * math.expm1(u)) < 1e-12
    # bound: the grid step 5 mm around the peak
    assert abs(r[np.argmax(s4)] - 8.0 * u ** 0.25) <= 0.005


def test_overlap_exponent_below_the_square_law_is_refused():
    from ubot_lidar_sim.core.errors import ConfigError
    with pytest.raises(ConfigError, match='overlap_exponent'):
        LidarConfig(overlap_exponent=1.5)


def test_per_ring_r10_and_out_of_range_ring_fallback():
    cfg = LidarConfig(channels=2, ring_range_at_10pct_m=(20.0, 90.0), overlap_range_m=0.0)
    s = 0.1 * rad.counts_per_reflectance(cfg.radiometry, np.array([20.0, 90.0, 60.0, 60.0]),
                                         np.array([0, 1, -1, 5]), cfg.ring_range_at_10pct_m)
    # bound: float64 formula at its own r10, few ulps; default rtol 1e-7
    np.testing.assert_allclose(s, [100.0, 100.0, 100.0, 100.0])


def test_backscatter_lambertian_minnaert_wet_and_fallback():
    soil, grass = material_index('soil'), material_index('grass')
    c = math.cos(math.radians(60.0))
    # bound: float64 tables and cosines, a few ulps; default rtol 1e-7 absorbs rounding order
    np.testing.assert_allclose(rad.backscatter(TABLE, soil, c, 0.0), 0.30 * 0.5)
    np.testing.assert_allclose(rad.backscatter(TABLE, soil, -c, 0.0), 0.30 * 0.5)
    np.testing.assert_allclose(rad.backscatter(TABLE, grass, c, 0.0), 0.45)  # k = 0
    # bound: float64 tables and cosines, a few ulps; default rtol 1e-7 absorbs rounding order
    np.testing.assert_allclose(rad.backscatter(TABLE, soil, 1.0, 1.0), 0.30 * 0.5)  # wet
    np.testing.assert_allclose(rad.backscatter(TABLE, soil, 1.0, 0.0, albedo=2.0), 0.6)
    np.testing.assert_allclose(rad.backscatter(TABLE, 200, 1.0, 0.0), 0.3)  # -> other


def test_backscatter_gives_its_kernel_one_argument_type_whatever_the_input_form():
    # A new argument type compiles a new signature, inside a node's sweep when the build's
    # cache lacks it (a 0-d int from a sensor inside smoke did: seconds and +30 MB of RSS).
    from ubot_lidar_sim.core.physics import radiometry_passes
    table = MaterialTable.load()
    kernel = radiometry_passes.backscatter_rows
    forms = [(0, 1.0, 0.0, 1.0),
             (np.array([1, 2], dtype=np.uint8), np.array([1.0, 0.5]), 0.3, 1.0),
             (np.int64(3), np.ones((2, 3)), np.zeros(3), np.full((2, 3), 0.5)),
             (np.broadcast_to(np.array([4]), (5,)), np.linspace(0.1, 1.0, 5)[::-1], 1.5, 0.2)]
    ro = np.array([0, 1])
    ro.flags.writeable = False
    forms.append((ro, ro.astype(float), ro.astype(float), ro.astype(float)))
    rad.backscatter(table, *forms[0])
    compiled = set(kernel.signatures)
    for m, cos, w, albedo in forms:
        rho = rad.backscatter(table, m, cos, w, albedo)
        assert rho.shape == np.broadcast_shapes(*(np.shape(x) for x in (m, cos, w, albedo)))
    assert set(kernel.signatures) == compiled


def test_specular_lobe_is_gaussian_in_incidence_angle():
    w = TABLE.specular_width_deg[WATER]
    rho = rad.backscatter(TABLE, WATER, np.cos(np.radians([0.0, w])), 0.0)
    diffuse = TABLE.reflectivity[WATER] * np.cos(np.radians([0.0, w]))
    # bound: same float64 cos/exp both sides, a few ulps; default rtol 1e-7 absorbs them
    np.testing.assert_allclose(rho - diffuse, TABLE.specular[WATER] * np.array([1, math.e ** -1]))


def test_reflectivity_byte_table():
    rho = [0.0, -1.0, np.nan, 0.004, 0.1, 0.555, 1.0, 8.0, 64.0, 1000.0]
    expect = [0, 0, 0, 0, 10, 56, 100, round(100 + 155 * 0.5), 255, 255]
    np.testing.assert_array_equal(rad.reflectivity_byte(rho), expect)
    assert rad.reflectivity_byte(0.5).dtype == np.uint8


def test_pulse_stretch_factor():
    c45 = math.cos(math.radians(45.0))
    # bound: float64 closed forms (sqrt, cos within ulps); default rtol 1e-7 absorbs rounding
    np.testing.assert_allclose(rad.pulse_stretch_factor(1.0, 10.0, c45, 0.01), 1 / math.sqrt(1.01))
    np.testing.assert_allclose(rad.pulse_stretch_factor(0.0, 10.0, c45, 0.01), 1.0)
    np.testing.assert_allclose(rad.pulse_stretch_factor(1.0, 10.0, 1.0, 0.01), 1.0)
    # bound: float64 closed forms (sqrt, cos within ulps); default rtol 1e-7 absorbs rounding
    np.testing.assert_allclose(rad.pulse_stretch_factor(1.0, 10.0, 0.0, 0.01), 0.0)


def test_range_noise_combines_floor_and_low_snr_in_quadrature():
    cfg = LidarConfig(range_noise_std_m=0.04)
    snr_spec = 100.0 / math.sqrt(120.0)
    # bound: float64 hypot / pow of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(rad.range_noise_std(cfg.noise, cfg.radiometry, snr_spec, 10.0),
                               0.05)
    np.testing.assert_allclose(rad.range_noise_std(cfg.noise, cfg.radiometry, 2 * snr_spec, 10.0),
                               math.hypot(0.04, 0.015))
    cfg6 = LidarConfig(range_noise_snr_exponent=0.5)
    # bound: float64 hypot / pow of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(
        rad.range_noise_std(cfg6.noise, cfg6.radiometry, 4 * snr_spec, 10.0), 0.015)


def test_wetness_from_rain_model():
    # bound: same float64 exp both sides (numpy vs math, each < 4 ulps); default rtol 1e-7
    np.testing.assert_allclose(rad.wetness_from_rain([0.0, 1.0, 5.0]),
                               [0.0, 1 - math.exp(-1), 1 - math.exp(-5)])
    assert rad.surface_wetness(-1.0, 1.0) == rad.wetness_from_rain(1.0)
    assert rad.surface_wetness(0.3, 50.0) == 0.3


def test_pond_rule_turns_deep_enough_ground_puddles_into_water():
    m = np.array([1, 1, 12], np.uint8)
    ground = np.array([True, True, False])
    np.testing.assert_array_equal(rad.pond_material(m, ground, 0.003, 0.003), [WATER, WATER, 12])
    np.testing.assert_array_equal(rad.pond_material(m, ground, 0.002, 0.003), [1, 1, 12])
    np.testing.assert_array_equal(rad.pond_material(m, ground, 0.0, 0.0), [1, 1, 12])


def test_rough_range_sigma():
    # bound: float64 sqrt / division of exact decimals, a few ulps; default rtol 1e-7
    np.testing.assert_allclose(rad.rough_range_sigma_m(0.002, [1.0, 0.25]), [0.002, 0.016])
