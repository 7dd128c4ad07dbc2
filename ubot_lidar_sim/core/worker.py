"""
A LidarSimulator in a child process: sweeps compute beside the caller's Python threads.

One Python process has one GIL. A node that takes /tf at hundreds of Hz, or several sensor
nodes in one process (``python -m ubot_lidar_sim run``), stall the numpy work of a sweep with
their callbacks and are stalled by it in turn. ``ScanProcess`` keeps a copy of the world and the
config in a child process and runs the sweep there: the caller looks the poses up, sends them
(C + 1, 4, 4) with the weather and the scan index, and waits (without the GIL) for the
ScanResult. It is the same ``LidarSimulator.scan`` call as in process, so the same bytes.

The child is started with multiprocessing's 'spawn' (a fork would copy the locks of the
caller's DDS threads), ignores SIGINT (Ctrl-C reaches the whole process group; the caller shuts
it down) and exits when the caller closes the pipe or dies.
"""

import multiprocessing
import signal

from ubot_lidar_sim.core.errors import ScanError
from ubot_lidar_sim.core.lidar import LidarSimulator

START_TIMEOUT_S = 60.0      # importing open3d and building the scene in the child
SCAN_TIMEOUT_S = 60.0       # one sweep; beyond it the child is taken as hung and killed


class ScanProcessError(ScanError):
    """The compute process failed (exited, hung or refused to start)."""


def _serve(conn, cfg, world, materials):
    """Child main loop: build the simulator, then answer 'scan' and 'config' requests."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
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
                _, poses, stamp_s, weather, scan_index = request
                reply = ('ok', sim.scan(lambda _times, p=poses: p, stamp_s, weather,
                                        scan_index))
        except Exception as exc:  # a bad scan must not end the child: report it
            reply = ('error', f'{type(exc).__name__}: {exc}')
        try:
            conn.send(reply)
        except (BrokenPipeError, OSError):
            return


class ScanProcess:
    """
    Run ``LidarSimulator(cfg, world, materials)`` in a child process.

    ``scan(poses, stamp_s, weather, scan_index)`` takes the poses (C + 1, 4, 4) at
    ``LidarSimulator.pose_times(stamp_s)`` and returns the ScanResult. A child that died is
    restarted on the next call. Not thread-safe: one caller thread at a time.
    """

    def __init__(self, cfg, world, materials):
        self.cfg = cfg
        self._world, self._materials = world, materials
        self._ctx = multiprocessing.get_context('spawn')
        self._proc = self._conn = None
        self._start()

    @property
    def pid(self):
        """Return the child's process id (None when not running)."""
        return self._proc.pid if self._proc is not None else None

    def _start(self):
        parent, child = self._ctx.Pipe()
        proc = self._ctx.Process(target=_serve, args=(child, self.cfg, self._world,
                                                      self._materials),
                                 name='ubot_lidar_sim scan', daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        self._reply(START_TIMEOUT_S, 'start')

    def _reply(self, timeout_s, what):
        try:
            ready = self._conn.poll(timeout_s)
            kind, value = self._conn.recv() if ready else ('timeout', None)
        except (EOFError, OSError):
            kind, value = 'exited', None
        if kind in ('ok', 'ready'):
            return value
        if kind == 'error':
            if what == 'start':
                self.close()
            raise ScanProcessError(value)
        code = self._proc.exitcode
        self.close()
        state = f'did not answer within {timeout_s:g} s' if kind == 'timeout' else 'exited'
        raise ScanProcessError(f'compute process {state} during {what}'
                               + (f' (exit code {code})' if code is not None else ''))

    def _request(self, message, what):
        if self._proc is None:
            self._start()
        try:
            self._conn.send(message)
        except (BrokenPipeError, OSError):
            self.close()
            raise ScanProcessError(f'compute process exited before {what}') from None
        return self._reply(SCAN_TIMEOUT_S, what)

    def set_config(self, cfg):
        """Rebuild the child's simulator with a new config (checked by the caller)."""
        self.cfg = cfg
        if self._proc is not None:
            self._request(('config', cfg), 'reconfiguration')

    def scan(self, poses, stamp_s, weather, scan_index):
        """Return the ScanResult of one sweep computed in the child; ScanProcessError if not."""
        return self._request(('scan', poses, float(stamp_s), weather, int(scan_index)), 'a scan')

    def close(self, timeout_s=2.0):
        """Stop the child (asks, then kills after timeout_s); safe to call twice."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is None:
            return
        try:
            conn.send(('stop',))
        except (BrokenPipeError, OSError):
            pass
        conn.close()
        proc.join(timeout_s)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout_s)
