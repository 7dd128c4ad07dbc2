"""Robot descriptions in each form: Gazebo's meaning of each tag, computed by hand here."""

import math

import numpy as np
import pytest
from robot_files import CLASSIC_RAY, SDF_MODEL, stl_box, urdf, VELODYNE, XACRO


from ubot_lidar_sim.core.beams.planar_and_rosette import planar_azimuths_rad
from ubot_lidar_sim.core.robot.description import RobotError
from ubot_lidar_sim.core.robot.load import load_robot, parse_args
from ubot_lidar_sim.core.robot.mapping import sensor_config
from ubot_lidar_sim.core.robot.tree import link_poses, MAX_LINKS


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_urdf_gpu_lidar_has_gazebos_topic_frame_rate_and_angles(tmp_path):
    desc = load_robot(_write(tmp_path, 'bot.urdf', urdf()))
    s = desc.sensor('front_laser')
    assert (s.topic, s.frame_id, s.update_rate_hz) == ('scan', 'laser_frame', 10.0)
    assert s.message_type == 'sensor_msgs/msg/LaserScan'
    # rays = samples x resolution = 640; step = (2 - -2) / (640 - 1)
    assert s.horizontal.count == 640
    # bound: exact: ScanAxis.step does the same float64 division (2 - -2 is exactly 4)
    assert s.horizontal.step == pytest.approx(4.0 / 639, rel=1e-15)
    assert (s.range_min_m, s.range_max_m, s.noise_stddev_m) == (0.12, 12.0, 0.01)
    kind, cfg = sensor_config(s)
    assert kind == 'laser_scan' and cfg.model == 'geometric' and cfg.frame_id == 'laser_frame'
    assert desc.drive.values == {'drive': 'diff', 'max_linear_m_s': 0.8,
                                 'max_angular_rad_s': 1.2, 'max_linear_accel_m_s2': 0.5}
    assert any(n.tag == 'always_on' for n in s.notes)


def test_xacro_arguments_reach_the_sensor(tmp_path):
    path = _write(tmp_path, 'x.urdf.xacro', XACRO)
    desc = load_robot(path, parse_args('samples:=181 laser_name:=front'))
    s = desc.sensor('front')
    assert (s.link, s.topic, s.frame_id, s.update_rate_hz) == ('front_link', 'front/scan',
                                                               'front_link', 15.0)
    assert s.horizontal.count == 181
    # bound: xacro writes ${pi / 2} as Python's repr, which round-trips: -pi / 2 exactly, and
    # (pi / 2 - -pi / 2) / 180 the same division as pi / 180 (doubling is exact)
    assert s.horizontal.min_angle == pytest.approx(-math.pi / 2)
    assert s.horizontal.step == pytest.approx(math.pi / 180, rel=1e-12)


def test_xacro_missing_argument_is_one_line_naming_the_file(tmp_path):
    path = _write(tmp_path, 'x.urdf.xacro', XACRO.replace('$(arg samples)', '$(arg rays)'))
    with pytest.raises(RobotError, match=r'x\.urdf\.xacro: xacro: .*rays.*robot_args') as e:
        load_robot(path)
    assert '\n' not in str(e.value)


def test_classic_ray_plugin_topic_frame_and_message_type(tmp_path):
    desc = load_robot(_write(tmp_path, 'tb3.urdf', CLASSIC_RAY))
    s = desc.sensor('hls_lfcd_lds')
    # ~/out remapped to scan in namespace /tb3 (gazebo_ros_ray_sensor.cpp:110-128)
    assert (s.topic, s.frame_id, s.source) == ('/tb3/scan', 'base_scan', 'gazebo_ros_ray_sensor')
    assert s.message_type == 'sensor_msgs/msg/LaserScan'
    # bound: exact: 6.280000 - 0.000000 parses to 6.28 - 0, the same division (approx's rel 1e-6)
    assert s.horizontal.count == 360 and s.horizontal.step == pytest.approx(6.28 / 359)
    assert (s.range_min_m, s.range_max_m, s.update_rate_hz) == (0.12, 3.5, 5.0)
    assert desc.drive.values == {'drive': 'diff', 'max_linear_accel_m_s2': 1.0}
    assert any('libsomething_unknown.so' in n.tag for n in desc.notes)


def test_velodyne_plugin_gives_a_16_ring_cloud(tmp_path):
    desc = load_robot(_write(tmp_path, 'v.urdf', VELODYNE))
    s = desc.sensor('velodyne-VLP16')
    assert (s.topic, s.frame_id, s.message_type) == ('/velodyne_points', 'velodyne',
                                                     'sensor_msgs/msg/PointCloud2')
    # OnScan: max(0.9, 0.3), min(130, 131); gaussianNoise replaces <noise>
    assert (s.range_min_m, s.range_max_m, s.noise_stddev_m) == (0.9, 130.0, 0.008)
    kind, cfg = sensor_config(s)
    assert kind == 'lidar_3d' and cfg.channels == 16 and cfg.horizontal_samples == 1875
    step = math.degrees(2 * 0.2617993877991494 / 15)
    # bound: degrees of min + k step, a few float64 roundings of values <= 15 deg (the
    # difference cancels to ~1e-15 deg): far inside approx's default rel 1e-6
    assert cfg.elevations_deg[1] - cfg.elevations_deg[0] == pytest.approx(step)
    assert cfg.elevations_deg[0] == pytest.approx(-15.0)


def test_sdf_model_from_a_model_uri_with_a_mesh(tmp_path, monkeypatch):
    root = tmp_path / 'models'
    _write(root, 'sdfbot/model.sdf', SDF_MODEL)
    _write(root, 'sdfbot/meshes/body.stl', stl_box())
    monkeypatch.setenv('GZ_SIM_RESOURCE_PATH', str(root))
    desc = load_robot('model://sdfbot')
    s = desc.sensor('gpu_lidar')
    assert (s.topic, s.frame_id, s.update_rate_hz) == ('lidar', 'lidar_link', 20.0)
    assert s.horizontal.count == 720
    assert (s.horizontal.min_angle, s.horizontal.max_angle) == (-1.5, 1.0)
    # bound: exact: (1.0 - -1.5) / 719 is 2.5 / 719, the same one division; the sensor's 0.05 is
    # read from text into an identity-rotation pose (exact, approx's default rel 1e-6 only)
    assert s.horizontal.step == pytest.approx(2.5 / 719, rel=1e-15)
    assert s.link_from_sensor[2, 3] == pytest.approx(0.05)
    # the model frame: chassis 0.2 up, the lidar link 0.2 above the chassis
    # bound: sums 0.2 + 0.2 and 0.3 + 0 under identity rotations (<= 1 ulp, y exactly 0): inside
    # approx's default rel 1e-6
    assert link_poses(desc)['lidar_link'][:3, 3] == pytest.approx([0.3, 0.0, 0.4])
    assert [p.kind for p in desc.links['chassis']] == ['collision', 'visual']
    assert len(desc.links['chassis'][0].shape.triangles) == 12
    assert desc.imus[0].angular_velocity_stddev == 0.002
    assert desc.drive.values['max_linear_m_s'] == 1.5


@pytest.mark.parametrize('change, match', [
    ('<samples>640</samples>', r'samples: got 0, allowed an integer >= 1'),
    ('<min_angle>-2.0</min_angle>', r'min_angle 3 > max_angle 2'),
])
def test_bad_scan_is_refused_naming_element(tmp_path, change, match):
    bad = {'<samples>640</samples>': '<samples>0</samples>',
           '<min_angle>-2.0</min_angle>': '<min_angle>3</min_angle>'}[change]
    with pytest.raises(RobotError, match=match):
        load_robot(_write(tmp_path, 'bot.urdf', urdf().replace(change, bad)))


def test_cycle_and_unconnected_link_are_refused(tmp_path):
    cycle = urdf(extra='<joint name="back" type="fixed"><parent link="mast"/>'
                       '<child link="base_link"/></joint>')
    with pytest.raises(RobotError, match='cycle|already has the parent|no joint'):
        load_robot(_write(tmp_path, 'c.urdf', cycle))
    lonely = urdf(extra='<link name="floating_box"/>')
    with pytest.raises(RobotError, match="'floating_box' is connected .* by no joint"):
        load_robot(_write(tmp_path, 'u.urdf', lonely))


def test_too_many_links_are_refused_before_parsing(tmp_path):
    links = ''.join(f'<link name="l{k}"/>' for k in range(MAX_LINKS + 1))
    with pytest.raises(RobotError, match=f'{MAX_LINKS + 1} links, at most {MAX_LINKS}'):
        load_robot(_write(tmp_path, 'big.urdf', f'<robot name="b">{links}</robot>'))


def test_unreadable_mesh_names_the_link(tmp_path):
    text = urdf().replace('<box size="0.4 0.4 0.2"/>', '<mesh filename="missing.stl"/>')
    with pytest.raises(RobotError, match="link 'base_link'.*missing.stl"):
        load_robot(_write(tmp_path, 'm.urdf', text))


def test_physics_preset_overlay_keeps_gazebos_grid(tmp_path):
    desc = load_robot(_write(tmp_path, 'v.urdf', VELODYNE))
    s = desc.sensor('velodyne-VLP16')
    kind, cfg = sensor_config(s, {s.name: {'physics_preset': 'velodyne_vlp16'}})
    assert (cfg.model, cfg.preset) == ('physical', 'velodyne_vlp16')
    assert (cfg.channels, cfg.horizontal_samples, cfg.min_range_m) == (16, 1875, 0.9)
    assert cfg.wavelength_nm == 903.0       # the VLP-16 datasheet's laser (its preset file)


def test_laser_config_alone_traces_an_asymmetric_gazebo_scan(tmp_path, monkeypatch):
    # What the node runs (LaserScanConfig only): min_angle -1.5, max_angle 1.0, 720 rays.
    root = tmp_path / 'models'
    _write(root, 'sdfbot/model.sdf', SDF_MODEL)
    _write(root, 'sdfbot/meshes/body.stl', stl_box())
    monkeypatch.setenv('GZ_SIM_RESOURCE_PATH', str(root))
    s = load_robot('model://sdfbot').sensor('gpu_lidar')
    _, cfg = sensor_config(s)
    az = planar_azimuths_rad(cfg.fov_deg, cfg.resolution_deg, cfg.fov_centre_deg)
    assert len(az) == 720
    # bound: through degrees and back (fov centre, resolution): each a few ulps relative; k x
    # step for k <= 719 carries the step's ~4 eps into < 2e-15 rad, the start ~1e-15: << 1e-12
    assert np.allclose(az, -1.5 + np.arange(720) * 2.5 / 719, rtol=0, atol=1e-12)


def test_ackermann_plugin_gives_wheelbase_and_steering_limit(tmp_path):
    plugin = ('<gazebo><plugin filename="gz-sim-ackermann-steering-system" '
              'name="gz::sim::systems::AckermannSteering"><wheel_base>1.2</wheel_base>'
              '<steering_limit>0.5</steering_limit><max_velocity>4.0</max_velocity>'
              '<wheel_separation>0.9</wheel_separation></plugin></gazebo>')
    text = urdf().replace('filename="gz-sim-diff-drive-system" name="gz::sim::systems::DiffDrive"',
                          'filename="ignored-by-this-test" name="x"', 1)
    desc = load_robot(_write(tmp_path, 'car.urdf', text.replace('</robot>', plugin + '</robot>')))
    # bound: exact: the steering limit is read as 0.5 and put through the same math.degrees
    assert desc.drive.values == {'drive': 'ackermann', 'max_linear_m_s': 4.0,
                                 'wheelbase_m': 1.2,
                                 'max_steering_deg': pytest.approx(math.degrees(0.5))}
    assert any('ignored-by-this-test' in n.tag for n in desc.notes)


def test_classic_ray_plugin_without_output_type_publishes_a_cloud(tmp_path):
    # gazebo_ros_ray_sensor.cpp:116-120: no <output_type> -> sensor_msgs/PointCloud2, even for
    # one vertical row: a one-ring lidar_3d on /<plugin name>/out in the plugin's namespace
    text = CLASSIC_RAY.replace('<output_type>sensor_msgs/LaserScan</output_type>', '')
    text = text.replace('<remapping>~/out:=scan</remapping>', '')
    s = load_robot(_write(tmp_path, 'tb3.urdf', text)).sensor('hls_lfcd_lds')
    assert (s.message_type, s.topic) == ('sensor_msgs/msg/PointCloud2',
                                         '/tb3/turtlebot3_laserscan/out')
    kind, cfg = sensor_config(s)
    assert (kind, cfg.channels, cfg.horizontal_samples) == ('lidar_3d', 1, 360)
