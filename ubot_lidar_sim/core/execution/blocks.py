"""
The column blocks of a sweep on a ScanProcess: handed in as they fire, or a whole sweep at once.

Column blocks (column_blocks.py) are the one unit of parallel work: nothing crosses from one
block to another, so any set of blocks can be computed anywhere, in any order, and the merged
result is the sweep's bytes. ``BlockPipeline`` hands a block in as soon as its poses are known:
block j goes to child j % workers without waiting for it, so that two blocks compute side by
side while the sweep fires (a child has one request in progress: handing in its next one first
takes the result of its last). ``scan_in_blocks`` computes a whole sweep on the children, a run
of blocks each. Without compute processes (pool None) the blocks are computed in this process.
"""

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.failures import ScanProcessError
from ubot_lidar_sim.core.sensors.column_blocks import BlockPlan, merge_columns
from ubot_lidar_sim.core.sensors.lidar import ScanResult
from ubot_lidar_sim.core.sensors.sweep import Sweep


class BlockPool(Protocol):
    """What the blocks of a sweep need of their compute processes (worker.ScanProcess)."""

    cfg: LidarConfig
    workers: int
    block_columns: BlockPlan

    def submit_blocks(self, poses: NDArray[np.float64], sweep: Sweep, j0: int, j1: int,
                      part: int | None = None) -> None:
        """Send blocks j0..j1 of sweep to child part; returns at once."""

    def collect_blocks(self, j0: int, part: int | None = None) -> ScanResult:
        """Wait for the ScanResult of the blocks submitted as j0."""


def block_runs(n_blocks: int, workers: int) -> list[tuple[int, int]]:
    """Return [(j0, j1)]: n_blocks blocks in min(workers, n_blocks) runs of about equal count."""
    runs = max(1, min(int(workers), int(n_blocks)))
    cuts = np.linspace(0, int(n_blocks), runs + 1).round().astype(np.int64)
    return [(int(a), int(b)) for a, b in zip(cuts[:-1], cuts[1:])]


def scan_in_blocks(pool: BlockPool, poses: NDArray[np.float64], sweep: Sweep) -> ScanResult:
    """
    Return the ScanResult of a Sweep of pool.cfg computed by pool (a ScanProcess).

    poses (C + 1, 4, 4) at LidarSimulator.pose_times(sweep.stamp_s). Child k computes the k-th run
    of about equal blocks (block_runs); the timings are the slowest child's.
    """
    columns = pool.block_columns
    if len(columns) == 1:
        pool.submit_blocks(poses, sweep, 0, 1, 0)
        return pool.collect_blocks(0, 0)
    n_columns = sum(cols.size for cols in columns)
    if np.shape(poses) != (n_columns + 1, 4, 4):
        raise ValueError(f'poses of shape {np.shape(poses)}: expected ({n_columns + 1}, 4, 4), '
                         'the pose at the stamp and at each column')
    runs = block_runs(len(columns), pool.workers)
    spans = [columns.union(j0, j1) for j0, j1 in runs]
    for part, ((j0, j1), cols) in enumerate(zip(runs, spans)):
        pool.submit_blocks(poses[np.concatenate([[0], 1 + cols])], sweep, j0, j1, part)
    results = [pool.collect_blocks(j0, part) for part, (j0, _) in enumerate(runs)]
    return merge_columns(results, spans, pool.cfg.channels, timing='max')[0]


class BlockPipeline:
    """Blocks of one sweep of ``sim`` (a LidarSimulator) on ``pool`` (a ScanProcess or None)."""

    def __init__(self, sim, pool):
        self._sim, self._pool = sim, pool
        self._done = {}         # block -> ScanResult
        self._out = {}          # child -> block in progress there

    def submit(self, j: int, poses: NDArray[np.float64], sweep: Sweep) -> None:
        """
        Hand in block j of a Sweep, its poses at block_pose_times; ScanProcessError if failed.

        The sweep's actor_poses picklable (poses.SampledPath) for the children.
        """
        if self._pool is None:
            self._done[j] = self._sim.scan_blocks(poses, sweep, j, j + 1)
            return
        part = j % self._pool.workers
        if part in self._out:
            self._collect(part)
        self._pool.submit_blocks(poses, sweep, j, j + 1, part)
        self._out[part] = j

    def _collect(self, part):
        j = self._out.pop(part)
        self._done[j] = self._pool.collect_blocks(j, part)

    def results(self) -> list[ScanResult]:
        """Return the ScanResults of the blocks handed in, in block order (waits for them)."""
        for part in list(self._out):
            self._collect(part)
        return [self._done[j] for j in sorted(self._done)]

    def abandon(self) -> None:
        """Take and drop the results still in progress (a sweep given up); never raises."""
        for part in list(self._out):
            try:
                self._collect(part)
            except ScanProcessError:
                self._out.pop(part, None)
