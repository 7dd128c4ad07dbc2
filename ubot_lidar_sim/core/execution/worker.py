"""
A LidarSimulator in child processes: sweeps compute beside the caller's Python threads.

One Python process has one GIL. A node that takes /tf at hundreds of Hz, or several sensor
nodes in one process (``python -m ubot_lidar_sim run``), stall the numpy work of a sweep with
their callbacks and are stalled by it in turn. ``ScanProcess`` keeps a copy of the world and the
config in ``workers`` child processes and computes column blocks there (blocks.py): the caller
looks the poses up, sends them with the weather and the scan index, and waits (without the GIL)
for the ScanResult. Column blocks are the one unit of parallel work, so a config gives the same
bytes in this process and on any number of children. ``uses_processes`` is the one rule that
says when a config asks for children.

While the children start (the first time, or after a failure) and the caller does not wait for
them (``wait_for_start`` false: a node keeps publishing), the pool computes the blocks handed
in itself, with the same bytes, and counts them in ``in_process_blocks``. Such a pool builds
its own simulator and loads its numba kernels while its first children start: a caller whose
children compute every sweep never loads them itself, and the first sweep it computes after a
failure would load them then (seconds on 2 busy cores), published that late after its stamp.

No fault of a child blocks the caller beyond a deadline (transport.py): a child that exits is
reported at once, one that does not answer in time (stopped, hung) is killed, and either way
the children are started again on the next call. The children are started with
multiprocessing's 'spawn' (a fork would copy the locks of the caller's DDS threads), ignore
SIGINT (Ctrl-C reaches the whole process group; the caller shuts them down) and exit quietly
when the caller closes its end or dies.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
import multiprocessing
from multiprocessing.connection import wait
import os
import time

import numpy as np
from numpy.typing import NDArray

from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config import LidarConfig
from ubot_lidar_sim.core.execution.blocks import scan_in_blocks
from ubot_lidar_sim.core.execution.child import serve
from ubot_lidar_sim.core.execution.failures import (ScanProcessError, ScanProcessExited,
                                                    ScanProcessHung, ScanProcessStarting)
from ubot_lidar_sim.core.execution.transport import (Channel, ChannelClosed, ChannelTimeout,
                                                     InheritedFd, payload_file, SharedResults)
from ubot_lidar_sim.core.physics.weather import Weather
from ubot_lidar_sim.core.poses import poses_at
from ubot_lidar_sim.core.raycast.actor_casting import PoseAt
from ubot_lidar_sim.core.sensors.column_blocks import BlockPlan
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator, ScanResult
from ubot_lidar_sim.core.sensors.point_layouts import concat_records
from ubot_lidar_sim.core.sensors.sweep import Sweep
from ubot_lidar_sim.core.world.materials import MaterialTable
from ubot_lidar_sim.core.world.world import World

START_TIMEOUT_S = 60.0      # importing open3d, reading the world and building the scene
SCAN_TIMEOUT_S = 60.0       # the first sweep of a config
SCAN_TIMEOUT_MIN_S = 1.0    # later sweeps: this, or 10 x the slowest of the last 20 if longer
SCAN_TIMEOUT_FACTOR = 10.0
# Clear air and rain reach the kernels of both weather paths (as core/sensors/warm_up.py does).
WARM_WEATHERS = (Weather(), Weather(rain_mm_h=5.0, visibility_m=2000.0))


def uses_processes(cfg: LidarConfig) -> bool:
    """Return True when a lidar config computes its sweeps in child processes."""
    return bool(cfg.compute_process) or cfg.compute_workers > 1


def compute_pool(cfg: LidarConfig, world: World, materials: MaterialTable,
                 wait_for_start: bool = True) -> ScanProcess | None:
    """Return the ScanProcess of cfg (compute_workers children) or None (uses_processes)."""
    if not uses_processes(cfg):
        return None
    return ScanProcess(cfg, world, materials, cfg.compute_workers, wait_for_start)


def sweep(sim: LidarSimulator, pool: ScanProcess | None, pose_at: PoseAt, one: Sweep
          ) -> ScanResult:
    """
    Return the ScanResult of Sweep one (sim.scan_sweep), computed by pool when given.

    pool: a ScanProcess of sim's config, or None to compute in this process; same bytes.
    """
    if pool is None:
        return sim.scan_sweep(pose_at, one)
    return pool.scan(poses_at(pose_at, sim.pose_times(one.stamp_s)), one)


class ScanProcess:
    """
    Compute the column blocks of ``LidarSimulator(cfg, world, materials)`` in child processes.

    ``scan(poses, sweep)`` takes the poses (C + 1, 4, 4) at
    ``LidarSimulator.pose_times(sweep.stamp_s)`` and returns the sweep's ScanResult;
    ``submit_blocks`` / ``collect_blocks`` keep one request in progress per child. A failed
    call raises a ScanProcessError subclass and the next call starts new children; with
    wait_for_start false the blocks handed in while they start are computed here (see the
    module). Not thread-safe: one caller thread at a time.
    """

    def __init__(self, cfg: LidarConfig, world: World, materials: MaterialTable,
                 workers: int = 1, wait_for_start: bool = True) -> None:
        self.workers = max(1, int(workers))
        self.wait_for_start = wait_for_start
        self._world, self._materials = world, materials
        self._ctx = multiprocessing.get_context('spawn')
        self._procs, self._chans, self._blocks = [], [], []
        self._starting = None          # (deadline, payload fd, children ready) while starting
        self._pending = {}             # child -> (t0, deadline) of its submitted blocks
        self._here = {}                # child -> ScanResult computed here while they start
        self._stale = set()            # children whose simulator predates set_config's cfg
        self._durations = deque(maxlen=20)
        self._request_t0 = None
        self._limit_s = START_TIMEOUT_S    # the deadline of what is in progress, s
        self.restarts = 0
        self.last_failure = ''
        self.in_process_blocks = 0     # blocks computed here while the children started
        self.restarting = False        # the last block handed in was computed here
        self._use_config(cfg)
        self._spawn()
        if not wait_for_start:
            self._warm_here()           # while the children start (see the module)
        self._await_start(True)

    def _use_config(self, cfg):
        self.cfg = cfg
        self._sim = None               # this process's simulator, built when first needed
        self.block_columns = BlockPlan.of(build_beams(cfg).column_time_s, cfg.n_column_blocks)

    def _warm_here(self) -> None:
        """Build this process's simulator and run its first column block once per weather."""
        sim = self._sim = LidarSimulator(self.cfg, self._world, self._materials)
        times = sim.block_pose_times(0.0, 0, 1) if sim.blocks else sim.pose_times(0.0)
        poses = np.broadcast_to(np.eye(4), (len(times), 4, 4)).copy()
        for weather in WARM_WEATHERS:
            sim.scan_blocks(poses, Sweep(0.0, weather, 0), 0, 1 if sim.blocks else None)

    @property
    def pid(self) -> int | None:
        """Return the first child's process id (None when not running)."""
        return self._procs[0].pid if self._procs else None

    @property
    def pids(self) -> list[int | None]:
        """Return the process ids of the running children."""
        return [proc.pid for proc in self._procs]

    def waiting(self) -> tuple[float, float] | None:
        """Return (s waited, s allowed) of the request in progress, None when there is none."""
        t0, limit = self._request_t0, self._limit_s
        return None if t0 is None else (time.monotonic() - t0, limit)

    def scan_timeout_s(self) -> float:
        """Return the deadline of the next sweep, s (see SCAN_TIMEOUT_*)."""
        durations = list(self._durations)
        if not durations:
            return SCAN_TIMEOUT_S
        return max(SCAN_TIMEOUT_MIN_S, SCAN_TIMEOUT_FACTOR * max(durations))

    def _spawn(self):
        payload = payload_file((self.cfg, self._world, self._materials))
        n_bytes = SharedResults.size_for(self.cfg)
        try:
            for part in range(self.workers):
                try:
                    block = SharedResults(n_bytes)
                except OSError:     # no room for the block: this child's results take the socket
                    block = None
                chan, child = Channel.pair()
                proc = self._ctx.Process(target=serve, args=(
                    child, InheritedFd(payload),
                    None if block is None else (InheritedFd(block.fd), n_bytes)),
                    name=f'ubot_lidar_sim scan {part}', daemon=True)
                try:
                    proc.start()
                finally:
                    child.close()
                    if block is not None:
                        block.release_fd()
                self._procs.append(proc)
                self._chans.append(chan)
                self._blocks.append(block)
        except BaseException:
            os.close(payload)
            self.close(kill=True)
            raise
        self._starting = (time.monotonic() + START_TIMEOUT_S, payload, set())
        self._limit_s = START_TIMEOUT_S

    def _await_start(self, block):
        """Collect the children's 'ready'; returns when all are, else raises (see the class)."""
        deadline, payload, ready = self._starting
        while len(ready) < self.workers:
            pending = {id(c): k for k, c in enumerate(self._chans) if k not in ready}
            left = deadline - time.monotonic()
            got = wait([self._chans[k] for k in pending.values()], max(0.0, left) if block
                       else 0.0)
            if not got:
                if time.monotonic() >= deadline:
                    self._fail('timeout', None, 'start', next(iter(pending.values())))
                raise ScanProcessStarting(f'compute processes starting (restart '
                                          f'{self.restarts}, after: {self.last_failure})')
            for chan in got:
                part = pending[id(chan)]
                kind, value = self._recv(chan, deadline, 'start', part)
                if kind != 'ready':
                    self._fail(kind, value, 'start', part)
                ready.add(part)
        os.close(payload)
        self._starting = None

    def _recv(self, chan, deadline, what, part):
        try:
            return chan.recv(deadline)
        except ChannelClosed:
            self._fail('exited', None, what, part)
        except ChannelTimeout:
            self._fail('timeout', None, what, part)

    def _send(self, part, message, deadline, what):
        try:
            self._chans[part].send(message, deadline)
        except ChannelClosed:
            self._fail('exited', None, what, part)
        except ChannelTimeout:
            self._fail('timeout', None, what, part)

    def _fail(self, kind, value, what, part):
        """
        Raise the ScanProcessError of a failed request, stopping the children first.

        A child that reported an error for a request keeps serving (the children never wait
        for each other); one that exited or did not answer stops them all, and the next call
        starts new ones.
        """
        if kind == 'error' and what != 'start':
            raise ScanProcessError(value)
        proc = self._procs[part] if part < len(self._procs) else None
        self.close(kill=kind != 'error')
        self._durations.clear()    # the next sweep may be a cold one: its full deadline
        if kind == 'error':
            raise ScanProcessError(value)
        pid = proc.pid if proc is not None else None
        if kind == 'timeout':
            text = (f'compute process pid {pid} did not answer within {self._limit_s:.1f} s '
                    f'during {what}: killed')
            error = ScanProcessHung
        else:
            code = proc.exitcode if proc is not None else None
            text = f'compute process pid {pid} exited during {what}' + (
                f' (exit code {code})' if code is not None else '')
            error = ScanProcessExited
        self.restarts += 1
        self.last_failure = text
        raise error(text)

    def _reply(self, part, deadline, what):
        """Return the value of child part's answer to its request in progress."""
        kind, value = self._recv(self._chans[part], deadline, what, part)
        if kind != 'ok':
            self._fail(kind, value, what, part)
        return value

    def _ensure_started(self):
        """Start the children if needed; ScanProcessStarting while they start (no waiting)."""
        if not self._procs:
            self._spawn()
        if self._starting is not None:
            self._await_start(self.wait_for_start)

    def set_config(self, cfg: LidarConfig) -> None:
        """
        Take a new config (checked by the caller); returns at once.

        Each child rebuilds its simulator before its next blocks (_reconfigure): a burst of
        parameter sets costs one rebuild per child per sweep, not a round trip per set, so a
        node answers its sets while its children are busy.
        """
        self._use_config(cfg)
        self._durations.clear()
        if self._procs and self._starting is None:
            self._stale = set(range(self.workers))
        elif self._procs:
            self.close(kill=True)      # still starting with the old config: start again

    def _reconfigure(self, part):
        """Send child part the config of the last set_config; wait for its rebuild."""
        self._request_t0, self._limit_s = time.monotonic(), SCAN_TIMEOUT_S
        deadline = self._request_t0 + SCAN_TIMEOUT_S
        try:
            self._send(part, ('config', self.cfg), deadline, 'reconfiguration')
            self._reply(part, deadline, 'reconfiguration')
        finally:
            self._request_t0 = None
        self._stale.discard(part)

    def scan(self, poses: NDArray[np.float64], sweep: Sweep) -> ScanResult:
        """Return the ScanResult of a Sweep computed in the children; ScanProcessError if not."""
        return scan_in_blocks(self, poses, sweep)

    def submit_blocks(self, poses: NDArray[np.float64], sweep: Sweep, j0: int, j1: int,
                      part: int | None = None) -> None:
        """
        Send column blocks j0..j1 of a Sweep to child part (None: j0 % workers); returns at once.

        LidarSimulator.scan_blocks there; poses at block_pose_times(sweep.stamp_s, j0, j1). One
        request per child at a time: collect_blocks(j0, part) takes the result. While the
        children start (wait_for_start false) the blocks are computed here, now. The sweep's
        actor_poses go with the request: {actor name: picklable pose_at} (poses.SampledPath).
        """
        part = j0 % self.workers if part is None else part
        if part in self._pending or part in self._here:
            raise ScanProcessError(f'compute process {part} still has blocks in progress')
        try:
            self._ensure_started()
        except ScanProcessStarting:
            if self._sim is None:
                self._sim = LidarSimulator(self.cfg, self._world, self._materials)
            self._here[part] = self._sim.scan_blocks(poses, sweep, j0, j1)
            self.in_process_blocks += 1
            self.restarting = True
            return
        self.restarting = False
        if part in self._stale:
            self._reconfigure(part)
        t0 = time.monotonic()
        deadline = t0 + self.scan_timeout_s()
        self._send(part, ('blocks', self._poses(part, poses), sweep, (int(j0), int(j1))),
                   deadline, 'a scan')
        self._pending[part] = (t0, deadline)

    def collect_blocks(self, j0: int, part: int | None = None) -> ScanResult:
        """Wait for the ScanResult of the blocks submitted as j0 (ScanProcessError if failed)."""
        part = j0 % self.workers if part is None else part
        if part in self._here:
            return self._here.pop(part)
        if part not in self._pending:   # the children were restarted after a failure
            raise ScanProcessError(f'blocks {j0}.. were lost with their compute process')
        t0, deadline = self._pending.pop(part)
        self._request_t0, self._limit_s = t0, deadline - t0
        try:
            how, value = self._reply(part, deadline, 'a scan')[0]
        finally:
            self._request_t0 = None
        self._durations.append(time.monotonic() - t0)
        result = self._blocks[part].load(value) if how == 'shared' else value
        # Copies: the shared block is written again by the child's next request.
        return replace(result, points=concat_records([result.points]), beam=result.beam.copy(),
                       too_close=result.too_close.copy(),
                       hit_range_m=result.hit_range_m.copy())

    def _poses(self, part, poses):
        """Return the poses' message to a part: ('shared', shape) in its block, or inline."""
        block = self._blocks[part] if part < len(self._blocks) else None
        shape = block.store_poses(poses) if block is not None else None
        return ('inline', poses) if shape is None else ('shared', shape)

    def close(self, timeout_s: float = 2.0, kill: bool = False) -> None:
        """Stop the children (asks, then kills after timeout_s; kill: at once); safe twice."""
        procs, chans, blocks = self._procs, self._chans, self._blocks
        self._procs, self._chans, self._blocks = [], [], []
        self._pending.clear()
        self._stale.clear()            # new children start from self.cfg
        if self._starting is not None:
            os.close(self._starting[1])
            self._starting = None
        deadline = time.monotonic() + (0.0 if kill else timeout_s)
        for chan in chans:
            if not kill:
                try:
                    chan.send(('stop',), min(deadline, time.monotonic() + 0.1))
                except OSError:
                    pass
            chan.close()
        for proc in procs:
            proc.join(max(0.0, deadline - time.monotonic()))
            if proc.is_alive():
                proc.kill()
                proc.join(timeout_s)
        for block in blocks:
            if block is not None:
                block.close()
