"""The live view of a running graph: `view` with no file and `run --view` (real rclpy and DDS)."""

import math
import os
from pathlib import Path
import socket
import subprocess
import sys
import time

from geometry_msgs.msg import TransformStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan, PointCloud2
from tf2_msgs.msg import TFMessage

from ubot_lidar_sim.output.view import View
from ubot_lidar_sim.ros.conversions import array_to_pointcloud2
from ubot_lidar_sim.ros.live_view import LiveView, scan_points, topic_name

TREE = Path(__file__).resolve().parents[2]


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def _cloud(stamp, frame='lidar_3d'):
    pts = np.zeros(3, dtype=[('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4')])
    pts['x'] = (1.0, 2.0, 3.0)
    msg = array_to_pointcloud2(pts, frame, 0)
    msg.header.stamp = stamp
    return msg


def _scan(stamp):
    msg = LaserScan()
    msg.header.frame_id, msg.header.stamp = 'laser', stamp
    msg.angle_min, msg.angle_increment, msg.range_min, msg.range_max = 0.0, 0.5, 0.1, 10.0
    msg.ranges = [1.0, 2.0, math.inf]
    return msg


def _tf(stamp, child, z):
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id, t.header.stamp = 'map', child, stamp
    t.transform.translation.z = z
    t.transform.rotation.w = 1.0
    return t


def test_a_scan_is_shown_as_its_hits_at_range_and_angle():
    msg = _scan(None)
    msg.angle_increment = math.pi / 2
    msg.ranges = [1.0, math.inf, 2.0, 0.05, 11.0]       # 0.05 < range_min, 11 > range_max
    msg.intensities = [10.0, 0.0, 30.0, 40.0, 50.0]
    pts = scan_points(msg)
    assert len(pts) == 2
    # bound: float32 of 2 cos(pi), 2 sin(pi): within 2 ulp of 2 (2.4e-7 m) of (-2, 0)
    assert np.allclose(pts['x'], (1.0, -2.0), atol=1e-6)
    assert np.allclose(pts['y'], (0.0, 0.0), atol=1e-6)
    assert list(pts['intensity']) == [10.0, 30.0]


def test_topics_of_a_namespace_sit_below_it_unless_absolute():
    assert topic_name('', 'points') == '/points'
    assert topic_name('robot2', 'lidar_3d/boxes') == '/robot2/lidar_3d/boxes'
    assert topic_name('/robot2/', 'scan') == '/robot2/scan'
    assert topic_name('robot2', '/environment') == '/environment'


@pytest.mark.ros
def test_live_view_logs_clouds_scans_and_the_path_in_the_world_frame(context):
    view = View(web_port=_free_port(), grpc_port=_free_port())
    live = LiveView(view, context)
    probe = rclpy.create_node('probe', context=context)
    ex = SingleThreadedExecutor(context=context)
    for node in (live, probe):
        ex.add_node(node)
    clouds = probe.create_publisher(PointCloud2, '/points', qos_profile_sensor_data)
    scans = probe.create_publisher(LaserScan, '/scan', qos_profile_sensor_data)
    tf = probe.create_publisher(TFMessage, '/tf', 100)

    def publish_tf():
        stamp = probe.get_clock().now().to_msg()
        tf.publish(TFMessage(transforms=[_tf(stamp, c, z) for c, z in (
            ('lidar_3d', 1.5), ('laser', 1.0), ('base_link', 0.0))]))
        ex.spin_once(timeout_sec=0.05)
        return stamp
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not live.knows('base_link'):
            publish_tf()
        while time.monotonic() < end and not (live.counts['points'] and live.counts['scan']
                                              and view.logged['world/robot']):
            stamp = publish_tf()
            clouds.publish(_cloud(stamp))
            scans.publish(_scan(stamp))
            ex.spin_once(timeout_sec=0.05)
        assert view.logged['world/points'] >= 1 and view.logged['world/scan'] >= 1
        assert view.logged['world/robot_path'] >= 1
        # Every frame had its transform: nothing was shown in its own frame.
        assert live.unplaced == set()
    finally:
        ex.shutdown()
        live.destroy_node()
        probe.destroy_node()


def _env(context):
    return dict(os.environ, ROS_DOMAIN_ID=str(context.get_domain_id()), PYTHONPATH=os.pathsep.join(
        p for p in (str(TREE), os.environ.get('PYTHONPATH', '')) if p))


@pytest.mark.ros
def test_view_without_a_file_shows_the_clouds_of_the_running_graph(context):
    proc = subprocess.Popen(
        [sys.executable, '-m', 'ubot_lidar_sim', 'view', '--serve-seconds', '15',
         '--web-port', str(_free_port()), '--grpc-port', str(_free_port())],
        stderr=subprocess.PIPE, text=True, env=_env(context))
    probe = rclpy.create_node('probe', context=context)
    ex = SingleThreadedExecutor(context=context)
    ex.add_node(probe)
    clouds = probe.create_publisher(PointCloud2, '/points', qos_profile_sensor_data)
    try:
        while proc.poll() is None:
            clouds.publish(_cloud(probe.get_clock().now().to_msg(), frame='map'))
            ex.spin_once(timeout_sec=0.1)
        err = proc.stderr.read()
        assert proc.returncode == 0, err
        assert 'viewer: http://127.0.0.1:' in err       # the bound address (--bind)
        line = [x for x in err.splitlines() if x.startswith('view: ')][-1]
        assert int(line.split()[1]) >= 1 and line.endswith('from the graph'), line
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=20)
        ex.shutdown()
        probe.destroy_node()


@pytest.mark.ros
def test_run_with_view_shows_its_own_sweeps(context):
    proc = subprocess.run(
        [sys.executable, '-m', 'ubot_lidar_sim', 'run', '--seconds', '15', '--view',
         '--serve-seconds', '0.1', '--web-port', str(_free_port()), '--grpc-port',
         str(_free_port())], capture_output=True, text=True, env=_env(context), timeout=300)
    assert proc.returncode == 0, proc.stderr
    line = [x for x in proc.stderr.splitlines() if x.startswith('view: ')][-1]
    clouds, scans = int(line.split()[1]), int(line.split()[3])
    # The run's own summary: what its monitor counted of each sensor. The monitor and the view
    # are two subscribers in one executor, each handed a message in turn: when the run ends,
    # one of them may hold one message more than the other, and a last one may be in flight.
    published = {row.split()[0]: int(row.split()[1]) for row in proc.stdout.splitlines()
                 if row.split()[:1] in (['lidar_3d'], ['laser_scan']) and len(row.split()) > 2
                 and row.split()[1].isdigit()}
    assert published.get('lidar_3d', 0) >= 1 and published.get('laser_scan', 0) >= 1, (
        proc.stdout[-2000:], proc.stderr[-2000:])
    assert abs(clouds - published['lidar_3d']) <= 2, (line, published)
    assert abs(scans - published['laser_scan']) <= 2, (line, published)


def test_the_nan_cells_of_an_organised_cloud_are_not_shown_as_points():
    # The ouster layout is organised (ouster-ros): cells without a return hold NaN x, y, z.
    view = View(web_port=_free_port(), grpc_port=_free_port())
    pts = np.zeros(4, dtype=[('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('intensity', '<f4')])
    pts['x'] = (1.0, np.nan, 3.0, np.nan)
    assert view.points('points', pts) == 2
    assert view.logged['world/points'] == 1
