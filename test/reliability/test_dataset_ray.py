"""
The dataset runner's Ray: a cluster address that fails, and the embedded Ray's processes.

An address nobody listens on or that is no Ray cluster is an error within the stated time; the
embedded Ray listens on loopback only, leaves the terminal's Ctrl-C to the driver and ends every
process it started.
"""

import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import time

from builders import write_spec
import pytest
from rel_helpers import ROOT
from test_dataset_faults import _one_line, _start, SPEC
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset import ray_pool


def test_an_unreachable_address_is_an_error_within_the_stated_time(tmp_path):
    t0 = time.monotonic()
    proc = _start(['dataset', write_spec(tmp_path, SPEC), '--out', tmp_path / 'o', '--address',
                   '127.0.0.1:1'])
    _, err = proc.communicate(timeout=ray_pool.ADDRESS_TIMEOUT_S + 60)   # bound: + start-up
    assert proc.returncode == 2 and '--address' in _one_line(err) and '127.0.0.1:1' in err
    assert time.monotonic() - t0 < ray_pool.ADDRESS_TIMEOUT_S + 60       # bound: + start-up
    assert not (tmp_path / 'o').exists()


@pytest.fixture
def silent_port():
    """Yield the port of a socket that accepts connections and never answers (no Ray GCS)."""
    with socket.socket() as srv:
        srv.bind(('127.0.0.1', 0))
        srv.listen(16)
        yield srv.getsockname()[1]


def test_an_address_that_is_no_ray_cluster_is_an_error_within_the_stated_time(silent_port):
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match='--address.*did not join it within 5 s'):
        ray_pool.check_cluster(f'127.0.0.1:{silent_port}', timeout_s=5.0)
    assert time.monotonic() - t0 < 5.0 + 5.0    # bound: the timeout + killing the probe


def test_sigterm_while_joining_a_cluster_ends_the_run_at_once(tmp_path, silent_port):
    proc = _start(['dataset', write_spec(tmp_path, SPEC), '--out', tmp_path / 'o', '--address',
                   f'127.0.0.1:{silent_port}', '--quiet'])
    time.sleep(8.0)         # the probe's ray.init is waiting for an answer
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and 'interrupted' in _one_line(err)
    assert time.monotonic() - t0 < 5.0      # bound: it waited for Ray's 30 s GCS timeout
    assert not (tmp_path / 'o').exists()


def test_stopping_the_embedded_ray_ends_every_process_it_started():
    session = ray_pool.start_ray(1)
    assert session is not None
    try:
        assert len(session.processes()) >= 3    # gcs_server, raylet, a worker at least
    finally:
        session.stop()
    assert session.processes() == []


def test_the_embedded_ray_listens_on_loopback_only():
    # A fresh process, as the dataset command is: Ray reads its cluster switch when it is first
    # imported, and another test of this session may have imported it already.
    child = subprocess.Popen(
        [sys.executable, '-c', 'import sys; from ubot_lidar_sim.dataset import ray_pool; '
         's = ray_pool.start_ray(1); print(*s.processes(), flush=True); sys.stdin.readline(); '
         's.stop()'],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pids = [int(p) for p in child.stdout.readline().split()]
        listening = _listening_addresses(pids)
    finally:
        child.communicate('stop\n', timeout=60)
    assert pids and listening and all(addr in LOOPBACK for addr in listening), listening


def test_ray_processes_never_take_the_terminals_ctrl_c():
    # Ctrl-C reaches the whole process group; only the driver may act on it (it stops Ray in
    # order). SigBlk of /proc/PID/status: bit SIGINT - 1.
    session = ray_pool.start_ray(1)
    try:
        pids = session.processes()
        blocked = [int(_status(pid, 'SigBlk'), 16) >> (signal.SIGINT - 1) & 1 for pid in pids]
    finally:
        session.stop()
    assert pids and all(blocked), list(zip(pids, blocked))
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, []) & {signal.SIGINT}   # not the driver


def _status(pid, key):
    """Return the value of key in /proc/PID/status."""
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith(key + ':'):
            return line.split(':', 1)[1].strip()
    raise KeyError(key)


# 127.0.0.1, ::ffff:127.0.0.1 and ::1 as /proc/net/tcp and tcp6 print them (host-order words)
LOOPBACK = ('0100007F', '0000000000000000FFFF00000100007F', '00000000000000000000000001000000')


def _listening_addresses(pids):
    """Return the local addresses (hex, as /proc/net/tcp* shows them) pids listen on."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f'/proc/{pid}/fd'):
                target = os.readlink(f'/proc/{pid}/fd/{fd}')
                if target.startswith('socket:['):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    out = []
    for table in ('tcp', 'tcp6'):
        for line in Path(f'/proc/net/{table}').read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == '0A' and cols[9] in inodes:       # LISTEN
                out.append(cols[1].split(':')[0])
    return out
