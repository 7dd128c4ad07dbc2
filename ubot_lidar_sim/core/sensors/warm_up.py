"""
Reach every numba kernel of the package once, with the argument types the sensors pass.

Run at build (compile_kernels.py) it compiles them into their on-disk cache; run at the start of
an offline command (the dataset's in-process run, ``scan``: ~0.1-0.2 s more) with Ctrl-C held back
(pipeline/interrupts.deferred) it loads them from that cache before any sweep. A Ctrl-C that
lands inside numba's first load of a kernel is not safe (each once in 48 Ctrl-Cs beside two
CPU hogs): it left a kernel half-loaded ("RuntimeError: no compiled object yet for <Library
'rotate_sub_rays'>", exit 1), or it was raised in llvmlite's ObjectRef.__del__, where Python
only prints "Exception ignored", and the run went on to exit 0. From a warm cache this takes
~1.4 s on 2 cores.
"""

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics import radiometry
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, FixedPose, pose_matrix_deg
from ubot_lidar_sim.core.raycast.sensor_mount import MountedPose, pattern_rays, SensorFrame
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World


def run_every_kernel() -> None:
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
    # The echo of a smoke volume around the sensor (physics/smoke_inside.py): backscatter of
    # one material, reached only once a sensor is inside smoke.
    radiometry.backscatter(materials, 0, 1.0, 0.0)
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
    # The same actors holding one pose each (a robot's body: raycast/fixed_actors.py).
    held = {name: FixedPose(pose_matrix_deg(xyz, [0.0, 0.0, 0.0]))
            for name, xyz in (('a', [15.0, 0.0, 1.0]), ('b', [20.0, 0.0, 1.0]))}
    moving.trace(rays[:, :3, 3].copy(), dirs[:, 0].copy(), 50.0, actor_poses=held)
    # The same actors rigid with the sensor (a robot's body: raycast/sensor_mount.py).
    sensor = SensorFrame(pose_matrix_deg([12.0, 0.0, 1.0], [0.0, 0.0, 0.0]),
                         pattern_rays(dirs[:, 0]))
    mounts = {name: MountedPose(sensor, pose_matrix_deg(xyz, [0.0, 0.0, 0.0]))
              for name, xyz in (('a', [3.0, 0.0, 0.0]), ('b', [8.0, 0.0, 0.0]))}
    moving.trace(rays[:, :3, 3].copy(), dirs[:, 0].copy(), 50.0, actor_poses=mounts)
