"""``describe --robot`` and ``scan --robot``: what Gazebo publishes, from the command line."""

import json
import math

import pytest

from robot_files import CLASSIC_RAY, SDF_MODEL, stl_box, urdf

from ubot_lidar_sim.cli import main


def test_describe_robot_lists_sensor_what_it_became_and_tags_not_honoured(tmp_path, capsys):
    path = tmp_path / 'tb3.urdf'
    path.write_text(CLASSIC_RAY)
    assert main(['describe', '--robot', str(path)]) == 0
    out = json.loads(capsys.readouterr().out)
    (s,) = out['sensors']
    assert (s['name'], s['became'], s['topic'], s['frame_id']) == (
        'hls_lfcd_lds', 'laser_scan', '/tb3/scan', 'base_scan')
    assert any('always_on' in line for line in s['not_honoured'])
    assert any('libsomething_unknown.so' in line for line in out['not_honoured'])
    assert out['base']['base_sim']['max_linear_accel_m_s2'] == 1.0


def test_describe_robot_says_the_imu_became_base_sims_imu(tmp_path, capsys):
    model = tmp_path / 'sdfbot'
    (model / 'meshes').mkdir(parents=True)
    (model / 'model.sdf').write_text(SDF_MODEL.replace('model://sdfbot/', ''))
    (model / 'meshes' / 'body.stl').write_text(stl_box())
    assert main(['describe', '--robot', str(model)]) == 0
    (imu,) = json.loads(capsys.readouterr().out)['imus']
    assert imu['became'] == "base_sim's IMU"
    assert imu['base_sim'] == {'imu_enabled': True, 'imu_topic': 'imu',
                               'imu_frame': 'lidar_link', 'imu_rate_hz': 100.0,
                               'imu_gyro_stddev_rad_s': 0.002, 'imu_accel_stddev_m_s2': 0.0}
    assert any('no lever-arm acceleration' in line for line in imu['not_honoured'])


def test_scan_robot_writes_the_laserscan_fields(tmp_path):
    path = tmp_path / 'bot.urdf'
    path.write_text(urdf(samples=91, lo=-math.pi / 4, hi=math.pi / 4))
    out = tmp_path / 'scan.json'
    assert main(['scan', '--robot', str(path), '--robot-sensor', 'front_laser', '--world',
                 'flat', '--out', str(out)]) == 0
    scan = json.loads(out.read_text())
    assert len(scan['ranges']) == 91
    assert scan['frame_id'] == 'laser_frame'
    # bound: the URDF holds repr(+-pi / 4) and JSON floats round-trip: angle_min is min + 0 step,
    # exact; angle_max min + 90 step, 3 roundings (< 3.3e-16)
    assert scan['angle_min'] == pytest.approx(-math.pi / 4, abs=1e-15)
    assert scan['angle_max'] == pytest.approx(math.pi / 4, abs=1e-15)
    # bound: the step, then through degrees and back: a few float64 roundings, ~1e-15 relative
    assert scan['angle_increment'] == pytest.approx((math.pi / 2) / 90, rel=1e-12)
    assert (scan['range_min'], scan['range_max']) == (0.12, 12.0)


def test_scan_robot_with_an_unknown_sensor_is_one_line(tmp_path, capsys):
    path = tmp_path / 'bot.urdf'
    path.write_text(urdf())
    assert main(['scan', '--robot', str(path), '--robot-sensor', 'nope', '--out',
                 str(tmp_path / 'x.json')]) == 2
    err = capsys.readouterr().err
    assert "no range sensor named 'nope'" in err and 'front_laser' in err
    assert err.count('\n') == 1
