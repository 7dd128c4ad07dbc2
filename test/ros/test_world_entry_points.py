"""
scan, run and a node load one SDF world the same way: materials_file, model_paths, sdf_geometry.

The world is a wall whose visual is 0.2 m thick and whose collision is 2.2 m thick, both centred
at x = 10 m: the rays meet the visual face at 9.9 m and the collision face at 8.9 m. The laser
(physical model, noise off) sits 1 m up at the origin looking along +x in every entry point:
``scan --pose 0 0 1 0 0 0``, a laser_scan node under a latched map -> laser at (0, 0, 1), and
``run`` with the demo driver standing still (speed 0) at (0, 0, 0.7) with the laser mounted
0.3 m above base_link.
"""

import json
import os
import subprocess
import sys
import time

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from ros_helpers import SensorRig, trigger_scan
from sensor_msgs.msg import LaserScan
from ubot_lidar_sim.cli import main
from ubot_lidar_sim.ros.laser_scan_node import LaserScanNode
import yaml

WORLD = """<?xml version="1.0"?>
<sdf version="1.9"><world name="w">
  <include><uri>model://wall</uri><pose>10 0 2 0 0 0</pose><name>wall</name></include>
</world></sdf>
"""
MODEL = """<?xml version="1.0"?>
<sdf version="1.9"><model name="wall"><static>true</static><link name="l">
  <collision name="c"><geometry><box><size>2.2 40 6</size></box></geometry></collision>
  <visual name="v"><geometry><box><size>0.2 40 6</size></box></geometry></visual>
</link></model></sdf>
"""
# The wall's material (a model named wall: building, core/world/sdf/name_rules.py) made bright:
# intensities show the file is read.
MATERIALS = {'building': {'reflectivity': 0.9}}
LASER = {'model': 'physical', 'noise_enabled': False, 'resolution_deg': 2.0, 'rate_hz': 10.0}
COLLISION_FACE_M = 8.9
# Rays within 19 deg of +x meet the wall's face at 8.9 m / cos(angle) <= 9.5 m.
AHEAD_DEG = 19.0


def _world(tmp_path, materials=True):
    """Write the world, its model and the materials file; return the shared parameters."""
    (tmp_path / 'models' / 'wall').mkdir(parents=True, exist_ok=True)
    (tmp_path / 'models' / 'wall' / 'model.sdf').write_text(MODEL)
    (tmp_path / 'wall.world').write_text(WORLD)
    (tmp_path / 'bright.yaml').write_text(yaml.safe_dump(MATERIALS))
    return {'world_file': str(tmp_path / 'wall.world'),
            'model_paths': [str(tmp_path / 'models')], 'sdf_geometry': 'collision',
            **({'materials_file': str(tmp_path / 'bright.yaml')} if materials else {})}


def _scan(tmp_path, world):
    """Return (ranges, intensities) of ``scan --sensor laser_scan`` at (0, 0, 1)."""
    out = tmp_path / f'scan_{len(world)}.json'
    sets = [f'{k}={json.dumps(v)}' for k, v in {**LASER, **world}.items() if k != 'world_file']
    argv = ['scan', '--sensor', 'laser_scan', '--world', world['world_file'], '--pose',
            '0', '0', '1', '0', '0', '0', '--out', str(out)]
    for item in sets:
        argv += ['--set', item]
    assert main(argv) == 0
    data = json.loads(out.read_text())
    angles = data['angle_min'] + data['angle_increment'] * np.arange(len(data['ranges']))
    return (np.asarray(data['ranges'], np.float32), np.asarray(data['intensities'], np.float32),
            np.arctan2(np.sin(angles), np.cos(angles)))


def _node(world):
    """Return the first LaserScan of a laser_scan node under map -> laser at (0, 0, 1)."""
    rig = SensorRig(LaserScanNode, None, {**LASER, **world, 'trigger': 'service'},
                    frame='laser')
    try:
        scans = rig.subscribe(LaserScan, 'scan')
        ok, why = trigger_scan(rig.node, rig.spin_until)
        assert ok, why
        assert rig.spin_until(lambda: scans, 10.0)
        return scans[0]
    finally:
        rig.close()


def _run(tmp_path, world):
    """Return the first LaserScan that ``run`` publishes, its driver standing at the origin."""
    params = {
        'lidar_3d': {'channels': 4, 'horizontal_samples': 36, 'compute_process': False,
                     **world},
        'laser_scan': {**LASER, **world},
        'terrain_sensor': {k: v for k, v in world.items() if k != 'materials_file'},
        'demo_driver': {'speed_m_s': 0.0, 'loop_radius_m': 0.5, 'loop_center_m': [0.0, 0.5],
                        'base_height_m': 0.7, 'laser_pose': [0.0, 0.0, 0.3, 0.0, 0.0, 0.0],
                        'weather_cycle': False},
    }
    path = tmp_path / 'run.yaml'
    path.write_text(json.dumps({k: {'ros__parameters': v} for k, v in params.items()}))
    domain = 40 + os.getpid() % 60
    env = {**os.environ, 'ROS_DOMAIN_ID': str(domain),
           'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain)
    probe = rclpy.create_node('probe', context=ctx)
    scans = []
    probe.create_subscription(LaserScan, '/scan', scans.append,
                              QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE))
    proc = subprocess.Popen([sys.executable, '-m', 'ubot_lidar_sim', 'run', '--params',
                             str(path), '--seconds', '60'], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(probe)
    try:
        end = time.monotonic() + 60.0
        while not scans and time.monotonic() < end and proc.poll() is None:
            executor.spin_once(timeout_sec=0.1)
        assert scans, proc.stderr.read().decode() if proc.poll() is not None else 'no scan'
        return scans[0]
    finally:
        proc.terminate()
        proc.wait(20)
        probe.destroy_node()
        rclpy.shutdown(context=ctx)


def test_scan_run_and_node_give_the_same_first_ranges_of_an_sdf_world(tmp_path):
    world = _world(tmp_path)
    ranges, intensities, angles = _scan(tmp_path, world)
    ahead = np.abs(angles) < np.radians(AHEAD_DEG)
    assert ahead.sum() == 19     # 2 deg steps
    # the collision face, not the visual one 1 m behind it: sdf_geometry and model_paths are
    # read; bound: half the faces' 1 m apart, beside which the physical model's range estimate
    # (the pulse's peak within a few cm of the face) is small
    np.testing.assert_allclose(ranges[ahead], COLLISION_FACE_M / np.cos(angles[ahead]),
                               atol=0.5)
    # the materials file is read: the default table's wall (reflectivity 0.3) is dimmer
    _, dim, _ = _scan(tmp_path, {k: v for k, v in world.items() if k != 'materials_file'})
    assert np.all(intensities[ahead] > dim[ahead])
    for msg in (_node(world), _run(tmp_path, world)):
        np.testing.assert_array_equal(np.asarray(msg.ranges, np.float32), ranges)
        np.testing.assert_array_equal(np.asarray(msg.intensities, np.float32), intensities)
