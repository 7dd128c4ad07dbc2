"""
A LidarSimulator in child processes: sweeps compute beside the caller's Python threads.

One Python process has one GIL. A node that takes /tf at hundreds of Hz, or several sensor
nodes in one process (``python -m ubot_lidar_sim run``), stall the numpy work of a sweep with
their callbacks and are stalled by it in turn. ``ScanProcess`` keeps a copy of the world and the
config in child processes and runs the sweep there: the caller looks the poses up, sends them
(C + 1, 4, 4) with the weather and the scan index, and waits (without the GIL) for the
ScanResult.

With ``workers`` > 1 each child computes one contiguous beam range of the sweep
(``LidarSimulator.scan_part``) and the parent routes the few values that cross the part
boundaries between them (parts.py), so a sweep uses every core and still gives the bytes of
``LidarSimulator.scan``. The split follows the cost of the last sweep's parts. A config with
``column_blocks`` > 1 is split by blocks instead (blocks.py: nothing crosses them), and
``submit_blocks`` / ``collect_blocks`` let a caller keep one block in progress per child.

No fault of a child blocks the caller beyond a deadline (transport.py): a child that exits is
reported at once, one that does not answer in time (stopped, hung) is killed, and either way
the children are started again on the next call. The children are started with
multiprocessing's 'spawn' (a fork would copy the locks of the caller's DDS threads), ignore
SIGINT (Ctrl-C reaches the whole process group; the caller shuts them down) and exit quietly
when the caller closes its end or dies.
"""

from collections import deque
from dataclasses import replace
import multiprocessing
from multiprocessing.connection import wait
import os
import time

import numpy as np

from ubot_lidar_sim.core.execution.blocks import scan_in_blocks
from ubot_lidar_sim.core.execution.child import serve
from ubot_lidar_sim.core.execution.failures import (ScanProcessError, ScanProcessExited,
                                                    ScanProcessHung, ScanProcessStarting)
from ubot_lidar_sim.core.execution.split import merge_parts, split_beams
from ubot_lidar_sim.core.execution.transport import (Channel, ChannelClosed, ChannelTimeout,
                                                     InheritedFd, payload_file, SharedResults)
from ubot_lidar_sim.core.poses import poses_at
from ubot_lidar_sim.output.layouts import concat_records

START_TIMEOUT_S = 60.0      # importing open3d, reading the world and building the scene
SCAN_TIMEOUT_S = 60.0       # the first sweep of a config
SCAN_TIMEOUT_MIN_S = 1.0    # later sweeps: this, or 10 x the slowest of the last 20 if longer
SCAN_TIMEOUT_FACTOR = 10.0


def sweep(sim, pool, pose_at, stamp_s, weather, scan_index):
    """
    Return sim.scan(pose_at, stamp_s, weather, scan_index), computed by pool when given.

    pool: a ScanProcess of sim's config, or None to compute in this process; same bytes.
    """
    if pool is None:
        return sim.scan(pose_at, stamp_s, weather, scan_index)
    return pool.scan(poses_at(pose_at, sim.pose_times(stamp_s)), stamp_s, weather, scan_index)


class ScanProcess:
    """
    Run ``LidarSimulator(cfg, world, materials)`` in ``workers`` child processes.

    ``scan(poses, stamp_s, weather, scan_index)`` takes the poses (C + 1, 4, 4) at
    ``LidarSimulator.pose_times(stamp_s)`` and returns the ScanResult. A failed call raises a
    ScanProcessError subclass and the next call starts new children; with wait_for_start
    false it does not wait for them but raises ScanProcessStarting until they are ready (a
    node keeps ticking meanwhile). Not thread-safe: one caller thread at a time.
    """

    def __init__(self, cfg, world, materials, workers=1, wait_for_start=True):
        self.cfg = cfg
        self.workers = max(1, int(workers))
        self.wait_for_start = wait_for_start
        self._world, self._materials = world, materials
        self._ctx = multiprocessing.get_context('spawn')
        self._procs, self._chans, self._blocks = [], [], []
        self._starting = None          # (deadline, payload fd, parts ready) while starting
        self._bounds = None            # the beam split, (workers + 1,)
        self._pending = {}             # child -> (t0, deadline) of its submitted blocks
        self._durations = deque(maxlen=20)
        self._request_t0 = None
        self._limit_s = START_TIMEOUT_S    # the deadline of what is in progress, s
        self.restarts = 0
        self.last_failure = ''
        self._spawn()
        self._await_start(True)

    @property
    def pid(self):
        """Return the first child's process id (None when not running)."""
        return self._procs[0].pid if self._procs else None

    @property
    def pids(self):
        """Return the process ids of the running children."""
        return [proc.pid for proc in self._procs]

    def waiting(self):
        """Return (s waited, s allowed) of the request in progress, None when there is none."""
        t0, limit = self._request_t0, self._limit_s
        return None if t0 is None else (time.monotonic() - t0, limit)

    def scan_timeout_s(self):
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
                    child, InheritedFd(payload), part, self.workers,
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

        A single child that reported an error keeps serving; with parts the others may wait
        for a value the failed part never sends, so they are all restarted on the next call.
        """
        if kind == 'error' and self.workers == 1 and what != 'start':
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

    def _replies(self, deadline, what, sent):
        """
        Route the parts' messages until every child in sent answered; returns their values.

        'send' forwards a carried value to its part.
        """
        values = [None] * self.workers
        waiting = {k: chan for k, chan in enumerate(self._chans) if k in sent}
        index = {id(chan): part for part, chan in waiting.items()}
        while waiting:
            ready = wait(list(waiting.values()), max(0.0, deadline - time.monotonic()))
            if not ready:
                self._fail('timeout', None, what, next(iter(waiting)))
            for chan in ready:
                part = index[id(chan)]
                message = self._recv(chan, deadline, what, part)
                kind = message[0]
                if kind == 'send':
                    _, name, target, value = message
                    self._send(target, ('token', name, value), deadline, what)
                elif kind == 'ok':
                    values[part] = message[1]
                    del waiting[part]
                else:
                    self._fail(kind, message[1], what, part)
        return values

    def _ensure_started(self):
        if not self._procs:
            self._spawn()
        if self._starting is not None:
            self._await_start(self.wait_for_start)

    def _request(self, messages, what, timeout_s):
        self._ensure_started()
        self._request_t0, self._limit_s = time.monotonic(), timeout_s
        deadline = self._request_t0 + timeout_s
        sent = [k for k in range(self.workers) if messages[k] is not None]
        try:
            for part in sent:
                self._send(part, messages[part], deadline, what)
            return self._replies(deadline, what, sent)
        finally:
            self._request_t0 = None

    def set_config(self, cfg):
        """Rebuild the children's simulators with a new config (checked by the caller)."""
        self.cfg = cfg
        self._bounds = None
        self._durations.clear()
        if self._procs and self._starting is None:
            self._request([('config', cfg)] * self.workers, 'reconfiguration', SCAN_TIMEOUT_S)
        elif self._procs:
            self.close(kill=True)      # still starting with the old config: start again

    def scan(self, poses, stamp_s, weather, scan_index):
        """Return the ScanResult of one sweep computed in the children; ScanProcessError if not."""
        if self.cfg.column_blocks > 1:     # a run of blocks per child (none crosses)
            return scan_in_blocks(self, poses, stamp_s, weather, scan_index)
        n_beams = self.cfg.channels * self.cfg.horizontal_samples
        bounds = self._bounds if self._bounds is not None else split_beams(n_beams, self.workers)
        parts = len(bounds) - 1
        if parts != self.workers:      # fewer beams than workers: the rest get empty ranges
            bounds = np.concatenate([bounds, np.full(self.workers - parts, bounds[-1])])
        messages = [('scan', self._poses(k, poses), float(stamp_s), weather, int(scan_index),
                     (int(bounds[k]), int(bounds[k + 1]))) for k in range(self.workers)]
        t0 = time.monotonic()
        replies = self._request(messages, 'a scan', self.scan_timeout_s())
        self._durations.append(time.monotonic() - t0)
        results = [self._blocks[k].load(value) if how == 'shared' else value
                   for k, ((how, value), _) in enumerate(replies)]
        # The next split: equal compute time per part, each part's cost spread evenly over its
        # beams, half-way from the present split (timings are noisy).
        if self.workers > 1 and n_beams >= self.workers:
            sizes = np.diff(bounds)
            density = [busy / max(size, 1) for (_, busy), size in zip(replies, sizes)]
            target = split_beams(n_beams, self.workers, np.repeat(density, sizes))
            self._bounds = np.round(0.5 * (bounds + target)).astype(np.int64)
        # Copies: the blocks are written again by the next sweep.
        kept = [r for r in results if r.n_beams > 0] or results[:1]
        return _owned(merge_parts(kept), len(kept) > 1)

    def submit_blocks(self, poses, stamp_s, weather, scan_index, j0, j1, part=None):
        """
        Send column blocks j0..j1 to child part (None: j0 % workers) and return at once.

        LidarSimulator.scan_blocks there; poses at block_pose_times(stamp_s, j0, j1). One
        request per child at a time: collect_blocks(j0, part) takes the result.
        """
        part = j0 % self.workers if part is None else part
        if part in self._pending:
            raise ScanProcessError(f'compute process {part} still has blocks in progress')
        self._ensure_started()
        t0 = time.monotonic()
        deadline = t0 + self.scan_timeout_s()
        self._send(part, ('blocks', self._poses(part, poses), float(stamp_s), weather,
                          int(scan_index), (int(j0), int(j1))), deadline, 'a scan')
        self._pending[part] = (t0, deadline)

    def collect_blocks(self, j0, part=None):
        """Wait for the ScanResult of the blocks submitted as j0 (ScanProcessError if failed)."""
        part = j0 % self.workers if part is None else part
        if part not in self._pending:   # the children were restarted after a failure
            raise ScanProcessError(f'blocks {j0}.. were lost with their compute process')
        t0, deadline = self._pending.pop(part)
        self._request_t0, self._limit_s = t0, deadline - t0
        try:
            (how, value), _ = self._replies(deadline, 'a scan', [part])[part]
        finally:
            self._request_t0 = None
        self._durations.append(time.monotonic() - t0)
        return _owned(self._blocks[part].load(value) if how == 'shared' else value, False)

    def _poses(self, part, poses):
        """Return the poses' message to a part: ('shared', shape) in its block, or inline."""
        block = self._blocks[part] if part < len(self._blocks) else None
        shape = block.store_poses(poses) if block is not None else None
        return ('inline', poses) if shape is None else ('shared', shape)

    def close(self, timeout_s=2.0, kill=False):
        """Stop the children (asks, then kills after timeout_s; kill: at once); safe twice."""
        procs, chans, blocks = self._procs, self._chans, self._blocks
        self._procs, self._chans, self._blocks = [], [], []
        self._pending.clear()
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


def _owned(result, merged):
    """Return result with arrays of its own (merge_parts of several parts already copied)."""
    if merged:
        return result
    return replace(result, points=concat_records([result.points]), beam=result.beam.copy(),
                   too_close=result.too_close.copy(), hit_range_m=result.hit_range_m.copy())
