"""The livox layout: livox_ros_driver2's PointCloud2 fields, read back as sensor_msgs_py does."""

import numpy as np

from ubot_lidar_sim.core.config import from_dict, LidarConfig, replace
from ubot_lidar_sim.core.config.presets import load_preset
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
from ubot_lidar_sim.core.sensors.point_layouts import (FULL_DTYPE, LIVOX_DTYPE, point_fields,
                                                       to_layout)
from ubot_lidar_sim.core.world.world import World

FLOAT32, UINT8, FLOAT64 = 7, 2, 8
# livox_ros_driver2 src/lddc.cpp (commit bf4d062), InitPointcloud2MsgHeader: name, offset,
# datatype, count; point_step = sizeof(LivoxPointXyzrtlt) under #pragma pack(1) (comm.h) = 26.
DRIVER_FIELDS = [('x', 0, FLOAT32, 1), ('y', 4, FLOAT32, 1), ('z', 8, FLOAT32, 1),
                 ('intensity', 12, FLOAT32, 1), ('tag', 16, UINT8, 1), ('line', 17, UINT8, 1),
                 ('timestamp', 18, FLOAT64, 1)]
# sensor_msgs_py.point_cloud2: PointField datatype -> numpy type, little-endian unless
# is_bigendian.
_SENSOR_MSGS_PY_TYPES = {1: 'i1', 2: 'u1', 3: 'i2', 4: 'u2', 5: 'i4', 6: 'u4', 7: 'f4', 8: 'f8'}


def read_points_like_sensor_msgs_py(data, fields, point_step, is_bigendian=False):
    """sensor_msgs_py.read_points: a structured dtype from the fields, itemsize point_step."""
    order = '>' if is_bigendian else '<'
    dtype = np.dtype({'names': [f[0] for f in fields],
                      'formats': [order + _SENSOR_MSGS_PY_TYPES[f[2]] for f in fields],
                      'offsets': [f[1] for f in fields], 'itemsize': point_step})
    return np.frombuffer(data, dtype)


def _full_points():
    pts = np.zeros(3, dtype=FULL_DTYPE)
    pts['x'], pts['y'], pts['z'] = [1.0, 2.0, 3.0], [-1.0, 0.5, 0.25], [0.1, 0.2, 0.3]
    pts['intensity'] = [7, 99, 255]
    pts['ring'] = [0, 3, 5]
    pts['time'] = np.array([0.0, 12.5e-6, 0.0999958], dtype=np.float32)
    return pts


def test_the_livox_layout_is_the_drivers_point():
    assert point_fields(LIVOX_DTYPE) == DRIVER_FIELDS
    assert LIVOX_DTYPE.itemsize == 26


def test_livox_fields_carry_reflectivity_line_and_absolute_ns():
    stamp_ns = 1_700_000_000_123_456_789
    out = to_layout(_full_points(), 'livox', stamp_ns=stamp_ns)
    np.testing.assert_array_equal(out['intensity'], [7.0, 99.0, 255.0])
    np.testing.assert_array_equal(out['line'], [0, 3, 5])
    np.testing.assert_array_equal(out['tag'], 0)
    # pub_handler.cpp: timestamp = packet time + i x point interval, absolute ns as a double
    # (the driver's float64 keeps ~256 ns at today's epoch, as here).
    t = _full_points()['time'].astype(np.float64)
    # bound: the float64 ns stamp at today's epoch keeps 256 ns (its spacing), float32 time
    # < 0.1 s half a spacing 3.7 ns: 512 ns is two spacings of the stamp
    np.testing.assert_allclose(out['timestamp'] - stamp_ns, np.rint(t * 1e9), atol=512)
    assert out['timestamp'][0] == float(stamp_ns)


def test_a_livox_sweep_reads_back_field_for_field(materials):
    world = World.from_dict({'frame': 'map', 'objects': [
        {'name': 'wall', 'type': 'box', 'size_m': [0.2, 200, 200], 'pose': {'xyz': [20.1, 0, 0]},
         'material': 'concrete'}]})
    cfg = replace(from_dict(LidarConfig, load_preset('livox_avia')), sub_rays=1)
    res = LidarSimulator(cfg, world, materials).scan(
        BodyTwist(pose_matrix_deg([0, 0, 0], [0, 0, 0])), 0.0)
    cloud = to_layout(res.points, cfg.point_layout, stamp_ns=5_000_000_000)
    assert len(cloud) > 20_000
    back = read_points_like_sensor_msgs_py(cloud.tobytes(), point_fields(cloud.dtype),
                                           cloud.dtype.itemsize)
    for name in LIVOX_DTYPE.names:
        np.testing.assert_array_equal(back[name], cloud[name])
    # bound: 20 cm, a wall hit
    np.testing.assert_allclose(back['x'], 20.0, atol=0.2)              # the wall ahead
    assert set(np.unique(back['line'])) == set(range(6))
    # Per-point time from the header stamp: the frame's 0.1 s, point after point.
    dt_ns = back['timestamp'] - 5e9
    assert dt_ns.min() >= 0.0 and dt_ns.max() < 1e8
