"""
Issue 14's weather targets on the demo world, every preset and the laser_scan defaults.

Sweeps keep every ring of a preset (its near-range model) with fewer columns, so the suite stays
quick; pose 12 0 1.8 0 0 90 and strongest returns as in benchmarks/weather_table.py.
"""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import from_dict, LaserScanConfig, LidarConfig
from ubot_lidar_sim.core.config.presets import list_presets, load_preset
from ubot_lidar_sim.core.labels import PRECIPITATION_CLASS
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics.clutter import clutter
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.physics.weather_effects import atmosphere
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import material_index, MaterialTable
from ubot_lidar_sim.core.world.world import World

POSE = BodyTwist(pose_matrix_deg([12.0, 0.0, 1.8], [0.0, 0.0, 90.0]))
PRESETS = list(list_presets())
CLEAR_AND_HAZE = [Weather(), Weather(visibility_m=10000.0), Weather(visibility_m=2000.0),
                  Weather(visibility_m=1000.0)]


def _lidar(preset, **extra):
    params = {**load_preset(preset), 'return_mode': 'strongest', 'motion_distortion': False,
              'horizontal_samples': 240, **extra}
    params.pop('max_rays_per_scan', None)
    return from_dict(LidarConfig, params)


def _clutter_beams(sim, weather, scan_index=0):
    res = sim.scan(POSE, 0.0, weather, scan_index)
    c = res.points['class_id'] == PRECIPITATION_CLASS
    return np.unique(res.beam[c]).size / res.n_beams, res


@pytest.mark.parametrize('preset', PRESETS)
def test_clear_air_and_haze_of_1_km_or_more_give_no_clutter(preset, demo_world, materials):
    sim = LidarSimulator(_lidar(preset), demo_world, materials)
    for weather in CLEAR_AND_HAZE:
        frac, _ = _clutter_beams(sim, weather)
        assert frac == 0.0, (preset, weather.describe())


@pytest.mark.parametrize('preset', PRESETS)
def test_haze_of_1_km_gives_no_clutter_in_a_full_size_sweep(preset, demo_world, materials):
    # The sweeps above have 240 columns; a preset's own has up to 2000 (livox_avia 24,000
    # beams). Haze aerosol does not fluctuate (issue 32): its steady soft peak stays below the
    # threshold in every beam, not only on average.
    params = {**load_preset(preset), 'return_mode': 'strongest', 'motion_distortion': False}
    sim = LidarSimulator(from_dict(LidarConfig, params), demo_world, materials)
    for scan_index in (0, 1):
        frac, res = _clutter_beams(sim, Weather(visibility_m=1000.0), scan_index)
        assert frac == 0.0, (preset, res.n_beams)


@pytest.mark.parametrize('preset', PRESETS)
def test_haze_of_1_km_or_more_is_steady_and_hopeless_in_every_ring(preset):
    # A strict form of the target for any number of beams: at >= 1 km the soft peak has no
    # pulse-to-pulse factor and S + 5 sqrt(S + ambient) < T in every ring (soft_target.hopeless:
    # a detection would need a 5-sigma shot-noise excursion), so clutter() returns nothing.
    cfg = from_dict(LidarConfig, load_preset(preset))
    n = cfg.channels
    for visibility_m in (1000.0, 2000.0, 10000.0):
        atm = atmosphere(cfg.physical_model, Weather(visibility_m=visibility_m))
        assert atm.medium('fog').fluctuating_share == 0.0
        c = clutter(cfg.physical_model, cfg.sensor, atm, n, np.full(n, np.inf), np.arange(n),
                    np.random.default_rng(0))
        assert c.beam.size == 0, (preset, visibility_m)


#: Rain clutter limits, share of beams at 10 / 50 mm/h (issue 14: 0.5 % / 3 %). livox_avia
#: keeps 2 % / 5 %: its published R10 190 m (Livox Avia User Manual v1.0, Specifications) makes a
#: drop (190 / 60)^2 = 10 times brighter than at the default 60 m, its 0.03 x 0.28 deg beam
#: 1.3-1.4 times more; two thirds of its rain points lie beyond 2 m, past the ~1.5 m where Livox's
#: coaxial optics merge a return into the internal one (Livox Mid-70 User Manual, tags), and
#: Livox flags such low-intensity returns as rain / fog noise in its tag bits
#: (docs/physics-weather.md, "Why the Livox Avia shows more rain clutter"). 5 scans give 0.72 %
#: (max 1.04 %) / 4.83 % (max 5.8 %).
RAIN_LIMITS = {'livox_avia': (0.02, 0.05)}


@pytest.mark.parametrize('preset', PRESETS)
def test_rain_clutter_stays_below_half_a_percent_at_10_and_3_percent_at_50_mm_h(
        preset, demo_world, materials):
    # Drops are drawn one by one (issue 32): sparse returns near the aperture.
    sim = LidarSimulator(_lidar(preset), demo_world, materials)
    at_10, at_50 = RAIN_LIMITS.get(preset, (0.005, 0.03))
    assert _clutter_beams(sim, Weather(rain_mm_h=10.0))[0] <= at_10
    assert _clutter_beams(sim, Weather(rain_mm_h=50.0))[0] <= at_50


@pytest.mark.parametrize('preset', PRESETS)
def test_dense_fog_puts_clutter_near_the_sensor_in_most_beams(preset, demo_world, materials):
    # "Most beams" counts the beams that look into the fog: no surface within 10 m (a nearer
    # ground echo is stronger than the fog in strongest mode, as on a real sensor) and a ring at
    # the preset's full R10 (the Helios' lower channels, 10-40 m, are up to 80 times less
    # sensitive and see no fog).
    cfg = _lidar(preset)
    sim = LidarSimulator(cfg, demo_world, materials)
    _, res = _clutter_beams(sim, Weather(visibility_m=50.0))
    c = res.points['class_id'] == PRECIPITATION_CLASS
    r10 = radiometry.ring_r10(cfg.radiometry, np.arange(cfg.channels), cfg.ring_range_at_10pct_m)
    full = np.flatnonzero(r10 >= cfg.range_at_10pct_m)
    beams = np.flatnonzero(np.isin(sim.beams.ring, full) & (res.hit_range_m > 10.0))
    assert beams.size > 0.2 * res.n_beams, preset
    assert np.isin(beams, res.beam[c]).mean() > 0.5, preset
    assert np.median(res.points['range'][c]) < 3.0


def _laser(weather_on=True, noise=True, **extra):
    return LaserScanConfig(world_file='demo', model='physical', weather=weather_on,
                           noise_enabled=noise, **extra)


def test_laser_scan_has_no_short_ray_off_objects_in_clear_air_and_haze(demo_world, materials):
    clear = LaserScanner(_laser(False, False), demo_world, materials).scan(POSE, 0.0).ranges
    scanner = LaserScanner(_laser(), demo_world, materials)
    for weather in CLEAR_AND_HAZE:
        r = scanner.scan(POSE, 0.0, weather).ranges
        near = (r < 1.0) & ~(clear < 1.05)
        assert not np.any(near), weather.describe()


def test_laser_scan_rain_and_fog_follow_the_same_model(demo_world, materials):
    # With lidar_3d's sensitivity (R10 60 m): the laser's own 18 m sees fog only below ~30 m.
    scanner = LaserScanner(_laser(range_at_10pct_m=60.0), demo_world, materials)
    clear = LaserScanner(_laser(False, False), demo_world, materials).scan(POSE, 0.0).ranges
    for rain, limit in ((10.0, 0.005), (50.0, 0.03)):
        r = scanner.scan(POSE, 0.0, Weather(rain_mm_h=rain)).ranges
        assert np.mean((r < 2.0) & ~(clear < 2.05)) <= limit
    fog = scanner.scan(POSE, 0.0, Weather(visibility_m=50.0)).ranges
    assert np.mean(fog < 3.0) > 0.5


def test_laser_scan_defaults_give_no_ray_under_1_m_in_300_scans_of_rain_up_to_10_mm_h(
        materials, flat_world):
    # Round 2's keep target, on the flat world (no surface within clutter_max_range_m: every
    # ray's whole 10 m of drops). The laser's default sensitivity (R10 18 m, SICK LMS111-10100)
    # is 11 times below lidar_3d's 60 m: the largest drops within a pulse length of the
    # aperture (70-130 counts at 60 m against T = 86) stay below the threshold. With 60 m the
    # same 300 scans gave 2 / 8 / 39 such rays at 2.5 / 5 / 10 mm/h.
    cfg = LaserScanConfig(world_file='flat', model='physical')
    assert cfg.range_at_10pct_m == 18.0
    scanner = LaserScanner(cfg, flat_world, materials)
    pose = BodyTwist(pose_matrix_deg([0.0, 0.0, 2.0], [0.0, 0.0, 0.0]))
    for rate in (2.5, 5.0, 10.0):
        near = sum(int(np.count_nonzero(scanner.scan(pose, 0.0, Weather(rain_mm_h=rate),
                                                     k).ranges < 1.0)) for k in range(300))
        assert near == 0, rate


TARGET = """frame: map
objects:
  - {name: target, type: box, size_m: [0.2, 200, 100], pose: {xyz: [%.1f, 0, 0]}, material: other}
"""


def _target_fraction(tmp_path, distance_m, weather, mode):
    """Fraction of 2000 beams (+/-1 deg) whose point is the 10 % target; also the clutter count."""
    path = tmp_path / f'w{distance_m:g}.yaml'
    path.write_text(TARGET % (distance_m + 0.1))
    override = tmp_path / 'm.yaml'
    override.write_text('other: {reflectivity: 0.1}\n')
    table = MaterialTable.load(str(override))
    world = World.load(str(path), table)
    cfg = LidarConfig(channels=1, vertical_fov_up_deg=0.0, vertical_fov_down_deg=0.0,
                      horizontal_samples=2000, horizontal_fov_deg=2.0, sub_rays=1,
                      return_mode=mode, motion_distortion=False)
    res = LidarSimulator(cfg, world, table).scan(BodyTwist(np.eye(4)), 0.0, weather)
    target = (res.points['class_id'] != PRECIPITATION_CLASS) & (
        np.abs(res.points['range'] - distance_m) < 0.5)
    return target.sum() / res.n_beams, int((res.points['class_id'] == PRECIPITATION_CLASS).sum())


@pytest.mark.parametrize('mode', ['dual_strongest_last', 'last'])
def test_ten_percent_target_at_45_m_in_500_m_visibility_matches_its_hand_value(tmp_path, mode):
    # Issue 14: S = 100 (60/45)^2 exp(-2 x 7.824e-3 x 45) = 87.9 counts against T = 85.96, so
    # P(detect) = 1 - Phi((85.96 - 87.9) / sqrt(107.9)) = 0.575. The fog's soft peak (~50 counts
    # at 1.4 m, times its gamma factor of shape 4) is detected in a few per cent of the beams
    # (issue 32), a separate echo 44 m nearer: the last return is the target's. Issue 42: in
    # thin fog the droplets' factor is wider (shape 4 x 12 m / 500 m = 0.096, and droplets
    # carry 75 % of the extinction at 500 m), so the fog echo shows in ~10 % of the beams
    # (203 of 2000 with seed 0) instead of a few per cent; the target's fraction is unchanged.
    frac, n_clutter = _target_fraction(tmp_path, 45.0, Weather(visibility_m=500.0), mode)
    # bound: se sqrt(0.575 x 0.425 / 2000) = 0.011: 0.035 is 3.2 sigma (seeded beams)
    assert frac == pytest.approx(0.575, abs=0.035)      # 3 sigma of 2000 beams
    assert frac >= 0.5 and n_clutter < 0.15 * 2000


def test_ten_percent_target_at_r10_in_rain_25_mm_h_matches_its_hand_value(tmp_path):
    # Carbonneau 25 mm/h: 9.30 dB/km = 2.141e-3 /m; S = 100 exp(-2 x 2.141e-3 x 60) = 77.3 counts,
    # P(detect) = 1 - Phi((85.96 - 77.3) / sqrt(97.3)) = 0.19.
    frac, n_clutter = _target_fraction(tmp_path, 60.0, Weather(rain_mm_h=25.0), 'last')
    # bound: se sqrt(0.19 x 0.81 / 2000) = 8.8e-3: 0.027 is 3.1 sigma (seeded beams)
    assert frac == pytest.approx(0.19, abs=0.027)
    # Drops near the aperture return sparsely (issue 32): a few of the 2000 beams.
    assert n_clutter <= 0.005 * 2000


@pytest.mark.parametrize('preset', ['custom', 'velodyne_vlp16'])
def test_snow_thins_far_points_dims_them_and_heavy_snow_brings_flakes(
        preset, demo_world, materials):
    sim = LidarSimulator(_lidar(preset), demo_world, materials)
    far, inten, flakes = [], [], []
    # 2.5 mm/h, not 1: 1 mm/h (5.5 dB/km) thins the points beyond 20 m of one 240-column sweep
    # by about a point (VLP-16: 426 clear, 427 at 1 mm/h), within its scatter.
    for rate in (0.0, 2.5, 5.0, 10.0):
        frac, res = _clutter_beams(sim, Weather(snowfall_rate_mm_h=rate))
        solid = res.points['class_id'] != PRECIPITATION_CLASS
        far.append(int((solid & (res.points['range'] >= 20.0)).sum()))
        inten.append(float(res.points['intensity'][solid].mean()))
        flakes.append(frac)
    assert far[0] >= far[1] > far[2] > far[3]
    assert inten[0] > inten[1] > inten[2] > inten[3]
    assert flakes[0] == 0.0 and flakes[3] > flakes[1] and flakes[3] > 0.01


#: CADC (Pitropov et al. 2020), VLP-32C on a car roof: the snow of a frame is the points that DROR
#: removes from the cloud cropped to |x|, |y| <= 4 m, -3 <= z <= 10 m around the lidar
#: (cadc_devkit other/filter_pointcloud.py); over the first frames of its 75 labelled drives
#: (cadc_dataset_route_stats.csv) 26 to 1,443 points.
CADC_SNOW_POINTS = (26, 1443)
CADC_BOX = (np.array([-4.0, -4.0, -3.0]), np.array([4.0, 4.0, 10.0]))


@pytest.mark.parametrize('kind', ['dry', 'wet'])
def test_vlp32c_in_light_to_moderate_snow_has_cadc_s_count_of_flakes_around_the_car(
        kind, materials, flat_world):
    # Full-size sweeps 2 m above flat ground; the flakes are the points of class 20 (DROR
    # removes them and a few tens of sparse ground points: benchmarks/weather_particles.py
    # --tables cadc). Hahner et al. 2022 treat light to heavy snowfall as 0.5-2.5 mm/h.
    flat = flat_world
    sim = LidarSimulator(_lidar('velodyne_vlp32c', snow_type=kind,
                                horizontal_samples=1800), flat, materials)
    pose = BodyTwist(pose_matrix_deg([0.0, 0.0, 2.0], [0.0, 0.0, 0.0]))
    counts = []
    for rate in (0.5, 1.0):
        res = sim.scan(pose, 0.0, Weather(snowfall_rate_mm_h=rate))
        xyz = np.stack([res.points[a] for a in ('x', 'y', 'z')], axis=1)
        box = np.all((xyz >= CADC_BOX[0]) & (xyz <= CADC_BOX[1]), axis=1)
        counts.append(int((res.points['class_id'][box] == PRECIPITATION_CLASS).sum()))
    lo, hi = CADC_SNOW_POINTS
    assert lo <= counts[0] < counts[1] <= hi, counts


def test_snow_covered_ground_reads_brighter_than_soil(demo_world, materials):
    # Beam by beam over the soil field: the same geometry, soil (0.30, Lambertian) against snow
    # (0.90, k = 0 like the other natural ground: its backscatter hot spot).
    sim = LidarSimulator(_lidar('custom', noise_enabled=False), demo_world, materials)
    bare = sim.scan(POSE, 0.0, Weather())
    cover = sim.scan(POSE, 0.0, Weather(snow_depth_m=0.1))
    soil_beams = bare.beam[bare.points['material'] == material_index('soil')]
    snow_pts = cover.points[np.isin(cover.beam, soil_beams)]
    soil_pts = bare.points[np.isin(bare.beam, soil_beams)]
    assert soil_beams.size > 20
    assert np.all(snow_pts['material'] == material_index('snow'))
    assert snow_pts['intensity'].mean() > 2.0 * soil_pts['intensity'].mean()
    grass_beams = bare.beam[bare.points['material'] == material_index('grass')]
    assert (cover.points['intensity'][np.isin(cover.beam, grass_beams)].mean()
            > bare.points['intensity'][np.isin(bare.beam, grass_beams)].mean())
    ground = np.isin(cover.points['material'], [material_index(m) for m in (
        'soil', 'grass', 'gravel', 'asphalt', 'water', 'mud')])
    assert not np.any(ground)
    assert not math.isnan(float(snow_pts['intensity'].mean()))
