"""Smoke cells that cannot stop a ray are dropped, the rest indexed: the same entry ranges."""

import numpy as np

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics.footprint import sub_ray_directions, sub_ray_pattern
from ubot_lidar_sim.core.raycast.smoke import bounds, cells_that_can_stop, smoke_entry


def reference_entry(origins, dirs, cells, density, radius_scale, threshold, limit_m):
    """
    Return smoke_entry's ranges from its rule over every ray and every cell at once.

    A cell around a ray's origin does not stop it (physics/smoke_inside.py takes it).
    """
    o, d = origins[:, None, :], dirs[:, None, :]
    c, r2 = cells[None, :, :3], (cells[None, :, 3] * radius_scale) ** 2
    tc = d[..., 0] * c[..., 0] + d[..., 1] * c[..., 1] + d[..., 2] * c[..., 2] - \
        np.sum(origins * dirs, axis=1)[:, None]
    oc = o[..., 0] * c[..., 0] + o[..., 1] * c[..., 1] + o[..., 2] * c[..., 2]
    cc = c[..., 0] * c[..., 0] + c[..., 1] * c[..., 1] + c[..., 2] * c[..., 2]
    oc2 = np.sum(origins * origins, axis=1)[:, None] - 2.0 * oc + cc
    b2 = np.maximum(oc2 - tc * tc, 0.0)
    eff = density[None, :] * (1.0 - b2 / r2)
    half = np.sqrt(np.maximum(r2 - b2, 0.0))
    ok = (b2 < r2) & (eff > 0.0) & (eff >= threshold) & (tc + half > 0.0) & (oc2 >= r2)
    best = np.where(ok, np.maximum(tc - half, 0.0), np.inf).min(axis=1)
    return np.where(best < limit_m, best, np.inf)


def sweep_rays(channels=16, samples=360, sub_rays=7, speed_m_s=2.0):
    """Rays of one sweep in the order a LiDAR casts them: origins moving along x."""
    cfg = LidarConfig(channels=channels, horizontal_samples=samples, sub_rays=sub_rays)
    beams = build_beams(cfg)
    offsets, _ = sub_ray_pattern(cfg.sub_rays, cfg.divergence_mrad)
    dirs = sub_ray_directions(beams.dir_sensor, offsets)
    t = np.repeat(np.tile(np.linspace(0.0, 0.1, samples), channels), len(offsets))
    origins = np.stack([speed_m_s * t, np.zeros_like(t), np.full_like(t, 1.6)], axis=1)
    return origins, dirs


def random_smoke(rng, k, density):
    cells = np.c_[rng.uniform(-40.0, 40.0, (k, 2)), rng.uniform(0.0, 5.0, k),
                  rng.uniform(0.5, 3.0, k)]
    return cells, np.full(k, density) if np.isscalar(density) else density


def test_smoke_too_thin_to_stop_a_ray_is_dropped_and_changes_nothing(demo_world):
    rng = np.random.default_rng(0)
    origins, dirs = sweep_rays(sub_rays=1)
    cells, density = random_smoke(rng, 1024, 0.04)         # below the threshold 0.05
    assert cells_that_can_stop(bounds(origins), cells, density, 1.0, 0.05, 100.0).size == 0
    world = demo_world
    clear = world.trace(origins, dirs, 100.0)
    thin = world.trace(origins, dirs, 100.0, smoke=cells, smoke_density=density)
    for name in ('ray', 'range_m', 'material', 'smoke', 'obj'):
        np.testing.assert_array_equal(getattr(thin, name), getattr(clear, name), err_msg=name)


def test_smoke_out_of_reach_is_dropped():
    origins, dirs = sweep_rays(sub_rays=1)
    cells = np.array([[150.0, 0.0, 1.0, 3.0], [0.0, -103.0, 1.0, 2.0], [0.0, 90.0, 1.0, 2.0]])
    kept = cells_that_can_stop(bounds(origins), cells, np.ones(3), 1.0, 0.05, 100.0)
    assert kept.tolist() == [2]          # the surfaces of the first two are 147 m and 101 m away


def test_indexed_smoke_gives_the_entry_ranges_of_every_ray_against_every_cell():
    rng = np.random.default_rng(1)
    origins, dirs = sweep_rays(channels=8, samples=180, sub_rays=7)
    cells, _ = random_smoke(rng, 300, 0.0)
    density = rng.uniform(0.0, 1.0, 300)
    cells[:3, :3] = origins[[0, 500, 9000]]          # rays start inside three cells
    limit = rng.uniform(5.0, 60.0, len(origins))
    for order in (np.arange(len(origins)), rng.permutation(len(origins))):
        o, d, lim = origins[order], dirs[order], limit[order]
        got = smoke_entry(o, d, cells, density, 1.3, 0.05, lim)
        want = reference_entry(o, d, cells, density, 1.3, 0.05, lim)
        assert np.isfinite(want).sum() > 1000 and not (want == 0.0).any()
        np.testing.assert_array_equal(got, want)
