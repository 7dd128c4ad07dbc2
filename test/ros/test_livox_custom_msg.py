"""
livox_custom_msg: livox_ros_driver2/CustomMsg beside the PointCloud2, over real rclpy + DDS.

The message type is the test stand-in test/support/livox_ros_driver2 (the driver's fields),
which scripts/run_tests.sh builds into .ws/test_interfaces and sources (UBOT_TEST_INTERFACES=1:
then a missing package fails here instead of skipping). By hand:
scripts/build_test_interfaces.sh && source .ws/test_interfaces/install/local_setup.bash
"""

import os
from pathlib import Path
import re
import shutil
import subprocess

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from ros_helpers import stamp_ns
from sensor_msgs.msg import PointCloud2

from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE
from ubot_lidar_sim.output import messages
from ubot_lidar_sim.ros.conversions import pointcloud2_to_array
from ubot_lidar_sim.ros.lidar_3d_node import Lidar3DNode

try:
    from livox_ros_driver2.msg import CustomMsg, CustomPoint
except ImportError:         # only where run_tests.sh did not build the test interfaces
    if os.environ.get('UBOT_TEST_INTERFACES'):
        raise
    pytest.skip('livox_ros_driver2 test interfaces not built: scripts/build_test_interfaces.sh '
                '&& source .ws/test_interfaces/install/local_setup.bash',
                allow_module_level=True)

SUPPORT = Path(__file__).resolve().parents[1] / 'support' / 'livox_ros_driver2' / 'msg'
LIVOX = {'preset': 'livox_mid360', 'horizontal_samples': 400, 'noise_enabled': False,
         'world_file': 'flat', 'livox_custom_msg': True}


def _msg_fields(path):
    """Return the (name, type) pairs of a .msg file."""
    rows = [ln.split('#')[0].split() for ln in path.read_text().splitlines()]
    return tuple((name, kind) for kind, name in (r for r in rows if r))


def test_the_test_package_has_the_fields_the_node_writes():
    assert _msg_fields(SUPPORT / 'CustomMsg.msg') == messages.CUSTOM_MSG_FIELDS
    assert _msg_fields(SUPPORT / 'CustomPoint.msg') == messages.CUSTOM_POINT_FIELDS


def test_the_raw_cdr_is_what_rclpy_serialises_padding_aside():
    pts = np.zeros(3, dtype=FULL_DTYPE)
    pts['x'], pts['y'], pts['z'] = [1.5, -2.0, 3.25], [0.5, 0.0, -1.0], [0.0, 0.25, 2.0]
    pts['ring'], pts['intensity'] = [0, 1, 3], [7.0, 255.0, 300.0]
    pts['time'] = [0.0, 2.0 ** -10, 2.0 ** -7]
    stamp = 1_700_000_000_123_456_789
    for frame in ('l', 'livox_frame', 'abc'):         # every alignment after the string
        raw = messages.custom_msg_cdr(messages.livox_custom_msg(pts, frame, stamp, lidar_id=2))
        msg = CustomMsg(timebase=stamp, point_num=3, lidar_id=2, points=[
            CustomPoint(offset_time=t, x=float(x), y=float(y), z=float(z), reflectivity=r,
                        line=line)
            for t, x, y, z, r, line in zip([0, 976_562, 7_812_500], pts['x'], pts['y'],
                                           pts['z'], [7, 255, 255], [0, 1, 3])])
        msg.header.frame_id = frame
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        assert deserialize_message(raw, CustomMsg) == msg
        # rclpy leaves its padding bytes unset: same length, same bytes elsewhere.
        ref = serialize_message(msg)
        assert len(raw) == len(ref)
        differ = [i for i in range(len(raw)) if raw[i] != ref[i]]
        assert all(raw[i] == 0 for i in differ), differ


def test_node_publishes_custom_msg_beside_the_cloud_over_dds(sensor_rig):
    rig = sensor_rig(Lidar3DNode, LIVOX, frame='lidar_3d')
    clouds = rig.subscribe(PointCloud2, 'points')
    customs = rig.subscribe(CustomMsg, 'livox/lidar')

    def pair():
        stamps = {stamp_ns(m): m for m in clouds}
        return next(((stamps[stamp_ns(c)], c) for c in customs if stamp_ns(c) in stamps), None)
    assert rig.spin_until(lambda: pair() is not None, 60.0), (len(clouds), len(customs))
    cloud, custom = pair()
    pts = pointcloud2_to_array(cloud)
    assert cloud.header.frame_id == custom.header.frame_id == 'lidar_3d'
    assert custom.point_num == len(custom.points) == cloud.width > 100
    assert custom.timebase == stamp_ns(custom) == stamp_ns(cloud)
    assert custom.lidar_id == 0 and list(custom.rsvd) == [0, 0, 0]
    got = {name: np.array([getattr(p, name) for p in custom.points])
           for name, _ in messages.CUSTOM_POINT_FIELDS}
    for name in ('x', 'y', 'z'):
        np.testing.assert_array_equal(got[name].astype(np.float32), pts[name])
    np.testing.assert_array_equal(got['line'], pts['line'])
    np.testing.assert_array_equal(got['reflectivity'], pts['intensity'].astype(np.uint8))
    np.testing.assert_array_equal(got['tag'], 0)
    # offset_time: ns after timebase; the cloud's float64 absolute timestamp carries 256 ns.
    # bound: float64 ns stamp at today's epoch has a 256 ns spacing
    np.testing.assert_allclose(got['offset_time'] + float(custom.timebase), pts['timestamp'],
                               rtol=0, atol=256)
    assert got['offset_time'].max() < 100_000_000                      # within one 0.1 s sweep


def _without_test_interfaces(env):
    """Return env with the .ws/test_interfaces entries dropped from the search paths."""
    out = dict(env)
    for key in ('PYTHONPATH', 'AMENT_PREFIX_PATH', 'LD_LIBRARY_PATH', 'CMAKE_PREFIX_PATH'):
        if key in out:
            out[key] = os.pathsep.join(p for p in out[key].split(os.pathsep)
                                       if 'test_interfaces' not in p)
    return out


def test_node_executable_without_livox_ros_driver2_exits_2_with_one_line(tmp_path):
    exe = shutil.which('lidar_3d_node')
    if exe is None:
        pytest.skip('lidar_3d_node not on PATH (source scripts/env.sh after make build)')
    params = tmp_path / 'p.yaml'
    params.write_text('lidar_3d:\n  ros__parameters:\n    preset: livox_mid360\n'
                      '    world_file: flat\n    livox_custom_msg: true\n')
    proc = subprocess.run([exe, '--ros-args', '--params-file', str(params)],
                          capture_output=True, text=True, timeout=60,
                          env=_without_test_interfaces(os.environ))
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and 'Traceback' not in proc.stderr, proc.stderr[-3000:]
    assert re.search(r'livox_custom_msg: got True, allowed false while livox_ros_driver2 is '
                     'not installed', lines[0]), lines[0]
