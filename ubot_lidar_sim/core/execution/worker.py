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
``LidarSimulator.scan``. The split follows the cost of the last sweep's parts.

The children are started with multiprocessing's 'spawn' (a fork would copy the locks of the
caller's DDS threads), ignore SIGINT (Ctrl-C reaches the whole process group; the caller shuts
them down) and exit when the caller closes the pipe or dies.
"""

from dataclasses import replace
import mmap
import multiprocessing
from multiprocessing.connection import wait
import os
import signal
import tempfile
import time

import numpy as np

from ubot_lidar_sim.core.errors import ScanError
from ubot_lidar_sim.core.execution.split import merge_parts, split_beams
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator, ScanResult
from ubot_lidar_sim.output.layouts import FULL_DTYPE

START_TIMEOUT_S = 60.0      # importing open3d and building the scene in the child
SCAN_TIMEOUT_S = 60.0       # one sweep; beyond it the children are taken as hung and killed


class ScanProcessError(ScanError):
    """The compute process failed (exited, hung or refused to start)."""


class _SharedResults:
    """
    A file-backed shared memory block through which a child hands its ScanResult arrays over.

    Pickling a sweep's points through the pipe costs a copy on each side and one context switch
    per socket buffer (tens of ms for the 5 MB of an OS1-128 sweep); here the child writes the
    arrays once and sends their lengths. The parent creates the file (in /dev/shm when there
    is one) and unlinks it as soon as the child has mapped it, so nothing is left behind when
    either side dies. The space is allocated up front: a full tmpfs then fails here with
    OSError (and the results take the pipe) instead of killing the child with SIGBUS on a write.
    A result that does not fit goes through the pipe as well.
    """

    def __init__(self, n_bytes, path=None):
        if path is None:
            folder = '/dev/shm' if os.path.isdir('/dev/shm') else tempfile.gettempdir()
            fd, path = tempfile.mkstemp(prefix='ubot_lidar_sim_', dir=folder)
            try:
                os.posix_fallocate(fd, 0, n_bytes)
            except OSError:
                os.close(fd)
                os.unlink(path)
                raise
        else:
            fd = os.open(path, os.O_RDWR)
        try:
            self.map = mmap.mmap(fd, n_bytes)
        finally:
            os.close(fd)
        self.path, self.n_bytes = path, n_bytes

    @staticmethod
    def size_for(cfg):
        """Return the bytes for the largest result of cfg: 3 returns per beam, every beam."""
        n = cfg.channels * cfg.horizontal_samples
        return max(n * (3 * (FULL_DTYPE.itemsize + 8) + 8 + 1) + 64, 4096)

    def unlink(self):
        """Remove the file (the mappings stay valid)."""
        try:
            os.unlink(self.path)
        except OSError:
            pass

    def store(self, result):
        """Write result's arrays; returns the message describing them (None: too large)."""
        arrays = (result.points, result.beam, result.hit_range_m, result.too_close)
        if sum(a.nbytes for a in arrays) > self.n_bytes:
            return None
        offset = 0
        for a in arrays:
            np.frombuffer(self.map, a.dtype, a.size, offset)[...] = a
            offset += -(-a.nbytes // 8) * 8
        return (len(result.points), len(result.beam), result.n_beams, result.stamp_s,
                result.sensor_pose, result.n_echoes, result.timing_ms)

    def load(self, message):
        """Return the ScanResult that store wrote (views of the block: copy before reuse)."""
        n_points, n_beam, n_beams, stamp_s, pose, n_echoes, timing = message
        views, offset = [], 0
        for dtype, size in ((FULL_DTYPE, n_points), (np.int64, n_beam),
                            (np.float64, n_beams), (np.bool_, n_beams)):
            view = np.frombuffer(self.map, dtype, size, offset)
            views.append(view)
            offset += -(-view.nbytes // 8) * 8
        return ScanResult(points=views[0], beam=views[1], stamp_s=stamp_s, sensor_pose=pose,
                          n_beams=n_beams, too_close=views[3], hit_range_m=views[2],
                          n_echoes=n_echoes, timing_ms=timing)

    def close(self):
        """Unmap the block."""
        try:
            self.map.close()
        except (BufferError, ValueError):
            pass        # a view still exported: the mapping goes with the last one


class _PipePeer:
    """The parts.py peer of one part in a child: values go through the parent's router."""

    def __init__(self, conn, part, parts):
        self.part, self.parts = part, parts
        self._conn, self._held = conn, {}
        self.waited_s = 0.0

    def receive(self, name):
        """Block until the value named name arrives (values of later steps are kept)."""
        t0 = time.perf_counter()
        while name not in self._held:
            _, key, value = self._conn.recv()
            self._held[key] = value
        self.waited_s += time.perf_counter() - t0
        return self._held.pop(name)

    def send(self, name, part, value):
        """Send value to the part with index part."""
        self._conn.send(('send', name, part, value))

    def minmax(self, lo, hi):
        """Return the minimum of lo and the maximum of hi over every part."""
        if self.parts == 1:
            return lo, hi
        self._conn.send(('minmax', lo, hi))
        return self.receive('minmax')


def _serve(conn, cfg, world, materials, part=0, parts=1, shared=None):
    """
    Child main loop: build the simulator, then answer 'scan' and 'config' requests.

    shared (path, bytes): the _SharedResults block the results go through.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        block = _SharedResults(shared[1], shared[0]) if shared is not None else None
        sim = LidarSimulator(cfg, world, materials)
    except Exception as exc:  # reported to the caller, which raises it
        conn.send(('error', f'{type(exc).__name__}: {exc}'))
        return
    conn.send(('ready', None))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return          # the caller closed the pipe or died
        kind = request[0]
        if kind == 'stop':
            return
        try:
            if kind == 'config':
                sim = LidarSimulator(request[1], world, materials)
                reply = ('ok', None)
            else:
                _, poses, stamp_s, weather, scan_index, beam_range = request
                peer = _PipePeer(conn, part, parts)
                t0 = time.perf_counter()
                result = sim.scan_part(poses, stamp_s, weather, scan_index, beam_range, peer)
                busy_s = time.perf_counter() - t0 - peer.waited_s
                stored = block.store(result) if block is not None else None
                reply = ('ok', (('inline', result) if stored is None else ('shared', stored),
                                busy_s))
        except Exception as exc:  # a bad scan must not end the child: report it
            reply = ('error', f'{type(exc).__name__}: {exc}')
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


def sweep(sim, pool, pose_at, stamp_s, weather, scan_index):
    """
    Return sim.scan(pose_at, stamp_s, weather, scan_index), computed by pool when given.

    pool: a ScanProcess of sim's config, or None to compute in this process; same bytes.
    """
    if pool is None:
        return sim.scan(pose_at, stamp_s, weather, scan_index)
    return pool.scan(pose_at(sim.pose_times(stamp_s)), stamp_s, weather, scan_index)


class ScanProcess:
    """
    Run ``LidarSimulator(cfg, world, materials)`` in ``workers`` child processes.

    ``scan(poses, stamp_s, weather, scan_index)`` takes the poses (C + 1, 4, 4) at
    ``LidarSimulator.pose_times(stamp_s)`` and returns the ScanResult. Children that died are
    restarted on the next call. Not thread-safe: one caller thread at a time.
    """

    def __init__(self, cfg, world, materials, workers=1):
        self.cfg = cfg
        self.workers = max(1, int(workers))
        self._world, self._materials = world, materials
        self._ctx = multiprocessing.get_context('spawn')
        self._procs, self._conns, self._blocks = [], [], []
        self._bounds = None            # the beam split, (workers + 1,)
        self._start()

    @property
    def pid(self):
        """Return the first child's process id (None when not running)."""
        return self._procs[0].pid if self._procs else None

    @property
    def pids(self):
        """Return the process ids of the running children."""
        return [proc.pid for proc in self._procs]

    def _start(self):
        n_bytes = _SharedResults.size_for(self.cfg)
        for part in range(self.workers):
            parent, child = self._ctx.Pipe()
            try:
                block = _SharedResults(n_bytes)
            except OSError:     # no room for the block: this child's results take the pipe
                block = None
            self._blocks.append(block)
            proc = self._ctx.Process(target=_serve, args=(
                child, self.cfg, self._world, self._materials, part, self.workers,
                None if block is None else (block.path, n_bytes)),
                name=f'ubot_lidar_sim scan {part}', daemon=True)
            proc.start()
            child.close()
            self._procs.append(proc)
            self._conns.append(parent)
        try:
            self._replies(START_TIMEOUT_S, 'start')
        finally:
            for block in self._blocks:
                if block is not None:
                    block.unlink()      # mapped by both sides (or the start failed)

    def _fail(self, kind, value, what, part):
        """
        Raise the ScanProcessError of a failed request, closing the children first.

        A single child that reported an error keeps serving; with parts the others may wait
        for a value the failed part never sends, so they are all restarted on the next call.
        """
        if kind == 'error' and self.workers == 1 and what != 'start':
            raise ScanProcessError(value)
        code = self._procs[part].exitcode if part < len(self._procs) else None
        self.close()
        if kind == 'error':
            raise ScanProcessError(value)
        state = f'did not answer within {value:g} s' if kind == 'timeout' else 'exited'
        raise ScanProcessError(f'compute process {state} during {what}'
                               + (f' (exit code {code})' if code is not None else ''))

    def _replies(self, timeout_s, what):
        """
        Route the parts' messages until every child answered; returns their values in order.

        'send' forwards a carried value to its part, 'minmax' is gathered from every part and
        its result sent to all of them.
        """
        deadline = time.monotonic() + timeout_s
        values, gathered = [None] * self.workers, []
        waiting = dict(enumerate(self._conns))
        index = {id(conn): part for part, conn in waiting.items()}
        while waiting:
            ready = wait(list(waiting.values()), max(0.0, deadline - time.monotonic()))
            if not ready:
                self._fail('timeout', timeout_s, what, next(iter(waiting)))
            for conn in ready:
                part = index[id(conn)]
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    self._fail('exited', None, what, part)
                kind = message[0]
                if kind == 'send':
                    _, name, target, value = message
                    self._conns[target].send(('token', name, value))
                elif kind == 'minmax':
                    gathered.append(message[1:])
                    if len(gathered) == self.workers:
                        lo = min(item[0] for item in gathered)
                        hi = max(item[1] for item in gathered)
                        for other in self._conns:
                            other.send(('token', 'minmax', (lo, hi)))
                elif kind in ('ok', 'ready'):
                    values[part] = message[1]
                    del waiting[part]
                else:
                    self._fail(kind, message[1], what, part)
        return values

    def _request(self, messages, what):
        if not self._procs:
            self._start()
        for part, conn in enumerate(self._conns):
            try:
                conn.send(messages[part])
            except (BrokenPipeError, OSError):
                self.close()
                raise ScanProcessError(f'compute process exited before {what}') from None
        return self._replies(SCAN_TIMEOUT_S, what)

    def set_config(self, cfg):
        """Rebuild the children's simulators with a new config (checked by the caller)."""
        self.cfg = cfg
        self._bounds = None
        if self._procs:
            self._request([('config', cfg)] * self.workers, 'reconfiguration')

    def scan(self, poses, stamp_s, weather, scan_index):
        """Return the ScanResult of one sweep computed in the children; ScanProcessError if not."""
        n_beams = self.cfg.channels * self.cfg.horizontal_samples
        bounds = self._bounds if self._bounds is not None else split_beams(n_beams, self.workers)
        parts = len(bounds) - 1
        if parts != self.workers:      # fewer beams than workers: the rest get empty ranges
            bounds = np.concatenate([bounds, np.full(self.workers - parts, bounds[-1])])
        messages = [('scan', poses, float(stamp_s), weather, int(scan_index),
                     (int(bounds[k]), int(bounds[k + 1]))) for k in range(self.workers)]
        replies = self._request(messages, 'a scan')
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

    def close(self, timeout_s=2.0):
        """Stop the children (asks, then kills after timeout_s); safe to call twice."""
        procs, conns, blocks = self._procs, self._conns, self._blocks
        self._procs, self._conns, self._blocks = [], [], []
        for conn in conns:
            try:
                conn.send(('stop',))
            except (BrokenPipeError, OSError):
                pass
            conn.close()
        for proc in procs:
            proc.join(timeout_s)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout_s)
        for block in blocks:
            if block is not None:
                block.unlink()
                block.close()


def _owned(result, merged):
    """Return result with arrays of its own (merge_parts of several parts already copied)."""
    if merged:
        return result
    return replace(result, points=result.points.copy(), beam=result.beam.copy(),
                   too_close=result.too_close.copy(), hit_range_m=result.hit_range_m.copy())
