"""The kernel cache is stamped with every kernel source of the package (core/numba_cache.py)."""

import os
from pathlib import Path
import subprocess
import sys
import textwrap

from ubot_lidar_sim.core import numba_cache
from ubot_lidar_sim.core.raycast import layer_kernel

_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    from ubot_lidar_sim.core.world.world import World
    ball = {'name': 'b', 'type': 'sphere', 'radius_m': 1.0, 'pose': {'xyz': [5.0, 0.0, 0.0]},
            'material': 'concrete'}
    world = World.from_dict({'objects': [ball]})
    print(repr(float(world.trace(np.zeros((1, 3)), np.array([[1.0, 0.0, 0.0]]), 50.0).range_m[0])))
""")


def test_a_package_kernel_is_stamped_with_every_kernel_source():
    locator = layer_kernel.finish_layer._cache._impl.locator
    assert type(locator).__name__ in ('_InTree', '_UserWide', '_UserProvided')
    assert locator.get_source_stamp() == numba_cache.kernel_sources_digest()


def test_editing_a_helper_in_another_file_recompiles_the_kernels_that_inline_it(tmp_path):
    # A copy of the package traces a sphere (its kernels compile and are cached), then a helper
    # that layer_kernel.finish_layer inlines (quadrics.quadric_hit) is edited: the next run's
    # range follows the edit; numba's own per-file stamp would load finish_layer's cached code.
    root = Path(layer_kernel.__file__).resolve().parents[3]
    # A source tree: the package and its config/ (the world's material table).
    for part in ('ubot_lidar_sim', 'config'):
        subprocess.run(['cp', '-r', str(root / part), str(tmp_path)], check=True)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE='1')
    run = [sys.executable, '-c', _SCRIPT, str(tmp_path)]
    for cached in tmp_path.rglob('*.nb[ic]'):
        cached.unlink()
    before = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    quadrics = tmp_path / 'ubot_lidar_sim' / 'core' / 'raycast' / 'quadrics.py'
    quadrics.write_text(quadrics.read_text().replace('return root, r0', 'return root + 1.0, r0'))
    after = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert float(before) == 4.0 and float(after) == 5.0
