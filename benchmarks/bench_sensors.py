"""
laser_scan (case D: 1 degree, 30 Hz) and terrain_sensor (case E: 50 Hz) on the demo world.

The bare-cast reference of each is the world's caster casting the same rays once from the
same pose.
"""

from common import bare_cast, paired_median_ms, primary_rays, row
import numpy as np

from ubot_lidar_sim.core.config import from_dict, LaserScanConfig, TerrainConfig
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World


def run(repeats):
    """Cases D and E; returns the bench.json rows."""
    materials = MaterialTable.load()
    world = World.load('demo')
    pose0 = pose_matrix_deg([12.0, 0.0, 0.3], [0.0, 0.0, 90.0])

    cfg = from_dict(LaserScanConfig, {'resolution_deg': 1.0, 'rate_hz': 30.0})
    scanner = LaserScanner(cfg, world, materials)
    pose_at = BodyTwist(pose0, (2.0, 0.0, 0.0, 0.0, 0.0, 2.0 / 12.0))
    state = {'k': 0, 'rays': 0}

    def laser_scan():
        k = state['k']
        result = scanner.scan(pose_at, k / cfg.rate_hz, Weather(), k)
        state['rays'] = int(np.isfinite(result.ranges).sum())
        state['k'] = k + 1

    n = scanner.n_rays
    origins, dirs = primary_rays(cfg.to_lidar_config(), pose0)     # both models' ray count
    ms, bare = paired_median_ms(laser_scan, bare_cast(world, origins, dirs),
                                repeats * 5)
    rows = [row('D', 'laser_scan', 1, 'strongest', 'clear', n, state['rays'], ms, bare,
                cfg.rate_hz)]

    tcfg = from_dict(TerrainConfig, {'rate_hz': 50.0})
    terrain = TerrainSensor(tcfg, world)
    base = pose_matrix_deg([12.0, 0.0, 0.5], [0.0, 0.0, 90.0])
    result = terrain.sample(base)
    starts = np.asarray(result.start_loc, dtype=np.float32)
    ends = np.asarray(result.end_loc, dtype=np.float32)
    dirs = ends - starts
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    ms, bare = paired_median_ms(lambda: terrain.sample(base),
                                bare_cast(world, starts, dirs), repeats * 10)
    rows.append(row('E', 'terrain_sensor', 1, 'first', 'clear', 5,
                    int(np.sum(result.hit_flg)), ms, bare, tcfg.rate_hz))
    return rows
