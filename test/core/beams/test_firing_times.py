"""Per-point times follow each sensor's firing order, as its manual gives it."""

import numpy as np
import pytest

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config import from_dict, LidarConfig, replace
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.world import World


def _preset(name, **changes):
    return from_dict(LidarConfig, {**load_preset(name), **changes})


def _offsets_us(cfg):
    return build_beams(cfg).ring_time_offset_s * 1e6


def test_vlp16_lasers_fire_2_304_us_apart_in_laser_id_order():
    # VLP-16 manual 63-9243, p. 62: TimeOffset = 55.296 us x sequence + 2.304 us x laser id.
    # Laser id l looks at -15 + l deg (even) or l deg (odd): -15 is laser 0, +1 is laser 1,
    # -13 laser 2, ..., +15 laser 15.
    cfg = _preset('velodyne_vlp16')
    elevation = np.degrees(build_beams(cfg).ring_elevation_rad)
    laser_id = np.rint(np.where(elevation < 0, elevation + 15, elevation))
    # bound: float64 firing offsets (us) <= 40 us, a few ulps (7e-15) << 1e-9; approx rel 1e-6
    np.testing.assert_allclose(_offsets_us(cfg), 2.304 * laser_id, atol=1e-9)
    by_deg = dict(zip(np.rint(elevation).astype(int), _offsets_us(cfg)))
    assert by_deg[-15] == 0.0 and by_deg[1] == pytest.approx(2.304)
    # bound: float64 k x 2.304 us, ulps; approx rel 1e-6
    assert by_deg[-13] == pytest.approx(4.608) and by_deg[15] == pytest.approx(34.56)
    # The whole sequence, 16 x 2.304 + 18.43 = 55.296 us, fits one 0.2 deg column (55.6 us).
    assert max(by_deg.values()) < 1e6 / (10.0 * 1800)


def test_vlp32c_fires_pairs_of_lasers():
    # VLP-32C manual 63-9325 Rev C, p. 62: lasers 0 and 1 fire together, then 2 and 3, ...
    # 2.304 us apart; Table 9-6: laser 0 is at -25 deg, laser 1 at -1, laser 28 at -2, 29 at
    # +15, 30 at +10.333, 31 at -1.333.
    cfg = _preset('velodyne_vlp32c')
    by_deg = dict(zip(np.round(np.degrees(build_beams(cfg).ring_elevation_rad), 3),
                      _offsets_us(cfg)))
    assert by_deg[-25.0] == by_deg[-1.0] == 0.0
    # bound: float64 k x 2.304 us against the same product; approx rel 1e-6 absorbs ulps
    assert by_deg[-1.667] == by_deg[-15.639] == pytest.approx(2.304)       # lasers 2, 3
    assert by_deg[15.0] == by_deg[-2.0] == pytest.approx(14 * 2.304)       # lasers 29, 28
    assert by_deg[10.333] == by_deg[-1.333] == pytest.approx(15 * 2.304)   # lasers 30, 31


def test_hdl64e_blocks_fire_in_parallel():
    # HDL-64E S2 manual, Appendix G: laser n and n + 32 fire at the same instant, lasers of a
    # block 23.30 / 32 us apart.
    cfg = _preset('velodyne_hdl64e')
    offsets = _offsets_us(cfg)
    assert len(set(np.round(offsets, 4))) == 32
    # bound: datasheet offsets printed to 0.01 us (23.30 / 32 = 0.728): 1e-4 us >> float64 ulps
    np.testing.assert_allclose(np.sort(offsets)[::2], np.arange(32) * 23.30 / 32, atol=1e-4)


@pytest.mark.parametrize('name', ['ouster_os1_64', 'ouster_os1_128'])
def test_an_os1_fires_its_column_at_once(name):
    assert np.all(_offsets_us(_preset(name)) == 0.0)


def test_livox_lines_fire_one_point_interval_apart():
    cfg = _preset('livox_avia')
    beams = build_beams(cfg)
    dt = 1.0 / 240_000.0
    # bound: float64 k x dt against the same products, a few ulps (2e-16 rel) << 1e-12
    np.testing.assert_allclose(beams.ring_time_offset_s, np.arange(6) * dt, rtol=1e-12)
    np.testing.assert_allclose(beams.column_time_s[:3], [0.0, 6 * dt, 12 * dt], rtol=1e-12)


def test_offsets_must_fit_in_a_column():
    with pytest.raises(ConfigError, match='ring_time_offsets_us'):
        _preset('velodyne_vlp16', horizontal_samples=3600, rate_hz=20.0)   # 13.9 us columns
    with pytest.raises(ConfigError, match='ring_time_offsets_us'):
        _preset('velodyne_vlp16', ring_time_offsets_us=[0.0] * 15)


def test_point_times_in_a_sweep_add_the_laser_offset_to_the_column_time(materials):
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'drum', 'type': 'cylinder', 'radius_m': 20.0, 'height_m': 30.0,
         'pose': {'xyz': [0, 0, 0]}, 'material': 'concrete'}]})
    cfg = replace(_preset('velodyne_vlp16'), sub_rays=1, noise_enabled=False, weather=False,
                  min_range_m=0.5, overlap_range_m=0.0)
    sim = LidarSimulator(cfg, world, materials)
    res = sim.scan(BodyTwist(pose_matrix_deg([0, 0, 1.0], [0, 0, 0])), 0.0)
    beams = sim.beams
    assert len(res.points) == beams.n_beams             # every beam sees the drum
    col, ring = beams.column[res.beam], beams.ring[res.beam]
    want = beams.column_time_s[col] + beams.ring_time_offset_s[ring]
    # bound: float32 seconds below 0.125 s: half a spacing is 3.7e-9 s < 1e-8
    np.testing.assert_allclose(res.points['time'], want, atol=1e-8)   # float32 seconds
    inside = res.points['time'] - beams.column_time_s[col]
    np.testing.assert_allclose(inside[ring == 15], 34.56e-6, atol=1e-8)
    assert res.points['time'].max() < 0.1
