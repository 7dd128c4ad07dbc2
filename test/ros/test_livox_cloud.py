"""A livox PointCloud2 as livox_ros_driver2 publishes it, read back as sensor_msgs_py does."""

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import PointCloud2, PointField

from ubot_lidar_sim.core.sensors.point_layouts import FULL_DTYPE, to_layout
from ubot_lidar_sim.ros.conversions import array_to_pointcloud2

# livox_ros_driver2 src/lddc.cpp (commit bf4d062) InitPointcloud2MsgHeader, field by field.
DRIVER = [('x', 0, PointField.FLOAT32), ('y', 4, PointField.FLOAT32),
          ('z', 8, PointField.FLOAT32), ('intensity', 12, PointField.FLOAT32),
          ('tag', 16, PointField.UINT8), ('line', 17, PointField.UINT8),
          ('timestamp', 18, PointField.FLOAT64)]
# sensor_msgs_py.point_cloud2._DATATYPES (little-endian here: is_bigendian false).
NUMPY_OF = {PointField.INT8: 'i1', PointField.UINT8: 'u1', PointField.INT16: 'i2',
            PointField.UINT16: 'u2', PointField.INT32: 'i4', PointField.UINT32: 'u4',
            PointField.FLOAT32: 'f4', PointField.FLOAT64: 'f8'}


def read_points(cloud):
    """sensor_msgs_py.point_cloud2.read_points: dtype from the fields, itemsize = point_step."""
    order = '>' if cloud.is_bigendian else '<'
    dtype = np.dtype({'names': [f.name for f in cloud.fields],
                      'formats': [order + NUMPY_OF[f.datatype] for f in cloud.fields],
                      'offsets': [f.offset for f in cloud.fields],
                      'itemsize': cloud.point_step})
    return np.frombuffer(bytes(cloud.data), dtype)


def test_livox_cloud_has_the_drivers_fields_and_reads_back():
    pts = np.zeros(4, dtype=FULL_DTYPE)
    pts['x'] = [1.0, 2.0, 3.0, 4.0]
    pts['intensity'] = [10, 20, 30, 40]
    pts['ring'] = [0, 1, 2, 3]
    pts['time'] = np.array([0.0, 5e-6, 10e-6, 15e-6], dtype=np.float32)
    stamp_ns = 1_700_000_000_000_000_000
    msg = array_to_pointcloud2(to_layout(pts, 'livox', stamp_ns=stamp_ns), 'livox_frame',
                               stamp_ns)
    msg = deserialize_message(serialize_message(msg), PointCloud2)   # over the wire
    assert [(f.name, f.offset, f.datatype, f.count) for f in msg.fields] == [
        (name, offset, datatype, 1) for name, offset, datatype in DRIVER]
    assert msg.point_step == 26 and msg.row_step == 4 * 26 and not msg.is_bigendian
    assert msg.is_dense and msg.height == 1 and msg.width == 4
    back = read_points(msg)
    np.testing.assert_array_equal(back['x'], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(back['intensity'], [10.0, 20.0, 30.0, 40.0])
    np.testing.assert_array_equal(back['line'], [0, 1, 2, 3])
    np.testing.assert_array_equal(back['tag'], 0)
    # Absolute ns (the stamp of the first point), one point interval of 5 us apart (to the
    # float64's 256 ns at this epoch, like the driver's).
    stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
    # bound: float64 ns stamp at today's epoch has a 256 ns spacing
    np.testing.assert_allclose(back['timestamp'] - stamp, [0, 5000, 10000, 15000], atol=256)
