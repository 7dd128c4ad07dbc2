"""The real ``dataset`` command's embedded Ray listens on loopback only."""

import os
import signal
import time

from builders import write_spec
from test_dataset_faults import _start, SLOW_LIDAR
from test_dataset_ray import _listening_addresses, LOOPBACK
from ubot_lidar_sim.dataset import ray_pool

SPEC = {'worlds': ['flat'], 'frames': 40, 'seeds': [0, 1, 2, 3], 'sensors': [SLOW_LIDAR]}


def _ray_pids(run_pid):
    """Return the pids whose environment holds the marker of the run whose driver is run_pid."""
    prefix = f'{ray_pool.RAY_MARKER}={run_pid}.'.encode('ascii')
    pids = []
    for entry in os.scandir('/proc'):
        if entry.name.isdigit():
            try:
                with open(f'/proc/{entry.name}/environ', 'rb') as f:
                    if any(v.startswith(prefix) for v in f.read().split(b'\0')):
                        pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _names(pids):
    out = set()
    for pid in pids:
        try:
            with open(f'/proc/{pid}/comm') as f:
                out.add(f.read().strip())
        except OSError:
            continue
    return out


def test_the_dataset_commands_embedded_ray_listens_on_loopback_only(tmp_path):
    proc = _start(['dataset', write_spec(tmp_path, SPEC), '--out', tmp_path / 'o',
                   '--workers', '2', '--quiet'])
    listening, names = [], set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            pids = _ray_pids(proc.pid)
            names = _names(pids)
            listening = _listening_addresses(pids)
            if {'gcs_server', 'raylet'} <= names and len(listening) >= 2:
                break
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)
        proc.communicate(timeout=120)
    assert {'gcs_server', 'raylet'} <= names, names
    assert listening and all(addr in LOOPBACK for addr in listening), listening
