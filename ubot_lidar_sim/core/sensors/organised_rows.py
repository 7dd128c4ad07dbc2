"""
A sweep as its layout's driver publishes it: the order, and ouster-ros's organised rows.

ouster-ros publishes an organised cloud (ouster-lidar/ouster-ros
``ouster-ros/src/point_cloud_compose.h`` scan_to_cloud_f, ``point_cloud_processor.h``,
``impl/cartesian.h``, commit 015f03e): ``height`` = pixels per column (the beams), ``width``
= columns per frame, the cell of beam row u and column v at index ``u * w + v``; row u is the
sensor's beam u, in the order of its ``beam_altitude_angles`` (highest first), so row 0 is the
topmost beam, and ``ring = u``; columns in measurement order (the order they fire); every cell
has ``t`` = its column's time after the scan's stamp. A pixel without a return (range 0, or
outside min/max range) gets x, y, z = NaN (cartesianT's ``invalid`` is quiet_NaN) and its range,
signal and reflectivity fields 0 (the pixel's own values); ``is_dense`` is false when any
cell is NaN. Of a multi-return sensor the first cloud holds the strongest return (the RANGE
field); its second cloud (RANGE2, another topic) is not simulated: a cell keeps its beam's
echo flagged strongest.
"""

from __future__ import annotations

from typing import Tuple, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.physics.return_selection import FLAG_STRONGEST
from ubot_lidar_sim.core.sensors.driver_order import driver_points
from ubot_lidar_sim.core.sensors.point_layouts import configured_layout, FULL_DTYPE

if TYPE_CHECKING:       # annotations only: the recorders import this module, not the simulator
    from ubot_lidar_sim.core.beams.firing import Beams
    from ubot_lidar_sim.core.config.lidar import LidarConfig
    from ubot_lidar_sim.core.sensors.lidar import ScanResult

#: The layouts whose driver publishes an organised cloud (rows x columns).
ORGANISED_LAYOUTS = ('ouster',)


def _one_per_beam(points, beam):
    """Return the indices of one point per beam that returned: its strongest echo (else first)."""
    weak = (points['return_flags'] & FLAG_STRONGEST) == 0
    order = np.lexsort((weak, beam))            # by beam, the strongest first (stable)
    b = beam[order]
    first = np.ones(b.size, dtype=bool)
    first[1:] = b[1:] != b[:-1]
    return order[first]


def ouster_rows(points: NDArray[np.void], beam: NDArray[np.int64],
                beams: Beams) -> NDArray[np.void]:
    """
    Return FULL_DTYPE cells (R * C,) of a sweep, row-major as ouster-ros's organised cloud.

    points (P,) FULL_DTYPE with beam (P,) their grid index (ring * C + column) in Beams
    ``beams``. Row 0 is the highest ring (by ring_elevation_rad), columns by firing time; a
    cell's ``ring`` is its row; a cell without a return has x, y, z NaN, range, intensity,
    signal, reflectivity, labels 0 and ``time`` its beam's firing time.
    """
    n_rows, n_cols = beams.ring_elevation_rad.size, beams.column_time_s.size
    ring_of_row = np.argsort(-beams.ring_elevation_rad, kind='stable')
    col_of_pos = np.argsort(beams.column_time_s, kind='stable')
    row_of_ring = np.empty(n_rows, np.intp)
    row_of_ring[ring_of_row] = np.arange(n_rows)
    pos_of_col = np.empty(n_cols, np.intp)
    pos_of_col[col_of_pos] = np.arange(n_cols)
    cells = np.zeros(n_rows * n_cols, dtype=FULL_DTYPE)
    for name in ('x', 'y', 'z'):
        cells[name] = np.nan
    cells['time'] = (beams.ring_time_offset_s[ring_of_row][:, None]
                     + beams.column_time_s[col_of_pos][None, :]).ravel()
    keep = _one_per_beam(points, np.asarray(beam, dtype=np.int64))
    b = np.asarray(beam, dtype=np.int64)[keep]
    cell = row_of_ring[b // n_cols] * n_cols + pos_of_col[b % n_cols]
    raw = cells.view(np.dtype((np.void, FULL_DTYPE.itemsize)))
    raw[cell] = np.ascontiguousarray(points).view(raw.dtype)[keep]
    cells['ring'] = np.repeat(np.arange(n_rows, dtype=np.uint16), n_cols)
    return cells


def driver_cloud(points: NDArray[np.void], beam: NDArray[np.int64],
                 cfg: LidarConfig) -> Tuple[NDArray[np.void], int]:
    """
    Return (FULL_DTYPE points (N,) as cfg.point_layout's driver publishes them, height).

    ouster: the organised cells (ouster_rows), height the rings; the others: the points in
    their driver's order (driver_order.driver_points), height 1. A recording's labels follow
    these points.
    """
    if cfg.point_layout not in ORGANISED_LAYOUTS:
        return driver_points(points, cfg), 1
    beams = build_beams(cfg)
    return ouster_rows(points, beam, beams), beams.ring_elevation_rad.size


def layout_cloud(result: ScanResult, cfg: LidarConfig,
                 stamp_ns: int) -> Tuple[NDArray[np.void], NDArray[np.void], int]:
    """
    Return (cloud in cfg.point_layout, its FULL_DTYPE points (the labels' order), height).

    result: a ScanResult (points, beam); the cloud's width is its length / height.
    """
    points, height = driver_cloud(result.points, result.beam, cfg)
    return configured_layout(points, cfg, stamp_ns), points, height
