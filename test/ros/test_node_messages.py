"""A node says what it does: a start line, one warning while it waits for /tf or its world."""

import os
from pathlib import Path
import subprocess
import time

from geometry_msgs.msg import TransformStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import PointCloud2
from tf2_msgs.msg import TFMessage
import yaml

# scripts/env.sh sets UBOT_INSTALL to the install directory of the build it activates.
EXE = Path(os.environ.get('UBOT_INSTALL', Path(__file__).resolve().parents[2] / 'install'),
           'ubot_lidar_sim', 'lib', 'ubot_lidar_sim', 'lidar_3d_node')
PARAMS = {'channels': 8, 'horizontal_samples': 120, 'sub_rays': 1, 'max_range_m': 30.0,
          'rate_hz': 10.0, 'world_file': 'flat', 'preset': 'custom'}


def _tf(stamp):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id, t.header.stamp = 'map', 'lidar_3d', stamp
    t.transform.translation.z = 1.5
    t.transform.rotation.w = 1.0
    return TFMessage(transforms=[t])


def _wait_for(path, text, spin, timeout_s):
    """Spin until text is in the file at path; return its content."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        content = path.read_text()
        if text in content:
            return content
        spin()
    return path.read_text()


def _start_node(context, tmp_path):
    """Start lidar_3d_node (PARAMS) on the test's domain; return (process, its log file)."""
    params = tmp_path / 'p.yaml'
    params.write_text(yaml.safe_dump({'lidar_3d': {'ros__parameters': PARAMS}}))
    log = tmp_path / 'node.log'
    env = dict(os.environ, ROS_DOMAIN_ID=str(context.get_domain_id()), PYTHONUNBUFFERED='1',
               RCUTILS_LOGGING_BUFFERED_STREAM='0')
    with open(log, 'w') as out:
        proc = subprocess.Popen([str(EXE), '--ros-args', '--params-file', str(params)],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    return proc, log


@pytest.mark.ros
def test_node_says_it_started_waits_for_tf_once_then_its_first_sweep(context, tmp_path):
    proc, log = _start_node(context, tmp_path)
    node = rclpy.create_node('probe', context=context)
    ex = SingleThreadedExecutor(context=context)
    ex.add_node(node)
    clouds = []
    node.create_subscription(PointCloud2, '/points', clouds.append, 5)
    tf_pub = node.create_publisher(TFMessage, '/tf', 100)
    try:
        text = _wait_for(log, 'waiting for /tf', lambda: ex.spin_once(timeout_sec=0.1), 120)
        assert ("/lidar_3d started: lidar_3d, preset custom, model physical, world 'flat' "
                "(1 objects), 10 Hz (timer), poses of 'lidar_3d' in 'map' from /tf") in text
        assert ("waiting for /tf: no transform from 'map' to 'lidar_3d' has arrived") in text
        assert 'first sweep' not in text

        def publish_and_spin():
            tf_pub.publish(_tf(node.get_clock().now().to_msg()))
            ex.spin_once(timeout_sec=0.05)
        text = _wait_for(log, 'first sweep published', publish_and_spin, 60)
        assert 'first sweep published: ' in text, text
        assert text.count('waiting for /tf') == 1
        assert text.count('first sweep published') == 1
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        ex.shutdown()
        node.destroy_node()


@pytest.mark.ros
def test_node_without_a_subscriber_says_once_that_it_idles(context, tmp_path):
    proc, log = _start_node(context, tmp_path)
    node = rclpy.create_node('probe', context=context)
    ex = SingleThreadedExecutor(context=context)
    ex.add_node(node)
    try:
        text = _wait_for(log, 'idle: nobody subscribes', lambda: ex.spin_once(timeout_sec=0.1),
                         120)
        assert 'idle: nobody subscribes to its output yet' in text, text
        for _ in range(20):         # 2 s: ~20 periods of idling, still one line
            ex.spin_once(timeout_sec=0.1)
        node.create_subscription(PointCloud2, '/points', lambda _: None, 5)
        text = _wait_for(log, 'waiting for /tf', lambda: ex.spin_once(timeout_sec=0.1), 60)
        assert text.count('idle: nobody subscribes') == 1, text
        assert 'demo_driver_node' in text, text     # advice a PyPI install can follow
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        ex.shutdown()
        node.destroy_node()


def _grid_obj(path, n):
    """Write an OBJ of a bumpy n x n grid: 2 n^2 triangles (text, parsed on a cold load)."""
    xs, ys = np.meshgrid(np.arange(n + 1), np.arange(n + 1))
    v = np.stack([xs.ravel() * 0.01, ys.ravel() * 0.01, np.sin(xs.ravel()) * 0.01], axis=1)
    idx = np.arange((n + 1) ** 2).reshape(n + 1, n + 1) + 1
    a, b, c, d = (idx[:-1, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, :-1].ravel(),
                  idx[1:, 1:].ravel())
    with open(path, 'w') as out:
        np.savetxt(out, v, fmt='v %.3f %.3f %.3f')
        np.savetxt(out, np.concatenate([np.stack([a, b, d], 1), np.stack([a, d, c], 1)]),
                   fmt='f %d %d %d')


@pytest.mark.ros
def test_node_says_what_it_loads_while_a_world_takes_long_then_its_start_line(
        context, tmp_path):
    # A 1.28 M-triangle OBJ parsed cold (an empty mesh cache): ~10 s on the 2-core machine of
    # these tests, 2.5 s for a quarter of it; the line comes after LOAD_NOTICE_S (1 s).
    _grid_obj(tmp_path / 'big.obj', 800)
    (tmp_path / 'w.sdf').write_text(
        '<?xml version="1.0"?><sdf version="1.9"><world name="w"><model name="m"><static>true'
        '</static><link name="l"><visual name="v"><geometry><mesh><uri>big.obj</uri></mesh>'
        '</geometry></visual></link></model></world></sdf>')
    params = tmp_path / 'p.yaml'
    params.write_text(yaml.safe_dump({'lidar_3d': {'ros__parameters': {
        **PARAMS, 'world_file': str(tmp_path / 'w.sdf')}}}))
    log = tmp_path / 'node.log'
    env = dict(os.environ, ROS_DOMAIN_ID=str(context.get_domain_id()), PYTHONUNBUFFERED='1',
               RCUTILS_LOGGING_BUFFERED_STREAM='0', UBOT_LIDAR_SIM_MESH_CACHE=str(tmp_path / 'c'))
    with open(log, 'w') as out:
        proc = subprocess.Popen([str(EXE), '--ros-args', '--params-file', str(params)],
                                stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        text = _wait_for(log, 'started: ', lambda: time.sleep(0.1), 300)
        line = (f"waiting for the world: loading '{tmp_path / 'w.sdf'}' (SDF: 1 mesh); the "
                'node starts when it is loaded')
        assert line in text, text
        assert text.count('waiting for the world') == 1
        assert text.index(line) < text.index('/lidar_3d started: ')
    finally:
        proc.terminate()
        proc.wait(timeout=20)
