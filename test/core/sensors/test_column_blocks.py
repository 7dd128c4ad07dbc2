"""Column blocks: a sweep cut by firing time, each block traced on its own, merged in order."""

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.sensors.column_blocks import block_columns, merge_columns
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.random_streams import scan_rng
from ubot_lidar_sim.core.sensors.sweep import Sweep

CFG = {'channels': 16, 'horizontal_samples': 360, 'sub_rays': 7, 'seed': 3,
       'return_mode': 'dual_strongest_last', 'max_range_m': 60.0}
RAIN = Weather(rain_mm_h=20.0, visibility_m=1500.0)
PATH = BodyTwist(pose_matrix_deg([0, -12, 1.6], [0, 0, 10]),
                 twist_from_cli(2.0, 0.0, 0.0, 0.0, 0.0, 15.0))


@pytest.fixture(scope='module')
def demo(demo_world, materials):
    return demo_world, materials


def test_blocks_cut_the_columns_in_firing_order_into_equal_counts():
    # 10 columns firing cw from 180 deg: column 0 first, then 9, 8, ..., 1 (docs/physics.md,
    # "Scan geometry and motion distortion").
    times = np.array([0.0, 9, 8, 7, 6, 5, 4, 3, 2, 1]) * 0.01
    blocks = block_columns(times, 3)
    assert [b.tolist() for b in blocks] == [[0, 8, 9], [4, 5, 6, 7], [1, 2, 3]]   # cuts 0 3 7 10
    assert [len(b) for b in block_columns(np.zeros(10), 4)] == [2, 3, 3, 2]   # 0 2 5 8 10
    for first, second in zip(blocks, blocks[1:]):     # a block fires before the next one
        assert times[first].max() < times[second].min()


def test_a_sweep_simulator_with_blocks_fires_each_block_after_the_one_before(demo):
    sim = LidarSimulator(LidarConfig(**CFG, column_blocks=4), *demo)
    assert [len(c) for c in sim.block_columns] == [90, 90, 90, 90]
    ends = [sim.block_pose_times(0.0, j, j + 1)[1:] for j in range(4)]
    for first, second in zip(ends, ends[1:]):
        assert first.max() < second.min()
    np.testing.assert_array_equal(np.sort(np.concatenate(sim.block_columns)), np.arange(360))


def test_the_geometric_model_gives_the_same_points_whole_or_in_blocks(demo):
    # Nothing random: one ray per beam, so only the order of computing changes.
    whole = LidarSimulator(LidarConfig(**CFG, model='geometric'), *demo).scan(PATH, 0.3)
    blocks = LidarSimulator(LidarConfig(**CFG, model='geometric', column_blocks=7),
                            *demo).scan(PATH, 0.3)
    assert len(whole.points) > 3000
    assert whole.points.tobytes() == blocks.points.tobytes()
    np.testing.assert_array_equal(whole.beam, blocks.beam)
    np.testing.assert_array_equal(whole.hit_range_m, blocks.hit_range_m)


def test_blocks_computed_apart_and_in_any_order_merge_into_the_sweep(demo):
    cfg = LidarConfig(**CFG, column_blocks=3)
    sim = LidarSimulator(cfg, *demo)
    whole = sim.scan(PATH, 0.5, RAIN, 5)
    parts = {j: sim.scan_blocks(PATH(sim.block_pose_times(0.5, j, j + 1)),
                                Sweep(0.5, RAIN, 5), j, j + 1) for j in (2, 0, 1)}
    merged, _ = merge_columns([parts[j] for j in (2, 0, 1)],
                              [sim.block_columns[j] for j in (2, 0, 1)], cfg.channels)
    assert merged.points.tobytes() == whole.points.tobytes()
    assert np.all(np.diff(whole.beam) >= 0)                 # beam order, ring-major
    np.testing.assert_array_equal(whole.points['ring'], whole.beam // 360)
    # Two blocks of the three: the union of their columns, ring-major.
    pair = sim.scan_blocks(PATH(sim.block_pose_times(0.5, 1, 3)), Sweep(0.5, RAIN, 5), 1, 3)
    union = np.sort(np.concatenate(sim.block_columns[1:]))
    assert pair.n_beams == 16 * union.size
    in_pair = np.isin(whole.beam % 360, union)
    assert pair.points.tobytes() == whole.points[in_pair].tobytes()


def test_each_block_draws_random_streams_of_its_own():
    # Block j appends j to the stream key; a whole sweep keeps the four-entry key.
    draws = [scan_rng(3, 'lidar_3d', 5, 0, block).standard_normal(4) for block in (None, 0, 1)]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    np.testing.assert_array_equal(draws[0], scan_rng(3, 'lidar_3d', 5, 0).standard_normal(4))


def test_blocks_keep_the_rain_statistics_of_the_whole_sweep(demo):
    # The same physics per beam with other draws: the point counts agree within their spread.
    def counts(n_blocks):
        sim = LidarSimulator(LidarConfig(**CFG, column_blocks=n_blocks), *demo)
        return np.array([len(sim.scan(PATH, 0.1 * k, RAIN, k).points) for k in range(6)])

    whole, blocks = counts(1), counts(6)
    spread = np.hypot(whole.std(ddof=1), blocks.std(ddof=1)) / np.sqrt(6)
    # bound: 4 standard errors of the difference of two 6-scan means, + 1 point (integer counts)
    assert abs(whole.mean() - blocks.mean()) < 4.0 * spread + 1.0


@pytest.mark.parametrize('params', [{'column_blocks': 361},
                                    {'column_blocks': 2, 'pattern_type': 'rosette'}])
def test_column_blocks_beyond_the_columns_or_on_a_rosette_are_refused(params):
    with pytest.raises(ConfigError, match='column_blocks'):
        LidarConfig(**{**CFG, **params})
