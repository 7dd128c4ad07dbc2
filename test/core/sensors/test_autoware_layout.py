"""point_layout autoware: Nebula's PointXYZIRCAEDT from the full layout, by hand values."""

import math

import numpy as np
import pytest

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors.point_layouts import (AUTOWARE_DTYPE, FULL_DTYPE, point_fields,
                                                       return_type_table, to_layout)

# tier4/nebula point_types.hpp: the C struct's offsets (no padding) and PointField datatypes.
NEBULA_FIELDS = [('x', 0, 7, 1), ('y', 4, 7, 1), ('z', 8, 7, 1), ('intensity', 12, 2, 1),
                 ('return_type', 13, 2, 1), ('channel', 14, 4, 1), ('azimuth', 16, 7, 1),
                 ('elevation', 20, 7, 1), ('distance', 24, 7, 1), ('time_stamp', 28, 6, 1)]
# nebula_common.hpp ReturnType: LAST 1, FIRST 2, STRONGEST 3, IDENTICAL 6, FIRST_STRONGEST 9,
# LAST_STRONGEST 10. Flags: 1 first, 2 strongest, 4 last.
LAST, FIRST, STRONGEST, IDENTICAL, FIRST_STRONGEST, LAST_STRONGEST = 1, 2, 3, 6, 9, 10


def _points():
    pts = np.zeros(4, dtype=FULL_DTYPE)
    pts['x'], pts['y'], pts['z'] = [3.0, 0.0, -1.0, 1.0], [4.0, -2.0, 0.0, 0.0], [0, 2, -1, 0]
    pts['range'] = [5.0, math.sqrt(8.0), math.sqrt(2.0), 1.0]
    pts['ring'] = [0, 7, 15, 300]
    pts['time'] = [0.0, 2.0 ** -7, 2.0 ** -4, 0.0]          # exact in float32
    pts['intensity'] = [12.4, 0.0, 300.0, 254.6]
    pts['return_flags'] = [7, 6, 3, 4]
    return pts


def test_autoware_dtype_is_nebulas_point_xyzircaedt():
    assert AUTOWARE_DTYPE.itemsize == 32
    assert point_fields(AUTOWARE_DTYPE) == NEBULA_FIELDS


def test_a_point_at_known_xyz_ring_time_and_flags_gives_the_autoware_record():
    a = to_layout(_points(), 'autoware', return_mode='dual_strongest_last')
    assert a.dtype == AUTOWARE_DTYPE
    np.testing.assert_array_equal(a['x'], [3.0, 0.0, -1.0, 1.0])
    np.testing.assert_array_equal(a['intensity'], [12, 0, 255, 255])
    np.testing.assert_array_equal(a['channel'], [0, 7, 15, 300])
    np.testing.assert_array_equal(a['time_stamp'], [0, 7_812_500, 62_500_000, 0])
    # Azimuth from +y towards +x (Nebula: x = d cos(el) sin(az), y = d cos(el) cos(az)).
    want_az = [math.atan2(3, 4), math.pi, 1.5 * math.pi, 0.5 * math.pi]
    want_el = [0.0, math.pi / 4, -math.pi / 4, 0.0]
    # bound: float32 angles below 2 pi: half a spacing is 2.4e-7 rad
    np.testing.assert_allclose(a['azimuth'], want_az, rtol=0, atol=2.4e-7)
    # bound: float32 angles below 2 pi: half a spacing is 2.4e-7 rad
    np.testing.assert_allclose(a['elevation'], want_el, rtol=0, atol=2.4e-7)
    np.testing.assert_array_equal(a['distance'], _points()['range'])
    # dual_strongest_last: all its flags (7, 6) IDENTICAL; 3 -> strongest; 4 -> last.
    np.testing.assert_array_equal(a['return_type'], [IDENTICAL, IDENTICAL, STRONGEST, LAST])


def test_the_direction_rebuilds_xyz_in_nebulas_convention():
    a = to_layout(_points(), 'autoware', return_mode='strongest')
    az, el, d = (a[n].astype(np.float64) for n in ('azimuth', 'elevation', 'distance'))
    xyz = np.stack([d * np.cos(el) * np.sin(az), d * np.cos(el) * np.cos(az), d * np.sin(el)])
    # bound: float32 angles (2.4e-7 rad) times ranges <= 5 m, plus float32 xyz: 3e-6 m
    np.testing.assert_allclose(xyz.T, np.stack([a['x'], a['y'], a['z']]).T, atol=3e-6)


@pytest.mark.parametrize('mode, types', [
    ('strongest', [STRONGEST] * 4), ('first', [FIRST] * 4), ('last', [LAST] * 4),
    ('dual_first_last', [IDENTICAL, LAST, FIRST, LAST]),
    ('triple_first_strongest_last', [IDENTICAL, LAST_STRONGEST, FIRST_STRONGEST, LAST]),
    (None, [IDENTICAL, LAST_STRONGEST, FIRST_STRONGEST, LAST])])
def test_return_type_follows_the_return_mode(mode, types):
    a = to_layout(_points(), 'autoware', return_mode=mode)
    np.testing.assert_array_equal(a['return_type'], types)


def test_an_unknown_return_mode_is_refused_by_name():
    with pytest.raises(ConfigError, match="return_mode: got 'second'"):
        return_type_table('second')


def test_autoware_layout_needs_stamp_at_start():
    assert LidarConfig(point_layout='autoware').point_layout == 'autoware'
    with pytest.raises(ConfigError, match=r"stamp_at: got 'end'.*'autoware' \(time_stamp"):
        LidarConfig(point_layout='autoware', stamp_at='end')


def test_livox_custom_msg_needs_the_livox_layout_and_stamp_at_start():
    assert LidarConfig(point_layout='livox', livox_custom_msg=True).livox_custom_msg
    with pytest.raises(ConfigError, match=r"livox_custom_msg: got True.*point_layout 'livox'"):
        LidarConfig(point_layout='velodyne', livox_custom_msg=True)
    with pytest.raises(ConfigError, match=r"stamp_at: got 'end'.*offset_time"):
        LidarConfig(point_layout='livox', livox_custom_msg=True, stamp_at='end')
