"""A lidar_3d node started with world_file:=x.world publishes clouds of that SDF world."""

import os

import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import SensorRig, trigger_scan
from sensor_msgs.msg import PointCloud2

from ubot_lidar_sim.core.errors import WorldError
from ubot_lidar_sim.ros.conversions import pointcloud2_to_array
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode

WALL = """<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <include><uri>model://wall</uri><pose>10 0 2 0 0 0</pose><name>north_wall</name></include>
</world></sdf>
"""
MODEL = """<?xml version="1.0"?>
<sdf version="1.9"><model name="wall"><static>true</static><link name="l">
  <collision name="c"><geometry><box><size>0.2 40 6</size></box></geometry></collision>
  <visual name="v"><geometry><box><size>0.2 40 6</size></box></geometry></visual>
</link></model></sdf>
"""
PARAMS = {'channels': 8, 'horizontal_samples': 120, 'sub_rays': 1, 'max_range_m': 30.0,
          'noise_enabled': False, 'imperfections': False, 'rate_hz': 10.0,
          'trigger': 'service'}


def test_node_started_with_an_sdf_world_publishes_its_clouds(tmp_path):
    (tmp_path / 'models' / 'wall').mkdir(parents=True)
    (tmp_path / 'models' / 'wall' / 'model.sdf').write_text(MODEL)
    (tmp_path / 'w.world').write_text(WALL)
    params = {**PARAMS, 'world_file': str(tmp_path / 'w.world'),
              'model_paths': [str(tmp_path / 'models')]}
    rig = SensorRig(Lidar3DNode, None, params, frame='lidar_3d')
    try:
        assert [o.name for o in rig.node.world.objects] == ['north_wall::l::v']
        clouds = rig.subscribe(PointCloud2, 'points')
        ok, why = trigger_scan(rig.node, rig.spin_until)
        assert ok, why
        assert rig.spin_until(lambda: clouds, 10.0)
        pts = pointcloud2_to_array(clouds[-1])
        # the sensor 1 m up at the origin; the wall's inner face at x = 9.9 m: the forward
        # points (|azimuth| < 30 deg) lie on it
        xyz = np.stack([pts['x'], pts['y'], pts['z']], axis=1).astype(np.float64)
        ahead = np.abs(np.arctan2(xyz[:, 1], xyz[:, 0])) < np.radians(30.0)
        assert ahead.sum() > 0
        # bound: float32 point coordinates (< 1 um at 12 m) and the 1 mm of a box face
        np.testing.assert_allclose(xyz[ahead, 0], 9.9, atol=1e-3)
    finally:
        rig.close()


def test_node_refuses_to_start_on_a_missing_model(tmp_path):
    (tmp_path / 'w.world').write_text(WALL)
    params = {**PARAMS, 'world_file': str(tmp_path / 'w.world')}
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=40 + os.getpid() % 60)
    try:
        with pytest.raises(WorldError, match=r"w\.world: include 'model://wall'/uri: "
                                             r"'model://wall': model 'wall' not found"):
            Lidar3DNode(context=ctx, parameter_overrides=[
                Parameter(k, value=v) for k, v in params.items()])
    finally:
        rclpy.shutdown(context=ctx)
