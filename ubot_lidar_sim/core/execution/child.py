"""
The main of a compute process (worker.py's ScanProcess): build the simulator, answer requests.

A request is a run of a sweep's column blocks (column_blocks.py), a new config or 'stop'.
Results go back through the child's SharedResults block.
"""

from multiprocessing.connection import Connection
import os
import signal
import time

import numpy as np

from ubot_lidar_sim.core.execution.transport import read_payload, SharedResults
from ubot_lidar_sim.core.sensors.lidar import LidarSimulator


def serve(conn: Connection, payload_fd: int, block: tuple[int, int] | None = None) -> None:
    """
    Child main: read (cfg, world, materials), build the simulator, answer requests.

    block (fd, bytes): the SharedResults block the results go through. A parent that is gone
    (end of file, broken pipe) ends the child quietly, without a traceback.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        _serve_requests(conn, payload_fd, block)
    except (EOFError, OSError):
        pass


def _serve_requests(conn, payload_fd, block):
    try:
        cfg, world, materials = read_payload(payload_fd)
        os.close(payload_fd)
        results = SharedResults(block[1], block[0]) if block is not None else None
        sim = LidarSimulator(cfg, world, materials)
        # One ray builds the scene of the sweeps now, so that the first sweep costs what the
        # others do (its deadline follows theirs after a restart).
        world.cast(np.zeros((1, 3)), np.array([[0.0, 0.0, 1.0]]), 1.0, cfg.ignored_objects)
    except Exception as exc:  # reported to the caller, which raises it
        conn.send(('error', f'{type(exc).__name__}: {exc}'))
        return
    conn.send(('ready', None))
    while True:
        request = conn.recv()
        kind = request[0]
        if kind == 'stop':
            return
        try:
            if kind == 'config':
                sim = LidarSimulator(request[1], world, materials)
                reply = ('ok', None)
            else:
                _, (how, poses), sweep, (j0, j1) = request
                if how == 'shared':
                    poses = results.load_poses(poses)
                t0 = time.perf_counter()
                result = sim.scan_blocks(poses, sweep, j0, j1)
                busy_s = time.perf_counter() - t0
                stored = results.store(result) if results is not None else None
                reply = ('ok', (('inline', result) if stored is None else ('shared', stored),
                                busy_s))
        except (EOFError, OSError):
            raise                   # the parent is gone
        except Exception as exc:  # a bad scan must not end the child: report it
            reply = ('error', f'{type(exc).__name__}: {exc}')
        conn.send(reply)
