"""
SDF world case (issue 39): a warehouse of 50 COLLADA meshes, its load and cast times.

Its load time with a cold and a warm mesh cache, and the cast cost of that world against the
demo world.

No real Gazebo warehouse is reachable here (GitHub is not; Debian has libsdformat and the SDF
spec files but no Gazebo world or model data, and PyPI none that ships the AWS small
warehouse), so the world is SYNTHETIC: 50 generated COLLADA meshes (shelves of boxes,
icospheres, cylinders; each its own bytes), written as Gazebo models under a model path and
included by model:// URIs with Fuel's Ground Plane, as the AWS world is laid out. Cold: an empty
mesh cache; warm: the same load again. Cast: one 64 x 1024 first-hit cast from 1.5 m up at the
origin, median over repeats, against the demo world's.

Usage: python benchmarks/bench_sdf.py [--repeats 10]
"""

import argparse
import os
from pathlib import Path
import statistics
import sys
import tempfile
import time

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402,F401,I100  (the source tree first on sys.path)
import numpy as np  # noqa: E402,I100
import trimesh  # noqa: E402

from ubot_lidar_sim.core.world.world import World  # noqa: E402

COLUMNS = ('case', 'meshes', 'triangles', 'cold_load_s', 'warm_load_s', 'cast_ms_median',
           'demo_cast_ms_median', 'ratio_to_demo')
N_MESHES = 50


def _mesh(k):
    """Return a generated mesh of a few thousand triangles, different for every k."""
    rng = np.random.default_rng(k)
    if k % 3 == 0:      # a shelf: uprights and boards
        parts = [trimesh.creation.box([0.05, 0.6, 2.0], trimesh.transformations
                                      .translation_matrix([x, 0, 1.0])) for x in (-1, 1)]
        parts += [trimesh.creation.box([2.0, 0.6, 0.03], trimesh.transformations
                                       .translation_matrix([0, 0, z])) for z in (0.3, 1.0, 1.7)]
        parts += [trimesh.creation.icosphere(3, 0.15 + 0.05 * rng.random()).apply_translation(
            [rng.uniform(-0.8, 0.8), 0, 0.5]) for _ in range(4)]
        return trimesh.util.concatenate(parts)
    if k % 3 == 1:
        return trimesh.creation.icosphere(4, 0.5 + rng.random()).apply_translation([0, 0, 1])
    return trimesh.creation.cylinder(0.4 + rng.random(), 2.0, sections=512).apply_translation(
        [0, 0, 1])


def build(root):
    """Write the synthetic warehouse under root; returns (world path, model dir, triangles)."""
    models, includes, triangles = root / 'models', [], 0
    for k in range(N_MESHES):
        name = f'part_{k:02d}'
        d = models / name / 'meshes'
        d.mkdir(parents=True)
        mesh = _mesh(k)
        triangles += len(mesh.faces)
        (d / f'{name}.dae').write_bytes(trimesh.exchange.dae.export_collada(mesh))
        (models / name / 'model.sdf').write_text(
            f'<sdf version="1.6"><model name="{name}"><static>true</static><link name="link">'
            f'<visual name="visual"><geometry><mesh><uri>model://{name}/meshes/{name}.dae</uri>'
            '</mesh></geometry></visual><collision name="collision"><geometry><box>'
            '<size>2 1 2</size></box></geometry></collision></link></model></sdf>')
        x, y = -18 + 4 * (k % 10), -12 + 6 * (k // 10)
        includes.append(f'<include><uri>model://{name}</uri><name>{name}</name>'
                        f'<pose>{x} {y} 0 0 0 {0.3 * k}</pose></include>')
    world = root / 'warehouse.world'
    world.write_text('<sdf version="1.6"><world name="warehouse"><include><uri>'
                     'https://fuel.gazebosim.org/1.0/OpenRobotics/models/Ground Plane</uri>'
                     '</include>' + ''.join(includes) + '</world></sdf>')
    return world, models, triangles


def _rays():
    el = np.radians(np.linspace(-22.5, 22.5, 64))
    az = np.radians(np.arange(1024) * 360.0 / 1024)
    e, a = np.meshgrid(el, az, indexing='ij')
    d = np.stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)], -1).reshape(-1, 3)
    return np.tile([0.0, 0.0, 1.5], (d.shape[0], 1)), d


def _cast_ms(world, repeats):
    o, d = _rays()
    world.cast(o, d, 100.0, texture=False)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        world.cast(o, d, 100.0, texture=False)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def run(repeats=10):
    """Return the bench row (one dict of COLUMNS)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        world_path, models, triangles = build(root)
        os.environ['UBOT_LIDAR_SIM_MESH_CACHE'] = str(root / 'cache')
        os.environ['GZ_FUEL_CACHE_PATH'] = str(root / 'fuel')
        t0 = time.perf_counter()
        World.load(world_path, model_paths=[str(models)])
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        world = World.load(world_path, model_paths=[str(models)])
        warm = time.perf_counter() - t0
        cast = _cast_ms(world, repeats)
    demo = _cast_ms(World.load('demo'), repeats)
    return {'case': 'SDF_warehouse_synthetic', 'meshes': N_MESHES,
            'triangles': world.n_triangles, 'cold_load_s': round(cold, 2),
            'warm_load_s': round(warm, 2), 'cast_ms_median': round(cast, 1),
            'demo_cast_ms_median': round(demo, 1), 'ratio_to_demo': round(cast / demo, 2)}


def main(argv=None):
    """Print the row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--repeats', type=int, default=10)
    row = run(parser.parse_args(argv).repeats)
    print('  '.join(COLUMNS))
    print('  '.join(str(row[c]) for c in COLUMNS))


if __name__ == '__main__':
    main()
