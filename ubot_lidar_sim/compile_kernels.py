"""
Compile the package's numba kernels into their on-disk cache before a sweep needs them.

The kernels (raycast/layer_kernel.py, quadrics.py, volumes.py, tracer.py, ground_texture.py,
actor_casting.py; physics/radiometry_passes.py, rules.py; sensors/sweep_passes.py,
footprint_rules.py, adaptive_footprint.py) compile on first use and are cached beside their source
(``cache=True``; stamped with every kernel source: core/numba_cache.py). A fresh install would
compile them inside the first scan of the first node, 5-20 s on 2 cores.
``python -m ubot_lidar_sim.compile_kernels`` (scripts/bootstrap.sh runs it on the installed
package after colcon build) runs small sweeps that reach every kernel with the
argument types the sensors pass, so the nodes start from the cache (~0.1 s to load).
"""

import sys
import time

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World


def compile_kernels():
    """Run one small sweep per code path (multi-hit, pulse stretching, single ray, cast)."""
    materials = MaterialTable.load()
    world = World.load('demo', materials)
    pose = BodyTwist(pose_matrix_deg([12.0, 0.0, 1.8], [0.0, 0.0, 90.0]),
                     (1.0, 0.0, 0.0, 0.0, 0.0, 0.1))
    rain = Weather(rain_mm_h=5.0, visibility_m=2000.0)
    for overrides in ({'sub_rays': 7, 'return_mode': 'dual_strongest_last'},
                      {'sub_rays': 1, 'pulse_length_m': 1.0, 'noise_enabled': False}):
        cfg = LidarConfig(channels=4, horizontal_samples=90, **overrides)
        LidarSimulator(cfg, world, materials).scan(pose, 0.0, rain, 0)
    # A direct cast and trace with strided rays (the 2D scanner's origins are a view).
    rays = np.zeros((8, 4, 4))
    rays[:, :3, 3] = [12.0, 0.0, 1.0]
    dirs = np.zeros((8, 2, 3))
    dirs[:, 0] = [1.0, 0.0, 0.0]
    world.cast(rays[:, :3, 3], dirs[:, 0], 50.0)
    world.trace(rays[:, :3, 3].copy(), dirs[:, 0].copy(), 50.0)
    # A world with an actor ahead (raycast/actor_casting.py: the sphere cull, the local rays).
    moving = World.from_dict({'actors': [
        {'name': 'a', 'type': 'box', 'size_m': [1, 1, 1],
         'motion': {'pose': [15, 0, 1, 0, 0, 0], 'twist': [0, 1, 0, 0, 0, 0]}},
        {'name': 'b', 'type': 'box', 'size_m': [1, 1, 1],             # poses.waypoint_poses
         'motion': {'waypoints': [[20, -1, 1], [20, 1, 1]], 'speed_m_s': 1.0}}]},
        materials=materials)
    moving.trace(rays[:, :3, 3].copy(), dirs[:, 0].copy(), 50.0)


def main():
    """Compile the kernels and say how long it took; returns the exit code."""
    t0 = time.perf_counter()
    compile_kernels()
    print(f'compile_kernels: numba kernels compiled and cached in '
          f'{time.perf_counter() - t0:.1f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
