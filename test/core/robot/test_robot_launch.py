"""sim.launch.py robot:=FILE: the sensor nodes and base_sim parameters a description gives."""

import json

from robot_files import SDF_MODEL, stl_box

from ubot_lidar_sim.core.config.configure import CONFIG_CLASSES
from ubot_lidar_sim.core.config.mapping import from_dict
from ubot_lidar_sim.core.motion.config import BaseSimConfig
from ubot_lidar_sim.pipeline.robot_nodes import robot_launch


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
