"""A sweep computed in beam ranges (parts.py): the bytes of the whole sweep, whatever the split."""

import queue
import threading

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.split import merge_parts, split_beams
from ubot_lidar_sim.core.physics import atmosphere
from ubot_lidar_sim.core.physics.atmosphere import Medium
from ubot_lidar_sim.core.physics.echoes import contributions_from_hits
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import ConstantTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.raycast.hits import Hits
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

PATH = ConstantTwist(pose_matrix_deg([0, -12, 1.6], [0, 0, 10]),
                     twist_from_cli(2.0, 0.0, 0.0, 0.0, 0.0, 15.0))
RAIN = Weather(rain_mm_h=20.0, visibility_m=1500.0)
FOG_SMOKE = Weather(visibility_m=150.0, puddle_depth_m=0.02,
                    smoke=[[2.0, -8.0, 1.5, 2.0], [-3.0, -14.0, 1.0, 1.5]],
                    smoke_density=[0.6, 0.9])


@pytest.fixture(scope='module')
def demo():
    materials = MaterialTable.load()
    return World.load('demo', materials), materials


class _ThreadPeer:
    """A parts.py peer between threads: queues for the carried values, a barrier for minmax."""

    def __init__(self, part, inboxes, gathered, barrier):
        self.part, self.parts = part, len(inboxes)
        self._inboxes, self._gathered, self._barrier = inboxes, gathered, barrier
        self._held = {}

    def receive(self, name):
        while name not in self._held:
            key, value = self._inboxes[self.part].get(timeout=60)
            self._held[key] = value
        return self._held.pop(name)

    def send(self, name, part, value):
        self._inboxes[part].put((name, value))

    def minmax(self, lo, hi):
        self._gathered[self.part] = (lo, hi)
        self._barrier.wait(timeout=60)
        out = (min(g[0] for g in self._gathered), max(g[1] for g in self._gathered))
        self._barrier.wait(timeout=60)
        return out


def _in_parts(sim, bounds, stamp, weather, k):
    """Run the parts b_i..b_i+1 in threads (they wait on each other) and merge them."""
    n = len(bounds) - 1
    inboxes = [queue.Queue() for _ in range(n)]
    gathered, barrier = [None] * n, threading.Barrier(n)
    poses = PATH(sim.pose_times(stamp))
    results, errors = [None] * n, []

    def run(i):
        try:
            results[i] = sim.scan_part(poses, stamp, weather, k, (bounds[i], bounds[i + 1]),
                                       _ThreadPeer(i, inboxes, gathered, barrier))
        except Exception as exc:  # reported below, in the test's thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    return merge_parts(results)


def _assert_same(whole, split):
    assert whole.points.tobytes() == split.points.tobytes()
    for name in ('beam', 'too_close', 'hit_range_m'):
        a, b = getattr(whole, name), getattr(split, name)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert (whole.n_echoes, whole.n_beams) == (split.n_echoes, split.n_beams)


CASES = [
    ('rain_dual', RAIN, {'sub_rays': 7, 'return_mode': 'dual_strongest_last'}),
    ('fog_smoke_puddles_triple', FOG_SMOKE,
     {'sub_rays': 7, 'return_mode': 'triple_first_strongest_last', 'max_hits_per_sub_ray': 6}),
    ('pulse_ring_table_end_stamp', RAIN,
     {'sub_rays': 7, 'return_mode': 'dual_first_last', 'pulse_length_m': 2.5,
      'ring_range_at_10pct_m': tuple(60.0 + k for k in range(16)), 'stamp_at': 'end'}),
    ('noise_off_last', Weather(rain_mm_h=2.0, surface_wetness=0.4),
     {'sub_rays': 1, 'return_mode': 'last', 'noise_enabled': False}),
    # Rain and snow clutter (each on its stream), fog's soft return and snow cover; the 1 m form
    # factor of document 001 lets enough clutter through to exercise the hand-on.
    ('rain_snow_fog_cover', Weather(rain_mm_h=5.0, snowfall_rate_mm_h=5.0, visibility_m=300.0,
                                    snow_depth_m=0.05),
     {'sub_rays': 1, 'return_mode': 'dual_strongest_last', 'overlap_range_m': 1.0}),
]


@pytest.mark.parametrize('name,weather,overrides', CASES, ids=[c[0] for c in CASES])
def test_a_sweep_split_at_random_beams_gives_the_bytes_of_the_whole_sweep(demo, name, weather,
                                                                          overrides):
    cfg = LidarConfig(channels=16, horizontal_samples=360, seed=5, **overrides)
    sim = LidarSimulator(cfg, *demo)
    rng = np.random.default_rng(11)
    for k in (0, 1):
        whole = sim.scan(PATH, 0.1 * k, weather, k)
        assert len(whole.points) > 1000
        for n_parts in (2, 3, 4):
            # Mid-ring splits included: the cuts are any beams.
            inner = np.sort(rng.choice(np.arange(1, cfg.channels * 360), n_parts - 1, False))
            bounds = np.r_[0, inner, cfg.channels * 360]
            _assert_same(whole, _in_parts(sim, bounds, 0.1 * k, weather, k))


def test_a_second_granular_medium_keeps_a_split_sweep_byte_identical(demo, monkeypatch):
    # A new precipitation effect (here fake flakes) registers in PRECIPITATION and draws its
    # clutter after the rain's from the same stream, handed on between the parts.
    def flakes(cfg, weather):
        return Medium('flakes', 1e-4, 1e-3 * weather.rain_mm_h, True, 300.0)

    monkeypatch.setattr(atmosphere, 'PRECIPITATION', atmosphere.PRECIPITATION + (flakes,))
    cfg = LidarConfig(channels=16, horizontal_samples=360, sub_rays=1, seed=4)
    sim = LidarSimulator(cfg, *demo)
    whole = sim.scan(PATH, 0.0, RAIN, 0)
    for bounds in ([0, 2000, 5760], [0, 700, 701, 4000, 5760]):
        _assert_same(whole, _in_parts(sim, bounds, 0.0, RAIN, 0))


def test_a_part_without_hits_or_echoes_still_hands_the_streams_on(demo):
    # Beams 0..360 are ring 0, 15 deg up: in the demo world from this pose they hit little.
    cfg = LidarConfig(channels=16, horizontal_samples=360, sub_rays=7, seed=2,
                      return_mode='dual_strongest_last')
    sim = LidarSimulator(cfg, *demo)
    whole = sim.scan(PATH, 0.0, RAIN, 0)
    for bounds in ([0, 1, 5760], [0, 5759, 5760], [0, 1, 2, 5760]):
        _assert_same(whole, _in_parts(sim, bounds, 0.0, RAIN, 0))


def test_split_beams_gives_contiguous_non_empty_ranges_of_about_equal_cost():
    assert split_beams(10, 2).tolist() == [0, 5, 10]
    # Three times the cost per beam in the first half: a third of the beams per part... of cost.
    cost = np.r_[np.full(14400, 3.0), np.full(14400, 1.0)]
    assert split_beams(28800, 2, cost).tolist() == [0, 9600, 28800]
    # All the cost on the last beam: the other ranges still get one beam each.
    assert split_beams(10, 3, np.r_[np.zeros(9), 1.0]).tolist() == [0, 8, 9, 10]
    assert split_beams(1, 4).tolist() == [0, 1]
    assert split_beams(7, 1).tolist() == [0, 7]


def _hits_rows(hits, lo, hi, ray0):
    """Return the Hits rows lo..hi with rays renumbered from ray0 (a part's own trace)."""
    cols = {name: (None if getattr(hits, name) is None else getattr(hits, name)[lo:hi])
            for name in Hits.__dataclass_fields__}
    cols['ray'] = cols['ray'] - ray0
    return Hits(**cols)


def test_the_running_foliage_sum_carried_over_a_split_gives_the_float64_powers(demo):
    # Down the crop rows and into the tree crowns: thousands of foliage layers, so the running
    # log-sum is large and its rounding shows in the last bits of the powers.
    world, materials = demo
    cfg = LidarConfig(channels=16, horizontal_samples=720, sub_rays=7, max_hits_per_sub_ray=6)
    sim = LidarSimulator(cfg, world, materials)
    origins, dirs, _ = sim.rays(PATH, 0.0)
    hits = world.trace(origins, dirs, 100.0, max_hits=6)
    n_sub = 7
    whole = contributions_from_hits(cfg, materials, hits, sim.weights, sim.beams.ring)
    assert np.count_nonzero(hits.foliage) > 5000
    cut_beam = 5 * 720 + 311
    row = int(np.searchsorted(hits.ray, cut_beam * n_sub))
    inboxes = [queue.Queue(), queue.Queue()]
    peers = [_ThreadPeer(i, inboxes, [None, None], threading.Barrier(2)) for i in (0, 1)]
    first = contributions_from_hits(cfg, materials, _hits_rows(hits, 0, row, 0), sim.weights,
                                    sim.beams.ring[:cut_beam], peer=peers[0])
    second = contributions_from_hits(
        cfg, materials, _hits_rows(hits, row, len(hits), cut_beam * n_sub), sim.weights,
        sim.beams.ring[cut_beam:], peer=peers[1])
    joined = np.concatenate([first.power_counts, second.power_counts])
    assert joined.tobytes() == whole.power_counts.tobytes()
    # Without the carried sum the second part's powers are not the same bits.
    alone = contributions_from_hits(
        cfg, materials, _hits_rows(hits, row, len(hits), cut_beam * n_sub), sim.weights,
        sim.beams.ring[cut_beam:])
    assert alone.power_counts.tobytes() != second.power_counts.tobytes()
