"""Self-occlusion: the robot's mast blanks the sector it covers, with class self."""

import math

import numpy as np
import pytest
from robot_files import urdf, VELODYNE, velodyne_with_mast
from tolerances import f32_hit_bound_m

from ubot_lidar_sim.core.labels import SELF_CLASS
from ubot_lidar_sim.core.robot.body import link_pose_at, sensor_body_actors
from ubot_lidar_sim.core.robot.load import load_robot
from ubot_lidar_sim.core.robot.scanner import RobotScanner
from ubot_lidar_sim.core.sensors.laser import LaserScanner
from ubot_lidar_sim.core.world.world import World

# The mast: a 0.1 m box whose centre is 0.5 m ahead of the laser, at the laser's height.
# Its near face (x = 0.45 m, |y| <= 0.05) subtends atan(0.05 / 0.45) either side of +x.
HALF_SECTOR = math.atan2(0.05, 0.45)


@pytest.fixture(scope='module')
def robot(tmp_path_factory):
    path = tmp_path_factory.mktemp('robot') / 'bot.urdf'
    path.write_text(urdf(samples=361, lo=-math.pi / 2, hi=math.pi / 2,
                         mast_joint='revolute'))
    return load_robot(path)


@pytest.fixture(scope='module')
def ring_world(materials):
    # A ring of walls 5 m away (a box room) so that every ray not blocked by the mast returns.
    walls = [{'name': n, 'type': 'box', 'size_m': s, 'pose': {'xyz': p}, 'material': 'concrete'}
             for n, s, p in (('n', [10, 0.2, 3], [0, 5, 1]), ('s', [10, 0.2, 3], [0, -5, 1]),
                             ('e', [0.2, 10, 3], [5, 0, 1]), ('w', [0.2, 10, 3], [-5, 0, 1]))]
    return World.from_dict({'frame': 'map', 'objects': walls}, materials=materials)


def _scan(robot, world, materials, **kw):
    overlay = {'front_laser': {'noise_enabled': False}}
    scanner = RobotScanner(robot, 'front_laser', world, materials, overlay, **kw)
    return scanner.scan(np.eye(4))


def _angles(res):
    return res.angle_min + np.arange(len(res.ranges)) * res.angle_increment


def test_mast_blanks_its_sector_with_class_self(robot, ring_world, materials):
    res = _scan(robot, ring_world, materials)
    ang = _angles(res)
    inside = np.abs(ang) < HALF_SECTOR - math.radians(0.6)      # a ray's width off the edge
    outside = np.abs(ang) > HALF_SECTOR + math.radians(0.6)
    assert inside.sum() == 23       # -5.5 to 5.5 deg every 0.5 deg (half sector 6.34 deg)
    assert np.all(res.class_id[inside] == SELF_CLASS)
    # the near face at x = 0.45 m: range 0.45 / cos(angle)
    # bound: one float32 cast, f32_hit_bound_m(0.46 m, cos 6 deg, 0.6 m lever) 1e-6 m, and the
    # face's float32 x (3e-8 m): far under 1e-4 m
    assert np.allclose(res.ranges[inside], 0.45 / np.cos(ang[inside]), atol=1e-4)
    assert not np.any(res.class_id[outside] == SELF_CLASS)
    assert np.all(np.isfinite(res.ranges[outside]))


def test_self_filter_removes_the_masts_returns(robot, ring_world, materials):
    res = _scan(robot, ring_world, materials, self_filter=True)
    ang = _angles(res)
    inside = np.abs(ang) < HALF_SECTOR - math.radians(0.6)
    assert np.all(np.isposinf(res.ranges[inside]))
    assert not np.any(np.isposinf(res.ranges[np.abs(ang) > HALF_SECTOR + math.radians(0.6)]))


def test_without_self_occlusion_the_wall_behind_the_mast_returns(robot, ring_world, materials):
    res = _scan(robot, ring_world, materials, self_occlusion=False)
    ang = _angles(res)
    inside = np.abs(ang) < HALF_SECTOR - math.radians(0.6)
    # bound: one float32 cast, f32_hit_bound_m(4.93 m, cos 6 deg, 7.4 m lever) 1.2e-5 m < 1e-4 m
    assert np.allclose(res.ranges[inside], 4.9 / np.cos(ang[inside]), atol=1e-4)


def test_turning_the_mast_joint_moves_the_sector(robot, ring_world, materials):
    turn = math.radians(40.0)
    res = _scan(robot, ring_world, materials, joint_positions={'mast_joint': turn})
    ang = _angles(res)
    moved = np.abs(ang - turn) < HALF_SECTOR - math.radians(0.6)
    ahead = np.abs(ang) < HALF_SECTOR - math.radians(0.6)
    assert np.all(res.class_id[moved] == SELF_CLASS)
    assert not np.any(res.class_id[ahead] == SELF_CLASS)


def _node_like_scan(robot, world, materials, mast_turn):
    """Scan as a node does: the body's actors posed as /tf poses their frames (mast turned)."""
    actors = {a.frame: a for a in sensor_body_actors(robot, 'laser_frame', 'collision')}
    scanner = RobotScanner(robot, 'front_laser', world, materials,
                           {'front_laser': {'noise_enabled': False}}, self_occlusion=False)
    sensor = np.eye(4)
    sensor[2, 3] = 0.3
    # /tf of the mast: base_link -> mast = the joint origin (0, 0, 0.3) x a turn about z
    c, s = math.cos(mast_turn), math.sin(mast_turn)
    mast = np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0.3], [0, 0, 0, 1]])
    node_like = LaserScanner(scanner.cfg, world.with_actors(list(actors.values())), materials,
                             azimuth_rad=scanner.sim.azimuth_rad)
    poses = {actors['laser_frame'].name: link_pose_at(sensor),
             actors['mast'].name: link_pose_at(mast)}
    return node_like.scan(link_pose_at(sensor), 0.0, None, 0, poses), actors


def test_a_nodes_body_groups_follow_the_joints_and_blank_the_same_sector(robot, ring_world,
                                                                         materials):
    # robot_description on a node: the links fixed to the laser in its frame, the mast (behind
    # a revolute joint) in its own link frame, each posed by /tf.
    res, actors = _node_like_scan(robot, ring_world, materials, 0.0)
    body, mast = actors['laser_frame'], actors['mast']
    assert body.obj.class_id == mast.obj.class_id == SELF_CLASS
    assert body.geometry.triangles.shape == (12, 3)     # the base box; the laser's own not
    assert mast.geometry.triangles.shape == (12, 3)
    v = mast.geometry.vertices
    # bound: float64 sums of the box offsets (a few ulps): inside approx's default rel 1e-6
    assert v[:, 0].min() == pytest.approx(0.45) and v[:, 0].max() == pytest.approx(0.55)
    reference = _scan(robot, ring_world, materials)
    assert np.array_equal(res.class_id == SELF_CLASS, reference.class_id == SELF_CLASS)
    # the same rays and surfaces, the body's vertices composed in another order: float32 casts
    # (open3d), each within f32_hit_bound_m of the exact range, so within twice that of each
    # other: the ring's worst ray is at 45 deg on a wall corner (6.93 m, cos 45 deg, the face's
    # far vertex 7.4 m away)
    assert np.allclose(res.ranges, reference.ranges, rtol=0,
                       atol=2.0 * f32_hit_bound_m(6.93, math.cos(math.pi / 4), 7.5))


def test_a_moving_joint_on_tf_moves_the_blanked_sector(robot, ring_world, materials):
    # The mast's joint turned by 40 deg on /tf: the mast stands 0.5 m from the laser's axis
    # (the joint's axis through the laser), so its sector turns by the same 40 deg.
    turn = math.radians(40.0)
    res, _ = _node_like_scan(robot, ring_world, materials, turn)
    ang = _angles(res)
    moved = np.abs(ang - turn) < HALF_SECTOR - math.radians(0.6)
    ahead = np.abs(ang) < HALF_SECTOR - math.radians(0.6)
    assert moved.sum() == 23
    assert np.all(res.class_id[moved] == SELF_CLASS)
    # bound: as above, the face at 0.45 m in the turned direction, one float32 cast
    assert np.allclose(res.ranges[moved], 0.45 / np.cos(ang[moved] - turn), atol=1e-4)
    assert not np.any(res.class_id[ahead] == SELF_CLASS)
    assert not np.any(res.class_id[~moved & (np.abs(ang - turn) > HALF_SECTOR
                                             + math.radians(0.6))] == SELF_CLASS)


def test_velodyne_cloud_rays_are_gazebos_grid(tmp_path, materials):
    path = tmp_path / 'v.urdf'
    path.write_text(VELODYNE)
    desc = load_robot(path)
    flat = World.load('flat', materials)
    res = RobotScanner(desc, 'velodyne-VLP16', flat, materials,
                       {'velodyne-VLP16': {'noise_enabled': False}}).scan(np.eye(4))
    # rows -15 .. 15 deg every 2 deg, columns -pi + k 2 pi / 1874: the downward rows hit the
    # ground 0.5 m below the sensor
    assert res.n_beams == 16 * 1875
    p = res.points
    col, ring = res.beam % 1875, res.beam // 1875
    az = -3.14159265 + col * (2 * 3.14159265 / 1874)
    el = np.radians(-15.0 + 2.0 * ring)
    # bound: the points' float32 x, y (6e-8 relative each) and the float32 ray direction turn the
    # azimuth by < 2e-7 rad, far under 1e-5; the rays 3.6e-9 rad inside +-pi keep their side
    assert np.allclose(np.arctan2(p['y'], p['x']), np.arctan2(np.sin(az), np.cos(az)),
                       atol=1e-5)
    assert np.all(el < 0)
    # bound: the ground's triangles are horizontal, so their normal is exactly (0, 0, n) and the
    # lever arm drops out: t = n (z_v - z_o) / (n d_z) carries ~4 float32 roundings and d_z's
    # own (3e-7 relative in all), under rtol 1e-5 even at the grazing -1 deg row
    assert np.allclose(p['range'], 0.5 / np.sin(-el), rtol=1e-5)


def test_self_filter_drops_a_clouds_self_points(tmp_path, materials):
    # 1.5 m ahead: beyond the plugin's min_range 0.9 m
    desc = load_robot(velodyne_with_mast(tmp_path))
    flat = World.load('flat', materials)
    kept, dropped = (RobotScanner(desc, 'velodyne-VLP16', flat, materials, self_filter=f)
                     .scan(np.eye(4)) for f in (False, True))
    own = kept.points['class_id'] == SELF_CLASS
    assert own.sum() > 0 and not np.any(dropped.points['class_id'] == SELF_CLASS)
    assert len(dropped.points) == len(kept.points) - own.sum()


@pytest.mark.parametrize('mast_turn', [0.0, math.radians(40.0)])
def test_the_sensor_frame_body_cast_gives_the_world_frame_paths_scans(
        robot, ring_world, materials, mast_turn):
    # The scanner casts its body once in the laser's frame (raycast/sensor_mount.py); the same
    # sweeps with the links posed in the world (link_pose_at) take the world-frame path. The
    # robot standing twice, then driving 1.3 m and turning: the same returns every sweep.
    scanner = RobotScanner(robot, 'front_laser', ring_world, materials,
                           {'front_laser': {'noise_enabled': False}},
                           joint_positions={'mast_joint': mast_turn})
    for x, yaw in ((0.0, 0.0), (0.0, 0.0), (0.6, 0.3), (1.3, -0.2)):
        c, s = math.cos(yaw), math.sin(yaw)
        model = np.array([[c, -s, 0, x], [s, c, 0, 0.2 * x], [0, 0, 1, 0], [0, 0, 0, 1]])
        got = scanner.scan(model)
        world = {a.name: link_pose_at(model @ scanner.links[a.frame]) for a in scanner.actors}
        want = scanner.sim.scan(link_pose_at(model @ scanner.model_from_sensor), 0.0, None, 0,
                                world)
        mast = got.class_id == SELF_CLASS
        # the mast's sector wherever the robot is: -6 .. 6 deg every 0.5 deg (half 6.34 deg)
        assert mast.sum() == 25
        assert np.array_equal(got.class_id, want.class_id)
        # bound: the same lines but for the world rays' float32 rounding (origin within 2 m of
        # the map's origin: 1.2e-7 m; direction 2^-24 per component) moving a hit by that over
        # cos 45 deg at most (the ring's corners), beside each cast's own f32_hit_bound_m
        # (6.93 m, cos 45 deg, 7.5 m lever)
        bound = (2.0 * f32_hit_bound_m(6.93, math.cos(math.pi / 4), 7.5)
                 + (1.2e-7 + 6.93 * 2.0 ** -24) * math.sqrt(3) / math.cos(math.pi / 4))
        assert np.allclose(got.ranges, want.ranges, rtol=0, atol=bound)
