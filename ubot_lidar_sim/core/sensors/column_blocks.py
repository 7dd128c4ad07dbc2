"""
Column blocks: a spinning sweep cut by firing time into blocks that are computed on their own.

A spinning LiDAR fires its columns one after another. With ``column_blocks`` n > 1 the columns
are cut by firing time into n blocks of about equal count, and each block is traced as a sweep
of its own over its columns, with random streams keyed by the block. A block can then be
computed as soon as the poses of its columns are known (lidar_3d's ``trigger: stream``), while
the sweep still fires. The blocks' results merge into the sweep's ScanResult: points in beam
order (ring-major, each beam's echoes in their order), the per-beam arrays on the whole grid.
The bytes depend on n (each block draws its own numbers), not on where or in what order the
blocks were computed.
"""

from dataclasses import replace
from typing import Any, List, Optional, Sequence, Tuple, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ubot_lidar_sim.core.beams.firing import Beams
from ubot_lidar_sim.core.sensors.point_layouts import concat_records, take_records

#: The result type merge_columns merges (lidar.ScanResult, which imports this module).
Result = TypeVar('Result', bound=Any)


class BlockPlan(tuple):
    """
    The column blocks of a sweep: plan[j] the sorted int64 columns (C_j,) of block j.

    The one place that cuts the columns (of) and joins a run of blocks (union); the
    simulator, the compute processes and the merge read their blocks from it.
    """

    @classmethod
    def of(cls, column_time_s: ArrayLike, n_blocks: int = 1) -> 'BlockPlan':
        """Return the plan of n_blocks blocks by firing time (block_columns); 1: one block."""
        if n_blocks > 1:
            return cls(block_columns(column_time_s, n_blocks))
        return cls([np.arange(np.size(column_time_s))])

    def union(self, j0: int = 0, j1: Optional[int] = None) -> NDArray[np.int64]:
        """Return the sorted columns (int64) of blocks j0..j1 (None: to the last)."""
        return column_union(self[j0:j1])


def column_union(columns: Sequence[NDArray[np.int64]]) -> NDArray[np.int64]:
    """Return the sorted union of disjoint column sets (a list of int arrays)."""
    return np.sort(np.concatenate(columns))


def block_columns(column_time_s: ArrayLike, n_blocks: int) -> List[NDArray[np.int64]]:
    """
    Cut the columns into n_blocks sets by firing time; a list of sorted int64 index arrays.

    column_time_s (C,) s. Block j holds the columns of ranks round(j C / n) .. round((j + 1)
    C / n) in firing order (ties in column order), so every block has C // n or C // n + 1
    columns and block j fires before block j + 1.
    """
    times = np.asarray(column_time_s, dtype=np.float64)
    order = np.argsort(times, kind='stable')
    cuts = np.linspace(0, times.size, int(n_blocks) + 1).round().astype(np.int64)
    return [np.sort(order[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]


def column_beams(beams: Beams, columns: ArrayLike) -> Beams:
    """
    Return the Beams of the given columns (sorted indices) of a grid, ring-major.

    The block's columns are numbered 0..len(columns) - 1 (``column`` indexes its column_time_s);
    the ring axes are the grid's.
    """
    cols = np.asarray(columns, dtype=np.int64)
    rings = beams.channels
    index = (np.arange(rings, dtype=np.int64)[:, None] * beams.columns + cols[None, :]).ravel()
    block = Beams(
        dir_sensor=beams.dir_sensor[index], azimuth_rad=beams.azimuth_rad[index],
        elevation_rad=beams.elevation_rad[index], ring=beams.ring[index],
        column=np.tile(np.arange(cols.size, dtype=np.int64), rings),
        column_time_s=beams.column_time_s[cols],
        column_azimuth_rad=beams.column_azimuth_rad[cols],
        ring_elevation_rad=beams.ring_elevation_rad, ring_time_offset_s=beams.ring_time_offset_s)
    for name in Beams.__dataclass_fields__:
        getattr(block, name).flags.writeable = False
    return block


def merge_columns(results: Sequence[Result], columns: Sequence[NDArray[np.int64]],
                  channels: int, timing: str = 'sum') -> Tuple[Result, NDArray[np.int64]]:
    """
    Merge the ScanResults of disjoint column sets of one sweep into that of their union.

    results[k] covers the sorted columns columns[k] (its beams ring-major over them, numbered
    from 0); returns (ScanResult over the sorted union, the union). Points are ordered by their
    beam in the union, each beam's in the order its result gave them. timing 'sum' adds the
    phase times (computed one after another), 'max' takes the slowest (side by side).
    """
    union = column_union(columns)
    width, rings = union.size, int(channels)
    if len(results) == 1:
        return results[0], union
    beam_parts, too_close, centre = [], np.zeros((rings, width), bool), np.empty((rings, width))
    for res, cols in zip(results, columns):
        place = np.searchsorted(union, cols)        # each column's place in the union
        w = cols.size
        beam_parts.append((res.beam // w) * width + place[res.beam % w])
        too_close[:, place] = np.asarray(res.too_close).reshape(rings, w)
        centre[:, place] = np.asarray(res.hit_range_m).reshape(rings, w)
    beam = np.concatenate(beam_parts)
    order = np.argsort(beam, kind='stable')         # each result's points are in beam order
    reduce = max if timing == 'max' else sum
    first = results[0]
    merged = replace(
        first, points=take_records(concat_records([r.points for r in results]), order),
        beam=beam[order], n_beams=rings * width, too_close=too_close.ravel(),
        hit_range_m=centre.ravel(), n_echoes=sum(r.n_echoes for r in results),
        timing_ms={key: reduce(r.timing_ms.get(key, 0.0) for r in results)
                   for key in first.timing_ms})
    return merged, union
