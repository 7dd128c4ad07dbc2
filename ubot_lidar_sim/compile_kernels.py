"""
Compile the package's numba kernels into their on-disk cache before a sweep needs them.

The kernels (raycast/layer_kernel.py, quadrics.py, volumes.py, tracer.py, ground_texture.py,
actor_casting.py, actor_scene.py, fixed_actors.py, sensor_mount.py; physics/radiometry_passes.py,
rules.py; sensors/sweep_passes.py, footprint_rules.py, adaptive_footprint.py) compile on first
use and are cached beside their source (``cache=True``; stamped with every kernel source:
core/numba_cache.py).
A fresh install would compile them inside the first scan of the first node, 5-20 s on 2 cores.
``python -m ubot_lidar_sim.compile_kernels`` (scripts/bootstrap.sh runs it on the installed package
after colcon build) runs small sweeps that reach every kernel with the argument types the sensors
pass (core/sensors/warm_up.py), so the nodes start from the cache.
"""

import sys
import time

from ubot_lidar_sim.core.sensors import warm_up


def main():
    """Compile the kernels and say how long it took; returns the exit code."""
    t0 = time.perf_counter()
    warm_up.run_every_kernel()     # each kernel compiles into its cache on first use
    print(f'compile_kernels: numba kernels compiled and cached in '
          f'{time.perf_counter() - t0:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
