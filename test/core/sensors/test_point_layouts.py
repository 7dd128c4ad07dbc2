"""Point layouts (docs/nodes.md): packed dtypes, conversion from the full layout, field specs."""

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.point_layouts import (concat_records, copy_records, FULL_DTYPE,
                                                       LAYOUT_DTYPES, NUMPY_OF_DATATYPE,
                                                       OUSTER_DTYPE, point_fields, to_layout,
                                                       VELODYNE_DTYPE)


def test_point_dtypes_are_packed_little_endian_with_contract_sizes():
    assert FULL_DTYPE.itemsize == 40 and VELODYNE_DTYPE.itemsize == 22
    assert OUSTER_DTYPE.itemsize == 30
    assert [FULL_DTYPE.fields[n][1] for n in ('x', 'ring', 'time')] == [0, 16, 18]
    assert all(FULL_DTYPE[n].byteorder in '<|=' for n in FULL_DTYPE.names)


def test_layout_conversion_maps_fields_and_units():
    pts = np.zeros(2, dtype=FULL_DTYPE)
    pts['x'], pts['range'], pts['time'] = [1.0, 2.0], [1.5, 2.25], [0.0, 0.05]
    pts['intensity'], pts['signal'], pts['ring'] = [10, 200], [300, 4000], [3, 4]
    v = to_layout(pts, 'velodyne')
    # bound: float32 fields of exact decimals (0.05 s, integer intensity): default rtol 1e-7
    np.testing.assert_allclose(v['time'], [0.0, 0.05])
    np.testing.assert_array_equal(v['ring'], [3, 4])
    o = to_layout(pts, 'ouster', ambient_counts=20)
    # float32 time carries ~4 ns at 0.05 s.
    # bound: float32 seconds < 0.1 s in ns: half a spacing 3.7 ns < 8 ns
    np.testing.assert_allclose(o['t'].astype(np.int64), [0, 50_000_000], atol=8)
    np.testing.assert_array_equal(o['range'], [1500, 2250])
    np.testing.assert_array_equal(o['reflectivity'], [10, 200])
    # bound: float32 fields of exact decimals (0.05 s, integer intensity): default rtol 1e-7
    np.testing.assert_allclose(o['intensity'], [300, 4000])
    np.testing.assert_array_equal(o['ambient'], 20)


def test_point_fields_are_plain_name_offset_datatype_count_tuples():
    assert point_fields(VELODYNE_DTYPE) == [('x', 0, 7, 1), ('y', 4, 7, 1), ('z', 8, 7, 1),
                                            ('intensity', 12, 7, 1), ('ring', 16, 4, 1),
                                            ('time', 18, 7, 1)]
    for dtype in LAYOUT_DTYPES.values():
        for name, offset, datatype, count in point_fields(dtype):
            assert NUMPY_OF_DATATYPE[datatype] == dtype[name].newbyteorder('<')
            assert (offset, count) == (dtype.fields[name][1], 1)


def test_unknown_layout_and_ouster_stamped_at_the_end_are_refused():
    with pytest.raises(ConfigError, match='point_layout'):
        to_layout(np.zeros(1, FULL_DTYPE), 'kitti')
    # ouster's t is uint32 ns after the stamp: the config refuses a stamp at the sweep's end.
    with pytest.raises(ConfigError, match="stamp_at: got 'end', allowed 'start'"):
        LidarConfig(point_layout='ouster', stamp_at='end')


def test_record_concat_and_copy_give_the_records_numpy_gives():
    rng = np.random.default_rng(3)
    parts = []
    for n in (5, 0, 3):
        pts = np.zeros(n, dtype=FULL_DTYPE)
        pts['x'], pts['ring'] = rng.normal(size=n), rng.integers(0, 128, n)
        pts['return_flags'], pts['class_id'] = 7, np.arange(n)
        parts.append(pts)
    joined = concat_records(parts)
    assert joined.dtype == FULL_DTYPE and joined.shape == (8,)
    assert joined.tobytes() == np.concatenate(parts).tobytes()
    assert concat_records([parts[2]]) is not parts[2]          # a copy, never a view
    dst = np.empty(3, dtype=FULL_DTYPE)
    copy_records(dst, joined[5:])
    np.testing.assert_array_equal(dst, parts[2])
