"""sim.launch.py robot:=FILE (robots:=N: copies): the sensor nodes and base_sim parameters."""

import json

import pytest
from robot_files import SDF_MODEL, stl_box, urdf

from ubot_lidar_sim.core.config.configure import CONFIG_CLASSES
from ubot_lidar_sim.core.config.mapping import from_dict
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.core.robot.description import RobotError
from ubot_lidar_sim.pipeline.robot_nodes import robot_launch
from ubot_lidar_sim.pipeline.sim_fleet import (robot_base_parameters, robot_sensor_nodes,
                                               start_poses)


def test_diff_drive_sdf_model_gives_its_sensor_node_and_base_limits(tmp_path):
    model = tmp_path / 'sdfbot'
    (model / 'meshes').mkdir(parents=True)
    (model / 'model.sdf').write_text(SDF_MODEL.replace('model://sdfbot/', ''))
    (model / 'meshes' / 'body.stl').write_text(stl_box())
    launch = robot_launch(str(model))
    (node,) = launch.nodes
    assert (node.executable, node.name, node.remappings) == ('laser_scan_node', 'gpu_lidar',
                                                             [('scan', 'lidar')])
    cfg = from_dict(CONFIG_CLASSES['laser_scan'], node.parameters)
    # 720 rays over 2.5 rad: the config's ray count and step are Gazebo's
    assert cfg.n_rays == 720 and cfg.frame_id == 'lidar_link' and cfg.rate_hz == 20.0
    base = from_dict(BaseSimConfig, launch.base)
    assert (base.drive, base.max_linear_m_s, base.base_frame) == ('diff', 1.5, 'chassis')
    assert base.laser_frame == 'lidar_link'
    assert base.laser_pose == (0.3, 0.0, 0.2, 0.0, 0.0, 0.0)
    corners = sorted(map(tuple, json.loads(base.footprint_polygon)))
    assert corners == [(-0.5, -0.25), (-0.5, 0.25), (0.5, -0.25), (0.5, 0.25)]
    # the imu sensor becomes base_sim's IMU: its topic, link frame, 100 Hz, stddev 0.002 rad/s
    # on x (the largest axis; y and z have none), no accelerometer noise
    assert (base.imu_topic, base.imu_frame, base.imu_rate_hz) == ('imu', 'lidar_link', 100.0)
    assert (base.imu_gyro_stddev_rad_s, base.imu_accel_stddev_m_s2) == (0.002, 0.0)
    # mounted 0.3 m ahead and 0.2 m above the chassis: sqrt(0.13) = 0.361 m, no lever arm
    assert any("imu 'imu_sensor': 0.361 m from chassis" in n for n in launch.notes)
    assert base.robot_description == launch.nodes[0].parameters['robot_description']


def _copies(tmp_path, n):
    path = tmp_path / 'bot.urdf'
    path.write_text(urdf(mast_joint='revolute'))
    robot = robot_launch(str(path))
    poses = start_poses(n)
    return ([robot_base_parameters(k, n, robot, poses[k - 1], True) for k in range(1, n + 1)],
            [robot_sensor_nodes(k, n, robot) for k in range(1, n + 1)])


def test_copies_of_a_description_have_its_frames_under_robotk_and_see_each_other(tmp_path):
    bases, nodes = _copies(tmp_path, 3)
    for k, (base, (laser,)) in enumerate(zip(bases, nodes), start=1):
        assert base['base_frame'] == f'robot{k}/base_link'      # the root link, prefixed
        assert base['laser_frame'] == laser.parameters['frame_id'] == f'robot{k}/laser_frame'
        # the other copies' root-link frames, drawn as the description's body
        assert laser.parameters['fleet_frames'] == [f'robot{j}/base_link' for j in (1, 2, 3)
                                                    if j != k]
        assert laser.parameters['fleet_body'] == 'robot'
        assert laser.remappings == [('scan', 'scan')]       # relative: robotK/scan
        cfg = from_dict(CONFIG_CLASSES['laser_scan'], laser.parameters)
        assert cfg.fleet_body == 'robot' and cfg.frame_id == f'robot{k}/laser_frame'
        from_dict(BaseSimConfig, {key: v for key, v in base.items() if key != 'use_sim_time'})
    # one clock: robot 1's base waits for every copy's sensor topic
    assert bases[0]['sync_topics'] == ['/robot1/scan', '/robot2/scan', '/robot3/scan']
    assert [b['publish_clock'] for b in bases] == [True, False, False]


def test_a_copy_with_an_absolute_sensor_topic_is_refused(tmp_path):
    path = tmp_path / 'bot.urdf'
    path.write_text(urdf().replace('<topic>scan</topic>', '<topic>/scan</topic>'))
    robot = robot_launch(str(path))
    assert robot_sensor_nodes(1, 1, robot) == robot.nodes       # one robot: as it is
    with pytest.raises(RobotError, match="topic '/scan' is absolute, one topic for every copy"):
        robot_sensor_nodes(1, 2, robot)
