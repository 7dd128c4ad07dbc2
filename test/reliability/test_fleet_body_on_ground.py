"""A fleet robot's body stands on the ground, not on its base_link 0.4 m above it."""

import numpy as np
import pytest
from ubot_lidar_sim.core.config import LaserScanConfig, LidarConfig, TerrainConfig
from ubot_lidar_sim.core.world.actors import fleet_actors
from ubot_lidar_sim.ros.demo.scenario import DemoDriverConfig


@pytest.mark.parametrize('config', [LidarConfig, LaserScanConfig, TerrainConfig])
def test_a_fleet_body_stands_on_the_ground_below_the_drivers_base_link(config):
    cfg = config()
    body = fleet_actors(['robot2/base_link'], cfg.fleet_body_size_m, 0,
                        cfg.fleet_base_height_m)[0]
    z = np.asarray(body.geometry.vertices)[:, 2]
    ground = -DemoDriverConfig().base_height_m      # z = 0 of the world, in base_link
    # bound: float64 sums of a few tenths of a metre (1e-16 m)
    assert abs(z.min() - ground) < 1e-12
    # bound: as above
    assert abs(z.max() - (ground + cfg.fleet_body_size_m[2])) < 1e-12
