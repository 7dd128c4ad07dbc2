"""
Gazebo-form SDF world case (issue 52): 150 models with relative file:// meshes and a population.

A SYNTHETIC world laid out as the AWS RoboMaker worlds are (no public world is reachable here:
docs/performance.md, "SDF worlds"): a package directory holding ``worlds/w.world`` and
``models/NAME/model.sdf``, each model's mesh named ``file://models/NAME/meshes/NAME.stl``, a
path relative to the package root that Gazebo finds through GAZEBO_RESOURCE_PATH; 150 models
(each its own STL bytes: boxes and cylinders of a few hundred triangles), a comment with ``--``
as in gz-sim's example worlds, and a ``<population>`` of 100 boxes (a 10 x 10 grid). Cold: an
empty mesh cache; warm: the same load again; median over repeats of the warm one.

Usage: python benchmarks/bench_sdf_gazebo.py [--repeats 5]
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
import trimesh  # noqa: E402,I100

from ubot_lidar_sim.core.world.world import World  # noqa: E402

COLUMNS = ('case', 'models', 'population', 'objects', 'triangles', 'cold_load_s',
           'warm_load_s_median')
N_MODELS = 150
POPULATION = ('<population name="cans"><pose>0 60 0 0 0 0</pose><distribution><type>grid</type>'
              '<rows>10</rows><cols>10</cols><step>1.5 1.5 0</step></distribution>'
              '<model name="can"><static>true</static><link name="l"><visual name="v"><geometry>'
              '<cylinder><radius>0.1</radius><length>0.3</length></cylinder></geometry></visual>'
              '</link></model></population>')


def _mesh(k):
    """Return a small mesh, different for every k (its own bytes, its own cache entry)."""
    if k % 2:
        return trimesh.creation.box([1.0 + 0.01 * k, 0.5, 1.5])
    return trimesh.creation.cylinder(0.3 + 0.002 * k, 1.2, sections=64)


def build(root):
    """Write the package under root; returns the world path."""
    includes = []
    for k in range(N_MODELS):
        name = f'shelf_{k:03d}'
        d = root / 'models' / name
        (d / 'meshes').mkdir(parents=True)
        _mesh(k).export(d / 'meshes' / f'{name}.stl')
        (d / 'model.sdf').write_text(
            f'<sdf version="1.6"><model name="{name}"><static>true</static><link name="link">'
            f'<visual name="visual"><geometry><mesh><uri>file://models/{name}/meshes/{name}.stl'
            '</uri></mesh></geometry></visual></link></model></sdf>')
        x, y = -30 + 4 * (k % 15), -20 + 4 * (k // 15)
        includes.append(f'<include><uri>file://models/{name}</uri><name>{name}</name>'
                        f'<pose>{x} {y} 0.6 0 0 0</pose></include>')
    world = root / 'worlds' / 'w.world'
    world.parent.mkdir()
    world.write_text('<?xml version="1.0"?>\n<sdf version="1.6"><world name="w">'
                     '<!-- gz sim -r w.world -- a comment as in gz-sim -->'
                     + ''.join(includes) + POPULATION + '</world></sdf>')
    return world


def run(repeats=5):
    """Return the bench row (one dict of COLUMNS)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        world_path = build(root)
        os.environ['UBOT_LIDAR_SIM_MESH_CACHE'] = str(root / 'cache')
        os.environ['GAZEBO_RESOURCE_PATH'] = str(root)
        t0 = time.perf_counter()
        World.load(world_path)
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            world = World.load(world_path)
            warm.append(time.perf_counter() - t0)
    return {'case': 'GAZEBO_forms_synthetic', 'models': N_MODELS, 'population': 100,
            'objects': len(world.objects), 'triangles': world.n_triangles,
            'cold_load_s': round(cold, 2), 'warm_load_s_median': round(statistics.median(warm), 2)}


def main(argv=None):
    """Print the row."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--repeats', type=int, default=5)
    row = run(parser.parse_args(argv).repeats)
    print('  '.join(COLUMNS))
    print('  '.join(str(row[c]) for c in COLUMNS))


if __name__ == '__main__':
    main()
