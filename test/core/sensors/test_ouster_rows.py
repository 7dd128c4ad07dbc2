"""
The ouster layout is ouster-ros's organised cloud (docs/driver-conventions.md).

Values read from ouster-lidar/ouster-ros (commit 015f03e): ``ouster-ros/src/
point_cloud_compose.h`` scan_to_cloud_f (organised: target index ``u * w + v``, ``pt.t`` =
the column's timestamp minus the scan's, ``pt.ring = u`` for every cell, ``is_dense`` false
when a cell's xyz is NaN), ``ouster-ros/src/point_cloud_processor.h`` (the cloud is
columns_per_frame wide and pixels_per_column high; cartesianT gets quiet_NaN for pixels
without a range) and ``ouster-ros/src/impl/cartesian.h`` (a range <= min_range: xyz = NaN).
Row u is the sensor's beam u, beam_altitude_angles listed highest first: row 0 the topmost.
"""

from types import SimpleNamespace

import numpy as np

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.physics.return_selection import FLAG_LAST, FLAG_STRONGEST
from ubot_lidar_sim.core.sensors.organised_rows import driver_cloud, ouster_rows
from ubot_lidar_sim.core.sensors.point_layouts import (FULL_DTYPE, is_dense, returned_count,
                                                       to_layout)

# Three rings (ring 0 the lowest, as the core numbers them) and three columns that fire in
# the order 1, 2, 0.
BEAMS = SimpleNamespace(ring_elevation_rad=np.array([-0.1, 0.0, 0.1]),
                        column_time_s=np.array([0.02, 0.0, 0.01]),
                        ring_time_offset_s=np.zeros(3))


def _point(x, flags, time):
    pt = np.zeros(1, FULL_DTYPE)
    pt['x'], pt['range'], pt['return_flags'], pt['time'] = x, x, flags, time
    pt['signal'], pt['intensity'], pt['class_id'] = 1000, 50, 7
    return pt


def _sweep():
    # Beam b = ring * 3 + column: the top ring's first column (b 7), the bottom ring's last
    # fired column (b 0, a weak near echo and a strong far one).
    pts = np.concatenate([_point(5.0, FLAG_STRONGEST | FLAG_LAST, 0.0),
                          _point(2.0, FLAG_LAST, 0.02), _point(9.0, FLAG_STRONGEST, 0.02)])
    return pts, np.array([7, 0, 0])


def test_ouster_rows_put_the_top_beam_in_row_0_and_columns_in_firing_order():
    cells = ouster_rows(*_sweep(), BEAMS)
    assert cells.shape == (9,)
    assert cells['x'][0] == 5.0            # ring 2 (highest), column 1 (fired first): u 0 v 0
    assert cells['x'][2 * 3 + 2] == 9.0    # ring 0 (lowest), column 0 (fired last): u 2 v 2
    np.testing.assert_array_equal(cells['ring'], [0, 0, 0, 1, 1, 1, 2, 2, 2])   # ring = u


def test_a_cell_without_a_return_is_nan_with_zero_range_and_its_column_time():
    cells = to_layout(ouster_rows(*_sweep(), BEAMS), 'ouster', ambient_counts=20)
    empty = np.ones(9, bool)
    empty[[0, 8]] = False
    assert np.isnan(cells['x'][empty]).all() and np.isnan(cells['z'][empty]).all()
    assert (cells['range'][empty] == 0).all() and (cells['intensity'][empty] == 0).all()
    assert (cells['reflectivity'][empty] == 0).all()
    # t = the column's time after the stamp in every row: columns fire at 0, 10, 20 ms.
    np.testing.assert_array_equal(cells['t'].reshape(3, 3),
                                  [[0, 10_000_000, 20_000_000]] * 3)
    assert not is_dense(cells) and returned_count(cells) == 2


def test_of_two_echoes_a_cell_holds_the_strongest_as_ouster_ros_first_cloud():
    cells = ouster_rows(*_sweep(), BEAMS)
    assert cells['x'][8] == 9.0 and cells['class_id'][8] == 7


def test_driver_cloud_of_an_ouster_config_is_rings_high_and_columns_wide():
    cfg = LidarConfig(point_layout='ouster', channels=4, horizontal_samples=16)
    pts = np.zeros(0, FULL_DTYPE)
    cells, height = driver_cloud(pts, np.zeros(0, np.int64), cfg)
    assert height == 4 and cells.shape == (64,)
    assert np.isnan(cells['x']).all()
    # Every row has the same column times, rising along the row (firing order).
    t = cells['time'].reshape(4, 16)
    np.testing.assert_array_equal(t, np.repeat(t[:1], 4, axis=0))
    assert np.all(np.diff(t[0]) > 0)
    velo, h = driver_cloud(pts, np.zeros(0, np.int64), LidarConfig(point_layout='velodyne'))
    assert h == 1 and velo.shape == (0,)
