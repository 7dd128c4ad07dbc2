"""
The column blocks of a sweep on the compute processes: handed in as they fire, or all at once.

A block is handed in as soon as its poses are known. With compute processes, block j goes to
child j % workers without waiting for it, so that two blocks compute side by side while the
sweep fires (a child has one block in progress: handing in its next one first takes the
result of its last). Without them, or while they start, a block is computed here at once. The
results are the blocks' ScanResults in block order, for column_blocks.merge_columns.
``scan_in_blocks`` computes a whole sweep of column blocks on the children, a run of blocks
each: nothing crosses from one block to another, so no child waits for another.
"""

import numpy as np

from ubot_lidar_sim.core.execution.failures import ScanProcessError, ScanProcessStarting
from ubot_lidar_sim.core.execution.split import split_beams
from ubot_lidar_sim.core.sensors.column_blocks import block_columns, merge_columns
from ubot_lidar_sim.core.sensors.scan_pattern import build_beams


def scan_in_blocks(pool, poses, stamp_s, weather, scan_index):
    """
    Return the ScanResult of one sweep of pool.cfg (column_blocks > 1) computed by pool.

    pool a ScanProcess; poses (C + 1, 4, 4) at LidarSimulator.pose_times(stamp_s). Child k
    computes the k-th run of about equal blocks; the timings are the slowest child's.
    """
    cfg = pool.cfg
    columns = block_columns(build_beams(cfg).column_time_s, cfg.column_blocks)
    bounds = split_beams(len(columns), pool.workers)
    runs = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]
    spans = [np.sort(np.concatenate(columns[j0:j1])) for j0, j1 in runs]
    for part, ((j0, j1), cols) in enumerate(zip(runs, spans)):
        pool.submit_blocks(poses[np.concatenate([[0], 1 + cols])], stamp_s, weather,
                           scan_index, j0, j1, part)
    results = [pool.collect_blocks(j0, part) for part, (j0, _) in enumerate(runs)]
    return merge_columns(results, spans, cfg.channels, timing='max')[0]


class BlockPipeline:
    """Blocks of one sweep of ``sim`` (a LidarSimulator) on ``pool`` (a ScanProcess or None)."""

    def __init__(self, sim, pool):
        self._sim, self._pool = sim, pool
        self._done = {}         # block -> ScanResult
        self._out = {}          # child -> block in progress there
        self.here = 0           # blocks computed in this process while the children start

    def submit(self, j, poses, stamp_s, weather, scan_index):
        """Hand in block j, its poses at block_pose_times; ScanProcessError if a child failed."""
        if self._pool is not None:
            part = j % self._pool.workers
            if part in self._out:
                self._collect(part)
            try:
                self._pool.submit_blocks(poses, stamp_s, weather, scan_index, j, j + 1)
                self._out[part] = j
                return
            except ScanProcessStarting:
                self.here += 1
        self._done[j] = self._sim.scan_blocks(poses, stamp_s, weather, scan_index, j, j + 1)

    def _collect(self, part):
        j = self._out.pop(part)
        self._done[j] = self._pool.collect_blocks(j)

    def results(self):
        """Return the ScanResults of the blocks handed in, in block order (waits for them)."""
        for part in list(self._out):
            self._collect(part)
        return [self._done[j] for j in sorted(self._done)]

    def abandon(self):
        """Take and drop the results still in progress (a sweep given up); never raises."""
        for part in list(self._out):
            try:
                self._collect(part)
            except ScanProcessError:
                self._out.pop(part, None)
