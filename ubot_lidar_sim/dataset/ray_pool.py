"""
The dataset runner's Ray: an embedded local instance or a joined cluster, its tasks and its end.

``check_cluster`` refuses an ``--address`` that no Ray answers on in time; ``start_ray`` starts
(or joins) Ray with Ctrl-C and SIGTERM held back; ``RaySession`` ends every process an embedded
Ray started; ``run_tasks`` runs one task per item, at most ``workers`` at a time, and on an
interrupt ends the tasks in progress before their items are discarded (dataset/runner.py).
"""

import contextlib
import logging
import os
from pathlib import Path
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.pipeline.interrupts import blocked_for_children, deferred, restored_handlers

ADDRESS_TIMEOUT_S = 10.0    # --address: a cluster that does not accept a connection by then
JOIN_TIMEOUT_S = 60.0       # --address: a cluster that ray.init cannot join by then
_JOIN_PROBE = ('import logging, sys, ray; ray.init(address=sys.argv[1], log_to_driver=False, '
               'logging_level=logging.ERROR); ray.shutdown()')
RAY_EXIT_WAIT_S = 3.0       # after ray.shutdown, for each of SIGTERM and SIGKILL
RAY_MARKER = 'UBOT_LIDAR_SIM_RAY_RUN'
RAY_LOCAL_ONLY_ENV = 'RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'    # ray_constants.ENABLE_RAY_CLUSTER


#: s between two looks at the workers' sweep counts (the progress of running sequences).
PROGRESS_POLL_S = 0.5


def check_address(address, timeout_s=ADDRESS_TIMEOUT_S):
    """
    Raise ConfigError('--address') unless HOST:PORT (or ray://HOST:PORT) accepts a connection.

    Within timeout_s: ray.init would retry an unreachable GCS for minutes, deaf to SIGTERM
    while it waits in C++. 'auto' is left to Ray (it reads the address of this machine's
    cluster and fails at once without one).
    """
    if address == 'auto':
        return
    host, sep, port = address.split('://', 1)[-1].rpartition(':')
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError('--address', address, "'auto', HOST:PORT or ray://HOST:PORT (PORT "
                          '1-65535)')
    try:
        socket.create_connection((host.strip('[]'), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        why = 'no answer' if isinstance(exc, socket.timeout) else exc.strerror or str(exc)
        raise ConfigError('--address', address, 'a Ray cluster that accepts a connection '
                          f'within {timeout_s:g} s ({why})') from None


def check_cluster(address, timeout_s=JOIN_TIMEOUT_S):
    """
    Raise ConfigError('--address') unless a ray.init in a child process joins address in time.

    A port that accepts connections but is no Ray GCS keeps ray.init waiting for minutes in C++
    code, where no signal handler runs; the child is killed instead (a signal to this process
    ends the wait too).
    """
    check_address(address)
    try:
        probe = subprocess.run([sys.executable, '-c', _JOIN_PROBE, address],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, errors='replace',
                               timeout=timeout_s)
    except subprocess.TimeoutExpired:
        why = f'ray.init did not join it within {timeout_s:g} s'
    else:
        if probe.returncode == 0:
            return
        lines = [ln for ln in re.sub(r'\x1b\[[0-9;]*m', '', probe.stderr).splitlines()
                 if ln.strip()]
        why = 'ray.init failed' + (f': {lines[-1].strip()[:200]}' if lines else '')
    raise ConfigError('--address', address, f'a Ray cluster this process can join ({why})')


def start_ray(workers, address=None):
    """
    Start an embedded local Ray of ``workers`` CPUs, or join ``address``; quiet.

    Returns the RaySession to stop, or None (and does nothing) when Ray is already initialised
    in this process. Ctrl-C and SIGTERM are held back while Ray starts (interrupts.deferred):
    a start cut half-way left processes that no shutdown knew of.
    """
    if address is None:
        # Ray replaces a node address of 127.0.0.1 by this machine's outside address, and binds
        # its servers (gcs_server, raylet, workers) there, unless its cluster support is off:
        # then every one listens on 127.0.0.1. Read once, when ray is first imported.
        os.environ.setdefault(RAY_LOCAL_ONLY_ENV, '0')
    import ray      # optional: --workers 1 runs without it

    if ray.is_initialized():
        return None
    os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')
    kw = {'include_dashboard': False, 'log_to_driver': False,
          'logging_level': logging.ERROR, 'configure_logging': True}
    session = RaySession()
    # deferred() also puts back the SIGINT / SIGTERM handlers ray.init replaces with its own.
    # Joining a cluster starts no process here: a signal may cut it (it can wait for minutes).
    held = deferred() if address is None else restored_handlers()
    children = blocked_for_children() if address is None else contextlib.nullcontext()
    with held, children, session.environment(address is None):
        try:
            if address is not None:
                ray.init(address=address, **kw)
            else:
                ray.init(num_cpus=workers, object_store_memory=128 << 20,
                         _node_ip_address='127.0.0.1', _temp_dir=session.temp_dir, **kw)
        except BaseException:
            session.stop()
            raise
    return session


class RaySession:
    """
    The Ray a run started: every process it starts carries a marker in its environment.

    stop() shuts Ray down, then ends whatever of its processes is left (Ray's agents outlived
    ray.shutdown() after an interrupt), found by the marker in /proc/PID/environ.
    """

    def __init__(self):
        """Make the marker and the temporary directory of an embedded Ray (not yet used)."""
        self.marker = f'{RAY_MARKER}={os.getpid()}.{time.monotonic_ns()}'.encode('ascii')
        self.temp_dir = None

    @contextlib.contextmanager
    def environment(self, embedded):
        """Within it, the processes Ray starts get the marker (and this package on PYTHONPATH)."""
        name, value = self.marker.decode('ascii').split('=', 1)
        saved = {k: os.environ.get(k) for k in (name, 'PYTHONPATH')}
        os.environ[name] = value
        if embedded:
            # The workers import this package from where this process does (a runtime_env
            # would not use the prestarted workers); Ray's files go to a directory of its own.
            root = str(Path(__file__).resolve().parents[2])
            os.environ['PYTHONPATH'] = os.pathsep.join(
                p for p in (root, saved['PYTHONPATH']) if p)
            self.temp_dir = tempfile.mkdtemp(prefix='ubot_ray_')
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    @property
    def embedded(self):
        """Return True when this process started the Ray (it did not join a cluster)."""
        return self.temp_dir is not None

    def processes(self):
        """Return the pids (not this one) whose environment holds the marker."""
        pids = []
        for entry in os.scandir('/proc'):
            if entry.name.isdigit() and int(entry.name) != os.getpid():
                try:
                    with open(f'/proc/{entry.name}/environ', 'rb') as f:
                        if self.marker in f.read().split(b'\0'):
                            pids.append(int(entry.name))
                except OSError:
                    continue        # gone, or not ours
        return pids

    def stop(self):
        """Shut Ray down; SIGTERM, then SIGKILL, what is left of its processes."""
        import ray

        with deferred():
            try:
                ray.shutdown()
            finally:
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    deadline = time.monotonic() + RAY_EXIT_WAIT_S
                    left = self.processes()
                    for pid in left:
                        with contextlib.suppress(OSError):
                            os.kill(pid, sig)
                    while left and time.monotonic() < deadline:
                        time.sleep(0.05)
                        left = self.processes()
                    if not left:
                        break
                if self.temp_dir is not None:
                    shutil.rmtree(self.temp_dir, ignore_errors=True)


def _result(ref):
    """Return a task's row; a failed task raises its own error (no worker traceback)."""
    import ray

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as exc:
        if isinstance(exc.cause, BaseException):
            raise exc.cause from None
        raise


class SweepCounter:
    """Sweeps done per running item, counted by the workers (a Ray actor of no CPU)."""

    def __init__(self):
        self.counts = {}

    def add(self, key):
        """Count one sweep of key."""
        self.counts[key] = self.counts.get(key, 0) + 1

    def snapshot(self):
        """Return {key: sweeps done}."""
        return dict(self.counts)


def counted(fn, counter, key, shared, item, *extra):
    """Run fn(shared, item, *extra, on_sweep) where on_sweep counts one sweep of key."""
    return fn(shared, item, *extra, lambda: counter.add.remote(key))


def run_tasks(fn, shared, items, extra, workers, address, finish, discard, on_sweeps=None):
    """
    Run fn(shared, item, *extra) for each item on Ray; finish(result) each, as they end.

    At most ``workers`` tasks at a time (None: as many as the cluster's CPUs take), each on one
    CPU; Ray embedded (``workers`` CPUs) or the cluster at ``address``. On an error or an
    interrupt, the tasks in progress are ended and discard(item) called for each. With
    on_sweeps, fn takes an on_sweep() last, and on_sweeps({item's name: sweeps done}) is called
    about every PROGRESS_POLL_S while tasks run.
    """
    session = None
    refs = {}
    try:
        # start_ray first: it sets what Ray reads at its first import (loopback only).
        session = start_ray(workers or os.cpu_count() or 1, address)
        import ray
        task = ray.remote(num_cpus=1, max_retries=0)(fn if on_sweeps is None else counted)
        counter = ray.remote(num_cpus=0)(SweepCounter).remote() if on_sweeps else None
        shared_ref = ray.put(shared)
        waiting = list(items)
        while waiting or refs:
            while waiting and (workers is None or len(refs) < workers):
                item = waiting.pop(0)
                args = (shared_ref, item, *extra)
                refs[task.remote(*args) if counter is None else
                     task.remote(fn, counter, getattr(item, 'name', str(item)), *args)] = item
            ready, _ = ray.wait(list(refs), num_returns=1,
                                timeout=None if counter is None else PROGRESS_POLL_S)
            if counter is not None:
                on_sweeps(ray.get(counter.snapshot.remote()))
            for ref in ready:       # in refs (in progress) until finish has taken its result
                finish(_result(ref))
                refs.pop(ref)
    except BaseException:
        with deferred():            # a second Ctrl-C does not cut the cleanup short
            if _abandon(refs, discard, session):
                session = None      # stopped already
        raise
    finally:
        if session is not None:
            session.stop()


def _abandon(refs, discard, session):
    """
    End the tasks of refs, then discard their items; returns True if session stopped.

    An embedded Ray (session.embedded) is shut down and its processes ended: ray.cancel(force=
    True) of a running task races in Ray's core with the task's reply and can abort this
    process ("Check failed: ... Tried to complete task that was not pending"; ray-project/ray
    PR 54798 fixed one side of that race). A joined cluster's tasks are cancelled and waited
    for (its workers are not this process's to end).
    """
    import ray

    stopped = session is not None and session.embedded
    if stopped:
        session.stop()
    else:
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        for ref in refs:          # wait until the cancelled workers are gone
            try:
                ray.get(ref, timeout=10)
            except Exception:  # noqa: B902 (cancelled, killed or failed: all end the task)
                pass
    for item in refs.values():    # the items in progress, not the finished ones
        discard(item)
    return stopped
