"""A world may hold 1,024 actors (one shared scene), and one more is refused."""

import math
import subprocess
import sys

import numpy as np
from test_dataset_faults import _env, _one_line
from ubot_lidar_sim.core.raycast.actor_scene import ActorScene
from ubot_lidar_sim.core.raycast.geometry import Geometry
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.core.world.schema import MAX_ACTORS
from ubot_lidar_sim.core.world.shapes import boxes
import yaml

RING = ['--set', 'channels=4', '--set', 'horizontal_samples=2048', '--set',
        'vertical_fov_up_deg=1', '--set', 'vertical_fov_down_deg=1', '--set',
        'max_range_m=100', '--set', 'noise_enabled=false', '--set', 'model=geometric']
HALF_M = 0.05       # the posts' half width


def _posts(n):
    """Return n posts 0.1 x 0.1 x 3 m on four rings (20, 23, 26, 29 m) around the origin."""
    out = []
    for k in range(n):
        a, r = 2.0 * math.pi * k / n, 20.0 + (k % 4) * 3.0
        out.append({'name': f'post{k}', 'type': 'box', 'size_m': [2 * HALF_M, 2 * HALF_M, 3],
                    'motion': {'pose': [r * math.cos(a), r * math.sin(a), 1.0, 0, 0, 0]}})
    return out


def _scan(tmp_path, n):
    world = tmp_path / 'world.yaml'
    world.write_text(yaml.safe_dump({'objects': [
        {'name': 'floor', 'type': 'plane', 'size_m': [200, 200]}], 'actors': _posts(n)}))
    out = tmp_path / 'scan.npz'
    r = subprocess.run([sys.executable, '-m', 'ubot_lidar_sim', 'scan', '--world', str(world),
                        *RING, '--out', str(out)], capture_output=True, text=True, env=_env(),
                       timeout=600)
    return r, out


def test_a_world_of_1024_actors_scans_and_sees_every_actor_where_it_stands(tmp_path):
    r, out = _scan(tmp_path, MAX_ACTORS)
    assert r.returncode == 0, (r.returncode, r.stderr[-500:])     # it was 139 (SIGSEGV)
    z = np.load(out)
    iid = z['instance_id'].astype(np.int64)
    hit = iid > 0
    assert len(set(iid[hit])) == MAX_ACTORS
    k = iid[hit] - 1
    a, rad = 2.0 * math.pi * k / MAX_ACTORS, 20.0 + (k % 4) * 3.0
    off = np.maximum(np.abs(z['x'][hit] - rad * np.cos(a)), np.abs(z['y'][hit] - rad * np.sin(a)))
    # bound: on the post's face (HALF_M) plus float32 points at 29 m (3.5 um) and 1 mm slack
    assert off.max() <= HALF_M + 1e-3


def test_one_actor_beyond_the_limit_is_refused_with_one_line(tmp_path):
    r, _ = _scan(tmp_path, MAX_ACTORS + 1)
    assert r.returncode == 2
    line = _one_line(r.stderr)
    assert 'actors' in line and f'at most {MAX_ACTORS}' in line, line


def test_the_shared_scene_hits_what_a_scene_per_actor_hits():
    rng = np.random.default_rng(4)
    # Boxes of different sizes, all centred near their own origin: they overlap in their frames.
    geoms = [Geometry(*boxes(rng.uniform(-0.3, 0.3, 3), rng.uniform(0.2, 3.0, 3)))
             for _ in range(40)]
    scene = ActorScene(geoms, Open3dCaster)
    origin = rng.uniform(-6.0, 6.0, (500, 3))
    target = rng.uniform(-1.0, 1.0, (500, 3))
    d = target - origin
    rays = np.hstack([origin, d / np.linalg.norm(d, axis=1)[:, None]]).astype(np.float32)
    for k in (0, 7, 39):
        own = Open3dCaster([geoms[k]]).cast_rays(rays)
        got = scene.cast_rays(k, rays)
        t_own = np.asarray(own.t, np.float64)
        assert np.array_equal(np.isfinite(got.t), np.isfinite(t_own))
        hit = np.isfinite(t_own)
        assert hit.sum() > 50 and (got.obj[hit] == k).all()
        # bound: two float32 casts from origins up to 12 m apart: a few eps32 x 12 m (~5 um)
        np.testing.assert_allclose(got.t[hit], t_own[hit], rtol=0, atol=2e-5)
        assert np.array_equal(got.primitive[hit], np.asarray(own.primitive)[hit])
