"""Drops and flakes as discrete scatterers (physics/particles.py) and the fog's fluctuation."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics import particles
from ubot_lidar_sim.core.physics.clutter import clutter
from ubot_lidar_sim.core.physics.echoes import Contributions
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.column_blocks import merge_columns
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World


def test_beam_volume_is_the_cone_frustum_by_hand():
    # D0 = 10 mm, 3 mrad: from 1 m to 3 m the diameter grows 13 -> 19 mm; frustum
    # pi h / 12 (d1^2 + d1 d2 + d2^2) = pi 2 / 12 (169 + 247 + 361) 1e-6 = 4.068e-4 m^3.
    cfg = LidarConfig(exit_diameter_m=0.01, divergence_mrad=3.0)
    # bound: closed forms of the same integral, float64 rounding only
    assert particles.beam_volume_m3(cfg.optics, 1.0, 3.0) == pytest.approx(4.0684e-4, rel=1e-4)


def test_expected_drop_count_in_a_beam_volume_for_marshall_palmer_at_10_mm_h():
    # Marshall-Palmer at 10 mm/h: Lambda = 4.1 x 10^-0.21 = 2.5280 /mm, N0 = 8000 /m^3/mm;
    # drops larger than 2 mm: 8000 / 2.5280 exp(-2 x 2.5280) = 20.16 /m^3; in 4.068e-4 m^3
    # (1-3 m of a 10 mm, 3 mrad beam): 8.202e-3 drops per beam. 200,000 seeded beams draw
    # 1640 +/- 41.
    cfg = LidarConfig(exit_diameter_m=0.01, divergence_mrad=3.0)
    medium = atmosphere(cfg.physical_model, Weather(rain_mm_h=10.0)).medium('rain')
    # bound: the config's drop law 1951.2 R^0.21 is 8000 / 4.1 R^0.21 to 5 digits
    assert medium.slope_per_mm == pytest.approx(2.5280, rel=1e-4)
    n_big = medium.particles_per_m3 * math.exp(-medium.slope_per_mm * 2.0)
    # bound: 5-digit hand value
    volume_m3 = particles.beam_volume_m3(cfg.optics, 1.0, 3.0)
    assert n_big * volume_m3 == pytest.approx(8.202e-3, rel=1e-3)
    counts = np.random.default_rng(5).poisson(np.full(200000, 8.202e-3))
    # bound: Poisson sd sqrt(1640) = 41: 4 sigma (seeded)
    assert abs(int(counts.sum()) - 1640) < 164


def test_particle_ranges_fill_the_beam_volume_uniformly():
    # The volume grows with r^2 (no exit diameter): the median of r in [0, 3] is 3 / 2^(1/3).
    cfg = LidarConfig(exit_diameter_m=0.0, divergence_mrad=3.0)
    u = np.random.default_rng(0).random(100000)
    r = particles.ranges_in_volume(cfg.optics, 0.0, 3.0, u)
    # bound: seeded 1e5 draws: the median's se is ~0.004 m
    assert np.median(r) == pytest.approx(3.0 / 2.0 ** (1.0 / 3.0), abs=0.02)
    assert r.min() >= 0.0 and r.max() <= 3.0


def test_flake_diameters_follow_the_brandes_density_and_never_exceed_ice_density():
    # Brandes et al. (2007): rho = 0.178 D^-0.922 g/cm^3 (D mm), so the water mass of a 2 mm
    # melted flake, pi / 6 8, is pi / 6 0.178 D^2.078: D = (8 / 0.178)^(1 / 2.078) = 6.243 mm
    # (density 0.0329 g/cm^3). At 0.1 mm melted the law would exceed ice: D = 0.1 (1 /
    # 0.917)^(1/3) = 0.10293 mm. Wet flakes take the same law (their optical area differs).
    # bound: 4-digit hand values
    assert particles.geometric_diameter_mm('dry', 2.0) == pytest.approx(6.243, rel=2e-4)
    assert particles.geometric_diameter_mm('wet', 2.0) == pytest.approx(6.243, rel=2e-4)
    assert particles.geometric_diameter_mm('dry', 0.1) == pytest.approx(0.10293, rel=1e-4)
    assert particles.geometric_diameter_mm('drop', 2.0) == 2.0
    d = np.linspace(0.1, 5.0, 50)
    for kind in ('dry', 'wet', 'drop'):
        # bound: powers and cube roots of the same values, float64
        np.testing.assert_allclose(particles.melted_diameter_mm(
            kind, particles.geometric_diameter_mm(kind, d)), d, rtol=1e-12)


@pytest.mark.parametrize('kind, rate, ratio', [('dry', 1.0, 0.296), ('dry', 0.5, 0.227),
                                               ('wet', 1.0, 0.207)])
def test_flakes_optical_area_gives_the_snow_law_extinction(kind, rate, ratio):
    # The flakes' discs pi / 4 D^2 over Gunn-Marshall sizes, by a plain Riemann sum, times
    # 2 (extinction efficiency) and the area ratio give the ITU-R alpha: dry 1 mm/h 5.54 dB/km
    # = 1.276e-3 /m against discs 2 x 2.155e-3 m^2/m^3: A_r = 0.296.
    cfg = LidarConfig(snow_type=kind)
    medium = atmosphere(cfg.physical_model, Weather(snowfall_rate_mm_h=rate)).medium('snow')
    d, step = np.linspace(0.0, 40.0, 400001, retstep=True)
    n = medium.particles_per_m3 * medium.slope_per_mm * np.exp(-medium.slope_per_mm * d)
    discs = np.sum(n * math.pi / 4.0 * particles.geometric_diameter_mm(kind, d) ** 2) * step
    a_r = particles.flake_area_ratio(medium)
    # bound: the Riemann sum of step 1e-4 mm errs by < 1e-4 relative here
    assert 2.0 * a_r * discs * 1e-6 == pytest.approx(medium.alpha_per_m, rel=1e-3)
    # bound: 3-digit hand values
    assert a_r == pytest.approx(ratio, abs=1e-3)
    rain = atmosphere(cfg.physical_model, Weather(rain_mm_h=5.0)).medium('rain')
    assert particles.flake_area_ratio(rain) == 1.0


def test_a_particle_covering_its_share_of_the_footprint_returns_two_pi_over_s_of_it():
    cfg = LidarConfig(min_range_m=1.0, clutter_max_range_m=3.0)
    medium = atmosphere(cfg.physical_model, Weather(snowfall_rate_mm_h=2.0)).medium('snow')
    beam, r, share, rho = particles.sample(cfg.physical_model, cfg.sensor, medium,
                                           np.full(20000, np.inf), 0.0, 60.0,
                                           np.random.default_rng(1), np.random.default_rng(2))
    assert beam.size > 50 and np.all((r >= 1.0) & (r <= 3.0))
    # bound: the same product in float64
    np.testing.assert_allclose(rho, 2.0 * math.pi / 29.0 * share, rtol=1e-12)

    # Every drawn flake is at least the detectable cut: its share at the best range is enough.
    cut = particles.detectable_cut_mm(cfg.physical_model, cfg.sensor, medium, 0.0, 60.0)
    assert 0.1 < cut < 5.0


def test_a_flake_in_front_of_a_surface_shadows_it_by_one_minus_its_share_squared():
    t = particles.shadow_factor(np.array([0, 0, 1]), np.array([1.0, 4.0, 1.0]),
                                np.array([0.1, 0.5, 0.2]), np.array([0, 0, 1, 2]),
                                np.array([2.0, 5.0, 0.5, 3.0]))
    # Beam 0 at 2 m: only the 1 m flake, 0.9^2; at 5 m both, 0.81 x 0.25; beam 1 at 0.5 m:
    # the flake is behind it; beam 2 has none.
    # bound: products of exp(log1p) in float64
    np.testing.assert_allclose(t, [0.81, 0.2025, 1.0, 1.0], rtol=1e-12)


@pytest.mark.parametrize('optics', ['itu_matched', 'area_law'])
def test_flake_returns_grow_smoothly_with_the_snowfall_rate(optics):
    counts = {}
    for kind in ('dry', 'wet'):
        cfg = LidarConfig(min_range_m=0.9, snow_type=kind, snow_flake_optics=optics)
        counts[kind] = []
        for rate in (0.25, 0.5, 1.0, 2.0, 4.0):
            atm = atmosphere(cfg.physical_model, Weather(snowfall_rate_mm_h=rate))
            c = clutter(cfg.physical_model, cfg.sensor, atm, 20000, np.full(20000, np.inf),
                        np.zeros(20000, int), np.random.default_rng(3),
                        streams={'snow': np.random.default_rng(4)})
            # Detectable ones: the mean signal above the threshold.
            counts[kind].append(int((c.power_counts > cfg.detection_threshold_counts).sum()))
        c = np.array(counts[kind], float)
        assert np.all(np.diff(c) > 0), (kind, counts[kind])
        # Smooth: no doubling of the rate multiplies the count by more than 10 from 0.5 mm/h.
        assert c[1] > 0 and np.all(c[2:] / c[1:-1] < 10.0), (kind, counts[kind])
    dry, wet = np.array(counts['dry'], float), np.array(counts['wet'], float)
    if optics == 'itu_matched':
        # Round 3: the flakes' optical area follows the ITU-R extinction: dry 5.545 S^1.38
        # exceeds wet 3.878 S^0.72 dB/km above S = (3.878 / 5.545)^(1 / 0.66) = 0.58 mm/h.
        assert np.all(dry[2:] > wet[2:]), counts
    else:
        # Issue 42: the same flakes (Gunn-Marshall sizes, Mitchell's area law) whatever the
        # snow type; the ITU-R law only sets the mean extinction. At 4 mm/h dry's 8.5e-3 /m
        # against wet's 2.3e-3 /m cost exp(-2 x 6.2e-3 x ~5 m) = 0.94 of the signal of a flake
        # at ~5 m: the counts differ by less than 10 %.
        # bound: the transmission difference above, 6 %, plus the seeded draws' 1-2 %
        assert np.all(np.abs(wet / dry - 1.0) < 0.1), counts


def _fog_share(cfg, visibility_m, n=4000):
    atm = atmosphere(cfg.physical_model, Weather(visibility_m=visibility_m))
    c = clutter(cfg.physical_model, cfg.sensor, atm, n, np.full(n, np.inf), np.zeros(n, int),
                np.random.default_rng(0), streams={'fog': np.random.default_rng(9)})
    noise = np.random.default_rng(11).standard_normal(c.beam.size)
    s = c.power_counts + noise * np.sqrt(c.power_counts + cfg.ambient_counts)
    return np.unique(c.beam[s >= cfg.detection_threshold_counts]).size / n


@pytest.mark.parametrize('overlap_m', [8.3, 11.8])
def test_share_of_beams_with_a_fog_return_rises_monotone_and_smoothly_with_density(overlap_m):
    # The form-factor scales of the presets (docs/presets.md): 8.3 m (custom, laser, VLP-32C),
    # 11.8 m (VLP-16).
    cfg = LidarConfig(min_range_m=0.9, overlap_range_m=overlap_m)
    vis = np.geomspace(2000.0, 10.0, 25)
    share = np.array([_fog_share(cfg, v) for v in vis])
    assert share[0] == 0.0 and share[-1] > 0.5
    # bound: seeded 4000 beams, se <= 0.008: a dip of 0.02 is 2.5 se (same fog stream)
    assert np.all(np.diff(share) > -0.02), share
    # Smooth: no step of the visibility grid (a factor 1.25) adds more than 25 % of the beams
    # (without the fluctuation one step took 0.2 % to 62 %).
    assert np.max(np.diff(share)) < 0.25, share


def test_fog_share_with_gamma_factor_matches_its_hand_value():
    # One beam's soft peak S, the factor G ~ Gamma(k, 1/k): with k = 1 (exponential; shape 1
    # at the reference visibility 50 m) and no shot noise, P(G S >= T) = exp(-T / S).
    base = {'min_range_m': 0.9, 'range_at_10pct_m': 20.0, 'fog_fluctuation_reference_m': 50.0}
    cfg = LidarConfig(**base, fog_fluctuation_shape=1.0, noise_enabled=False)
    atm = atmosphere(cfg.physical_model, Weather(visibility_m=50.0))
    assert atm.medium('fog').fluctuation_shape == 1.0
    n = 40000
    steady = LidarConfig(**base, fog_fluctuation_shape=0.0)
    c0 = clutter(steady.physical_model, steady.sensor, atm, 1, np.full(1, np.inf),
                 np.zeros(1, int), np.random.default_rng(0))
    s = float(c0.power_counts[0])
    c = clutter(cfg.physical_model, cfg.sensor, atm, n, np.full(n, np.inf), np.zeros(n, int),
                np.random.default_rng(0), streams={'fog': np.random.default_rng(1)})
    t = cfg.detection_threshold_counts
    expect = math.exp(-t / s)
    assert 0.05 < expect < 0.95
    # bound: binomial se over 40,000 seeded beams <= 0.0025: 0.01 is 4 se
    assert np.mean(c.power_counts >= t) * c.beam.size / n == pytest.approx(expect, abs=0.01)


def test_only_the_droplets_share_of_the_fog_backscatter_fluctuates():
    # Issue 42: droplet share of the extinction d = 1 - (V / 1 km)^2; the droplets' share of
    # the backscatter f = (d / 18.8) / (d / 18.8 + (1 - d) / 60); shape k = 4 x V_ref / V
    # (V_ref 750 m here). At 750 m: d = 0.4375, f = 0.71283, k = 4: the factor f G + 1 - f has
    # mean 1, coefficient of variation f / sqrt(k) = 0.35641 and is >= 1 - f. At 400 m:
    # d = 0.84, f = 0.94368, k = 7.5: std 0.34458. At 1 km and beyond (haze) f = 0: every
    # beam's peak is the steady one.
    base = {'min_range_m': 0.9, 'noise_enabled': False, 'range_at_10pct_m': 400.0,
            'fog_fluctuation_reference_m': 750.0}
    n = 40000

    def ratios(visibility_m):
        cfg, steady = LidarConfig(**base), LidarConfig(**base, fog_fluctuation_shape=0.0)
        atm = atmosphere(cfg.physical_model, Weather(visibility_m=visibility_m))
        c0 = clutter(steady.physical_model, steady.sensor, atm, 1, np.full(1, np.inf),
                     np.zeros(1, int), np.random.default_rng(0))
        c = clutter(cfg.physical_model, cfg.sensor, atm, n, np.full(n, np.inf), np.zeros(n, int),
                    np.random.default_rng(0), streams={'fog': np.random.default_rng(1)})
        assert c.beam.size == n                  # R10 400 m: no beam is hopeless
        return atm.medium('fog').fluctuating_share, c.power_counts / c0.power_counts[0]

    f, g = ratios(750.0)
    # bound: the hand value's rounding, half a unit of its 5th decimal
    assert f == pytest.approx(0.71283, abs=5e-6)
    # bound: se of the mean over 40,000 seeded beams 0.3564 / 200 = 0.0018: 0.008 is 4 se
    assert g.mean() == pytest.approx(1.0, abs=0.008)
    # bound: se of the std sigma sqrt((2 + 6 / k) / 4 n) = 0.0017 (gamma excess kurtosis 6 / k)
    assert g.std() == pytest.approx(0.35641, abs=0.008)
    # bound: float64 products of f G + 1 - f, a few ulps of 1 below 1 - f
    assert g.min() >= 1.0 - f - 1e-12
    for haze_m in (1000.0, 2000.0):
        f, g = ratios(haze_m)
        assert f == 0.0 and np.all(g == 1.0)
    f, g = ratios(400.0)
    # bound: the hand value's rounding (5th decimal); std se as above, k = 7.5: 0.0015 (4 se
    # 0.008)
    assert f == pytest.approx(0.94368, abs=5e-6)
    assert g.std() == pytest.approx(0.34458, abs=0.008)


TARGET = """frame: map
objects:
  - {name: target, type: box, size_m: [0.2, 40, 40], pose: {xyz: [2.1, 0, 0]}, material: other}
"""


def test_five_percent_target_at_2_m_in_visibility_30_m_reads_2_m_with_its_own_class(tmp_path):
    # VLP-16-like optics (Rov 11.8 m, blanking 0.9 m): the target gives 0.05 x 3.6e6 x
    # O(2 m) / 4 x exp(-2 x 0.130 x 2) = 757 counts (O = 0.0283, alpha = 3.912 / 30), the fog's
    # peak near 1.3 m ~290 counts (x G): merged or not, the target dominates its echo.
    (tmp_path / 'w.yaml').write_text(TARGET)
    (tmp_path / 'm.yaml').write_text('other: {reflectivity: 0.05}\n')
    table = MaterialTable.load(str(tmp_path / 'm.yaml'))
    world = World.load(str(tmp_path / 'w.yaml'), table)
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0.0, vertical_fov_down_deg=0.0,
                      horizontal_samples=400, horizontal_fov_deg=4.0, return_mode='strongest',
                      motion_distortion=False, min_range_m=0.9, overlap_range_m=11.8)
    res = LidarSimulator(cfg, world, table).scan(BodyTwist(np.eye(4)), 0.0,
                                                 Weather(visibility_m=30.0))
    pts = res.points
    assert len(pts) > 0.95 * res.n_beams
    own = pts['class_id'] != PRECIPITATION_CLASS
    assert own.mean() > 0.9
    # bound: range noise at this SNR is a few cm; the wall is 2.000-2.001 m over +/-2 deg
    assert np.median(pts['range'][own]) == pytest.approx(2.0, abs=0.02)


def test_a_separable_target_behind_the_fog_echo_gives_its_own_echo(tmp_path, materials):
    # The target at 5 m is more than min_separation_m behind the fog peak (~1.3 m): two echoes,
    # the far one with the target's class.
    (tmp_path / 'w.yaml').write_text(TARGET.replace('2.1, 0, 0', '5.1, 0, 0'))
    table = materials
    world = World.load(str(tmp_path / 'w.yaml'), table)
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0.0, vertical_fov_down_deg=0.0,
                      horizontal_samples=200, horizontal_fov_deg=4.0,
                      return_mode='dual_first_last', motion_distortion=False, min_range_m=0.9)
    res = LidarSimulator(cfg, world, table).scan(BodyTwist(np.eye(4)), 0.0,
                                                 Weather(visibility_m=30.0))
    pts = res.points
    fog = pts['class_id'] == PRECIPITATION_CLASS
    assert fog.sum() > 0.3 * res.n_beams and np.all(pts['range'][fog] < 4.0)
    far = ~fog
    assert far.sum() > 0.9 * res.n_beams
    # bound: range noise of a bright target: cm
    assert np.all(np.abs(pts['range'][far] - 5.0) < 0.1)


def test_surfaces_pass_through_clutter_unchanged_in_clear_air():
    surf = Contributions.build([0, 1], [5.0, 6.0], [100.0, 50.0], [0.1, 0.05])
    cfg = LidarConfig()
    out = clutter(cfg.physical_model, cfg.sensor, atmosphere(cfg.physical_model, Weather()), 2,
                  np.full(2, 5.0), np.zeros(2, int), np.random.default_rng(0), surfaces=surf)
    np.testing.assert_array_equal(out.power_counts, surf.power_counts)


@pytest.mark.parametrize('footprint', ['adaptive', 'exhaustive'])
def test_drops_flakes_and_fog_are_the_same_bytes_whole_or_in_blocks_computed_apart(
        footprint, materials, flat_world):
    # Both footprints: an adaptive beam kept at one ray meets its drops, flakes and fog from
    # the same streams as an exhaustive one (the surfaces they shadow included).
    table = materials
    cfg = LidarConfig(channels=16, horizontal_samples=360, column_blocks=3, world_file='flat',
                      motion_distortion=False, footprint=footprint)
    sim = LidarSimulator(cfg, flat_world, table)
    path = BodyTwist(pose_matrix_deg([0, 0, 2.0], [0, 0, 0]))
    weather = Weather(rain_mm_h=20.0, snowfall_rate_mm_h=2.0, visibility_m=150.0)
    whole = sim.scan(path, 0.0, weather, 3)
    again = sim.scan(path, 0.0, weather, 3)
    assert whole.points.tobytes() == again.points.tobytes()
    assert np.sum(whole.points['class_id'] == PRECIPITATION_CLASS) > 100
    parts = {j: sim.scan_blocks(path(sim.block_pose_times(0.0, j, j + 1)),
                                Sweep(0.0, weather, 3), j, j + 1) for j in (2, 0, 1)}
    merged, _ = merge_columns([parts[j] for j in (2, 0, 1)],
                              [sim.block_columns[j] for j in (2, 0, 1)], cfg.channels)
    assert merged.points.tobytes() == whole.points.tobytes()
    other = sim.scan(path, 0.0, weather, 4)
    assert other.points.tobytes() != whole.points.tobytes()


def test_a_parallel_or_hair_thin_beam_keeps_the_volume_and_ranges_exact():
    # theta -> 0: the cone's formula must not cancel; the volume is pi / 4 D0^2 (r2 - r1).
    for div in (0.0, 1e-60):
        cfg = LidarConfig(exit_diameter_m=0.01, divergence_mrad=div)
        # bound: float64 rounding of the frustum formula
        assert particles.beam_volume_m3(cfg.optics, 1.0, 3.0) == pytest.approx(
            math.pi / 4.0 * 1e-4 * 2.0, rel=1e-12)
        u = np.array([0.0, 0.25, 0.5, 1.0])
        # bound: float64 rounding
        np.testing.assert_allclose(particles.ranges_in_volume(cfg.optics, 1.0, 3.0, u),
                                   1.0 + 2.0 * u, rtol=1e-12)
