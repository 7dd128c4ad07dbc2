"""A fleet of copies of one robot: each sensor sees the others' real bodies, class vehicle."""

import math

import numpy as np
import pytest
from robot_files import urdf, velodyne_with_mast

from ubot_lidar_sim.core.class_ids import default_class
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.core.poses import pose_matrix
from ubot_lidar_sim.core.robot.body import link_pose_at
from ubot_lidar_sim.core.robot.fleet_body import (fleet_body_actors, own_body_actors,
                                                  split_frame)
from ubot_lidar_sim.core.robot.load import load_robot
from ubot_lidar_sim.core.robot.scanner import RobotScanner
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.world.world import World

VEHICLE = default_class('vehicle')      # 10, SemanticKITTI's car: the demo fleet's boxes too
# Robot 2 stands at (3, 1) facing +x: its mast's near face is the plane x = 3 + 0.45, for
# |y - 1| <= 0.05 and z in 0.3 +- 0.5 (the laser plane z = 0.3 crosses it).
ROBOT2 = pose_matrix((3.0, 1.0, 0.0), (0.0, 0.0, 0.0))


@pytest.fixture(scope='module')
def robot(tmp_path_factory):
    path = tmp_path_factory.mktemp('fleet') / 'bot.urdf'
    path.write_text(urdf(samples=361, lo=-math.pi / 2, hi=math.pi / 2, mast_joint='revolute'))
    return load_robot(path)


def _scan(robot, materials, mast2_turn):
    """Robot 1's laser as its node casts: its own body and robot 2's, posed as /tf gives."""
    world = World.from_dict({'frame': 'map', 'objects': []}, materials=materials)
    own = own_body_actors(robot, 'robot1/laser_frame', 'collision')
    others = fleet_body_actors(robot, ['robot2/base_link'], len(own), 'collision')
    base = RobotScanner(robot, 'front_laser', world, materials,
                        {'front_laser': {'noise_enabled': False}}, self_occlusion=False)
    laser = LaserScanner(base.cfg, world.with_actors(own + others), materials,
                         azimuth_rad=base.sim.azimuth_rad)
    sensor = pose_matrix((0.0, 0.0, 0.3), (0.0, 0.0, 0.0))
    mast_joint = pose_matrix((0.0, 0.0, 0.3), (0.0, 0.0, mast2_turn))
    tf = {'robot1/laser_frame': sensor, 'robot1/mast': mast_joint @ np.eye(4),
          'robot2/base_link': ROBOT2, 'robot2/mast': ROBOT2 @ mast_joint}
    poses = {a.name: link_pose_at(tf[a.frame]) for a in own + others}
    res = laser.scan(link_pose_at(sensor), 0.0, None, 0, poses)
    return res, res.angle_min + np.arange(len(res.ranges)) * res.angle_increment, others


def test_another_robots_mast_returns_with_class_vehicle_at_its_range(robot, materials):
    res, ang, others = _scan(robot, materials, 0.0)
    # robot 2's groups: the links fixed to its root, and the mast behind its revolute joint
    assert {a.frame for a in others} == {'robot2/base_link', 'robot2/mast'}
    assert all(a.obj.class_id == VEHICLE for a in others)
    # the face x = 3.45 m, y 0.95 .. 1.05 m: atan(0.95 / 3.45) = 15.40 deg to
    # atan(1.05 / 3.45) = 16.93 deg; rays a 0.5 deg step inside those edges
    lo, hi = math.atan2(0.95, 3.45), math.atan2(1.05, 3.45)
    on = (ang > lo + math.radians(0.25)) & (ang < hi - math.radians(0.25))
    assert on.sum() == 2                # 16.0, 16.5 deg (15.5 deg is 0.1 deg inside the edge)
    assert np.all(res.class_id[on] == VEHICLE)
    # bound: one float32 cast, 3.6 m away: f32_hit_bound_m ~1e-5 m, far under 1e-4 m
    assert np.allclose(res.ranges[on], 3.45 / np.cos(ang[on]), atol=1e-4)
    # robot 1's own mast, dead ahead, is self (a user tells the two apart and filters self)
    ahead = np.abs(ang) < math.atan2(0.05, 0.45) - math.radians(0.6)
    assert ahead.sum() == 23 and np.all(res.class_id[ahead] == SELF_CLASS)


def test_another_robots_turning_joint_moves_its_body(robot, materials):
    # robot 2's mast turned 180 deg on /tf about its joint at (3, 1): the box now spans x
    # 2.45 .. 2.55 m, its face towards robot 1 the plane x = 2.45 for |y - 1| <= 0.05: the rays
    # at atan(0.95 / 2.45) = 21.2 deg to atan(1.05 / 2.45) = 23.2 deg meet it, those of its old
    # sector nothing
    res, ang, _ = _scan(robot, materials, math.pi)
    lo, hi = math.atan2(0.95, 2.45), math.atan2(1.05, 2.45)
    on = (ang > lo + math.radians(0.25)) & (ang < hi - math.radians(0.25))
    assert on.sum() == 3 and np.all(res.class_id[on] == VEHICLE)      # 21.5, 22, 22.5 deg
    # bound: as above, one float32 cast 2.7 m away
    assert np.allclose(res.ranges[on], 2.45 / np.cos(ang[on]), atol=1e-4)
    old = (ang > math.atan2(0.95, 3.45)) & (ang < math.atan2(1.05, 3.45))
    assert old.sum() == 3 and np.all(np.isposinf(res.ranges[old]))


def test_a_frame_splits_into_its_prefix_and_the_descriptions_frame(robot):
    assert split_frame(robot, 'robot2/laser_frame', 'frame_id') == ('robot2/', 'laser_frame')
    assert split_frame(robot, 'mast', 'frame_id') == ('', 'mast')
    with pytest.raises(ConfigError, match=r'frame_id.*robot2/lidar.*a frame of .*bot\.urdf'):
        split_frame(robot, 'robot2/lidar', 'frame_id')
    with pytest.raises(ConfigError, match=r'fleet_frames.*robot2/mast.*PREFIX/base_link'):
        fleet_body_actors(robot, ['robot2/mast'], 0)


def test_a_velodynes_cloud_holds_points_on_the_other_copys_mast_class_vehicle(tmp_path,
                                                                              materials):
    # Each copy: a VLP-16 0.5 m up and a 0.1 x 0.1 x 1 m mast 1.5 m ahead (z 0 .. 1 m). Robot 2
    # stands at (0, 5): its mast spans x 1.45 .. 1.55, y 4.95 .. 5.05 in robot 1's map.
    desc = load_robot(velodyne_with_mast(tmp_path))
    flat = World.load('flat', materials)
    others = fleet_body_actors(desc, ['robot2/base_link'], len(flat.actors), 'collision')
    base = RobotScanner(desc, 'velodyne-VLP16', flat, materials,
                        {'velodyne-VLP16': {'noise_enabled': False}}, self_occlusion=False)
    lidar = LidarSimulator(base.cfg, flat.with_actors(others), materials,
                           beams=base.sim.beams)
    sensor = pose_matrix((0.0, 0.0, 0.5), (0.0, 0.0, 0.0))
    poses = {others[0].name: link_pose_at(pose_matrix((0.0, 5.0, 0.0), (0.0, 0.0, 0.0)))}
    p = lidar.scan(link_pose_at(sensor), 0.0, None, 0, poses).points
    on = p['class_id'] == VEHICLE
    assert on.sum() > 0
    # the points in the sensor frame, 0.5 m above the map's origin: on the mast's box
    # (bound: float32 coordinates, 1e-5 relative of ~5 m is 5e-5 m, under 1e-4 m)
    x, y, z = p['x'][on], p['y'][on], p['z'][on] + 0.5
    assert np.all((x > 1.45 - 1e-4) & (x < 1.55 + 1e-4) & (y > 4.95 - 1e-4) & (y < 5.05 + 1e-4))
    assert np.all((z > -1e-4) & (z < 1.0 + 1e-4))
