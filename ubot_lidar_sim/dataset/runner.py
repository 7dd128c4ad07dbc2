"""
Run a dataset spec: each sequence in the spec's formats, serially or on Ray; a resumable manifest.

``manifest.jsonl`` in the output directory holds one JSON row per finished sequence (its
parameters, the sha256 of its input files, frames, points, the files of every format with bytes
or sha256, wall time). A rerun skips every sequence whose row matches the spec and its inputs
(dataset/inputs.py) and whose files all exist with the row's checksums; it first removes what an
earlier run left of every other sequence (finished files without a row, temporaries of a run
that was killed). A sequence's formats are written all together or not at all
(dataset/formats.py). Ctrl-C removes only the sequences in progress. One run at a time per
directory, and none into a directory holding links (dataset/outdir.py). Ray: an embedded local
instance of ``workers`` CPUs, or the cluster at ``address`` (whose nodes must have this package
and see the output directory).
"""

import contextlib
from functools import partial
import json
import logging
import os
from pathlib import Path
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from ubot_lidar_sim.core.config import to_dict
from ubot_lidar_sim.core.configure import effective_config
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.poses import pose_matrix_deg
from ubot_lidar_sim.core.raycast.open3d_caster import Open3dCaster
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.dataset import formats as formats_mod, spec as spec_mod
from ubot_lidar_sim.dataset.inputs import file_sha256 as _sha256, inputs_sha256
from ubot_lidar_sim.dataset.interrupts import blocked_for_children, deferred, restored_handlers
from ubot_lidar_sim.dataset.outdir import locked, refuse_links
from ubot_lidar_sim.dataset.progress import Progress
from ubot_lidar_sim.dataset.record import check_recording, record
from ubot_lidar_sim.dataset.rig import Rig, RigSensor
from ubot_lidar_sim.output import safe_open, semantickitti
from ubot_lidar_sim.output.files import atomic_write, open_append, temp_prefix, WriteError

MANIFEST = 'manifest.jsonl'
ADDRESS_TIMEOUT_S = 10.0    # --address: a cluster that does not accept a connection by then
JOIN_TIMEOUT_S = 60.0       # --address: a cluster that ray.init cannot join by then
_JOIN_PROBE = ('import logging, sys, ray; ray.init(address=sys.argv[1], log_to_driver=False, '
               'logging_level=logging.ERROR); ray.shutdown()')
RAY_EXIT_WAIT_S = 3.0       # after ray.shutdown, for each of SIGTERM and SIGKILL
RAY_MARKER = 'UBOT_LIDAR_SIM_RAY_RUN'
RAY_LOCAL_ONLY_ENV = 'RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'    # ray_constants.ENABLE_RAY_CLUSTER
_WORLDS = {}  # per process: (world_file, materials_file) -> (world, materials)


def sequence_files(out_dir, seq):
    """Return (mcap path, labels path) of a sequence."""
    out_dir = Path(out_dir)
    return out_dir / f'{seq.name}.mcap', out_dir / f'{seq.name}.labels.npz'


def rig_sensors(spec, world_file, seed):
    """Return the RigSensors of the spec's rig in one world with one seed (configs checked)."""
    out = []
    for i, s in enumerate(spec.sensors):
        extra = {'world_file': world_file, 'seed': seed}
        params = dict(s.params)
        if s.kind == 'lidar_3d' and 'sensor_id' not in params and i > 0:
            params['sensor_id'] = s.name   # two lidars must not share their noise streams
        try:
            cfg = effective_config(s.kind, s.params_file or None, params, extra)
        except spec_mod.SimError as e:
            raise spec_mod.SpecError(f'{spec.source}: sensors[{i}].params: {e}') from None
        if out and to_dict(cfg).get('world_frame') != out[0].cfg.world_frame:
            raise spec_mod.SpecError(f'{spec.source}: sensors[{i}].params.world_frame: '
                                     'expected the same world frame for every sensor')
        out.append(RigSensor(s.kind, s.name, cfg, pose_matrix_deg(s.mount[:3], s.mount[3:]),
                             s.topic))
    return out


def check(spec):
    """
    Build the configs and load every world once: a bad parameter or world stops the run.

    Returns {world: inputs_sha256} (dataset/inputs.py) of each world of the spec.
    """
    inputs = {}
    for world in dict.fromkeys(seq.world for seq in spec.sequences):
        sensors = rig_sensors(spec, world, spec.sequences[0].seed)
        try:
            formats_mod.check_rig(spec.formats, sensors)
        except spec_mod.ConfigError as e:
            raise spec_mod.SpecError(f'{spec.source}: formats: {e}') from None
        try:        # sizes, topics, frame ids, a TF tree: refused before anything is recorded
            check_recording(sensors, spec.sequences[0].frames, spec.base_frame, spec.tf_rate_hz)
        except spec_mod.ConfigError as e:
            raise spec_mod.SpecError(f'{spec.source}: {e}') from None
        inputs[world] = sensor_inputs(spec, sensors, load_world(sensors[0].cfg)[0])
    return inputs


def sensor_inputs(spec, sensors, world):
    """Return the inputs_sha256 of a recording of spec's rig (RigSensors) in world."""
    return inputs_sha256(world, sensors, [s.params_file for s in spec.sensors])


def check_outputs(spec, pending, out_dir):
    """Refuse (ConfigError '--out') a SemanticKITTI sequence directory holding another sequence."""
    if 'semantickitti' in spec.formats:
        for seq in pending:
            semantickitti.check_free(out_dir, seq.index, spec.key(seq))


def load_world(cfg, cast_threads=0):
    """
    Return (world, materials) of a config, kept for the next sequence of this process.

    cast_threads: open3d's threads per cast (0: every core; 1: a worker given one CPU).
    """
    key = (cfg.world_file, cfg.material_table_file, cast_threads)
    if key not in _WORLDS:
        _WORLDS.clear()          # one world per worker process at a time
        _WORLDS[key] = load_for_config(cfg, partial(Open3dCaster, threads=cast_threads))
    return _WORLDS[key]


def run_sequence(spec, seq, out_dir, cast_threads=0):
    """
    Record one sequence into out_dir; returns its manifest row.

    cast_threads: see load_world; the bytes do not depend on it (a cast's hits are per ray).
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    with_mcap = 'mcap' in spec.formats
    mcap, labels = sequence_files(out_dir, seq)
    try:
        sensors = rig_sensors(spec, seq.world, seq.seed)
        world, materials = load_world(sensors[0].cfg, cast_threads)
        # Every file and folder below out_dir is opened without following a link planted
        # there since the run began (output/safe_open.py).
        with safe_open.output_root(out_dir), Rig(sensors, world, materials) as rig:
            stats = record(mcap if with_mcap else None, rig,
                           spec_mod.make_trajectory(seq.trajectory),
                           spec_mod.make_weather(seq.weather), seq.frames,
                           labels_path=labels if with_mcap else None,
                           base_frame=spec.base_frame, tf_rate_hz=spec.tf_rate_hz,
                           compression=spec.compression,
                           make_sinks=lambda: formats_mod.sinks(
                               spec.formats, out_dir, seq.index, seq.name, rig.sensors,
                               spec.key(seq)))
    except OSError as exc:          # a full disk: name the user's file, not a temporary
        remove_sequence(out_dir, seq)
        if isinstance(exc, WriteError) or (exc.filename is not None and not str(
                exc.filename).startswith(str(out_dir))):
            raise
        raise WriteError(exc.errno, exc.strerror or str(exc),
                         str(mcap if with_mcap else out_dir / seq.name)) from None
    except BaseException:
        remove_sequence(out_dir, seq)
        raise
    row = {'id': seq.name, 'index': seq.index, 'key': spec.key(seq),
           'inputs_sha256': sensor_inputs(spec, sensors, world),
           'parameters': spec.parameters(seq), 'frames': stats.frames,
           'points': stats.points, 'messages': sum(stats.messages.values()),
           'formats': list(spec.formats), 'files': {}, 'sha256': {}}
    if with_mcap:
        row.update({'mcap': mcap.name, 'mcap_bytes': mcap.stat().st_size,
                    'mcap_sha256': _sha256(mcap), 'labels': labels.name,
                    'labels_bytes': labels.stat().st_size, 'labels_sha256': _sha256(labels)})
        row['files']['mcap'] = [mcap.name, labels.name]
    for fmt, names in stats.files.items():
        row['files'][fmt] = names
        row['sha256'][fmt] = formats_mod.tree_sha256(out_dir, names)
    row.update({'wall_s': round(time.perf_counter() - t0, 3),
                'cpu_s': round(time.process_time() - cpu0, 3), 'peak_rss_mb': _peak_rss_mb()})
    return row


def _peak_rss_mb():
    """Return the peak resident memory (MiB) of this process (a worker) so far."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _final_names(out_dir, seq):
    out_dir = Path(out_dir)
    return [*sequence_files(out_dir, seq), out_dir / f'{seq.name}',
            semantickitti.sequence_dir(out_dir, seq.index), formats_mod.pcd_dir(out_dir, seq.name),
            out_dir / 'poses' / f'{seq.index:02d}.txt', out_dir / 'poses' / f'{seq.index:02d}']


def _remove(path):
    try:
        safe_open.check_below(path.parent)
    except WriteError:
        return              # never through a link planted in DIR
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.is_symlink() or path.exists():
        path.unlink()


def remove_temporaries(out_dir, seq):
    """
    Delete a sequence's temporaries of every format, left by a run that was killed.

    Temporaries: the bag directory, the staged files' and trees' directories (files.py), all
    named '.<final name>.*' beside their final name (files.temp_prefix).
    """
    with safe_open.output_root(out_dir):    # nothing is removed through a link in DIR
        for path in _final_names(out_dir, seq):
            for p in path.parent.glob(f'{temp_prefix(path)}*'):
                _remove(p)


def remove_sequence(out_dir, seq):
    """Delete a sequence's files, finished or temporary, of every format."""
    remove_temporaries(out_dir, seq)
    with safe_open.output_root(out_dir):
        for path in _final_names(out_dir, seq):
            _remove(path)


def read_manifest(out_dir):
    """Return {id: row} of the manifest (later rows win; unreadable lines are skipped)."""
    rows = {}
    path = Path(out_dir) / MANIFEST
    if path.is_file():
        for line in path.read_text(encoding='utf-8').splitlines():
            try:
                row = json.loads(line)
                rows[row['id']] = row
            except (ValueError, KeyError, TypeError):
                continue
    return rows


def is_done(spec, seq, row, out_dir, inputs):
    """
    Return True when row describes seq as spec gives it and all its files match the row.

    inputs: the inputs_sha256 of seq's world now (check()); a row of other inputs is not done.
    """
    if row is None or row.get('key') != spec.key(seq) or row.get('inputs_sha256') != inputs:
        return False
    if 'mcap' in spec.formats:
        for path, name in zip(sequence_files(out_dir, seq), ('mcap', 'labels')):
            if not path.is_file() or path.stat().st_size != row.get(f'{name}_bytes') or \
                    _sha256(path) != row.get(f'{name}_sha256'):
                return False
    for fmt in spec.formats:
        if fmt == 'mcap':
            continue
        names = row.get('files', {}).get(fmt)
        if not names or not all((Path(out_dir) / n).is_file() for n in names) or \
                formats_mod.tree_sha256(out_dir, names) != row.get('sha256', {}).get(fmt):
            return False
    return True


def _append(out_dir, row):
    path = Path(out_dir) / MANIFEST
    try:
        with open_append(path) as f:
            f.write(json.dumps(row, sort_keys=True) + '\n')
    except WriteError:
        raise
    except OSError as exc:
        raise WriteError(exc.errno, exc.strerror or str(exc), str(path)) from None


def _write_manifest(out_dir, spec, rows):
    """Rewrite the manifest in sequence order with the rows of this spec only (atomic)."""
    ordered = [rows[s.name] for s in spec.sequences if s.name in rows]
    text = ''.join(json.dumps(r, sort_keys=True) + '\n' for r in ordered)
    atomic_write(Path(out_dir) / MANIFEST, lambda tmp: Path(tmp).write_text(text, 'utf-8'))


def run(spec, out_dir, workers=1, address=None, show_progress=True, serial_cast_threads=0):
    """
    Record every sequence of spec into out_dir that is not done yet; returns a summary dict.

    workers 1 without address: in this process, no Ray, casting with serial_cast_threads
    (0: every core). Otherwise Ray (local or address), with at most ``workers`` sequences at a
    time (None: as many as the cluster's CPUs take), each task on one CPU casting on one thread.
    """
    if address is not None:
        check_cluster(address)
    _WORLDS.clear()         # files read by an earlier run in this process may have changed
    inputs = check(spec)
    out_dir = Path(out_dir)
    if out_dir.is_dir():
        refuse_links(out_dir)       # before the lock file is created in it
    out_dir.mkdir(parents=True, exist_ok=True)
    with locked(out_dir), safe_open.output_root(out_dir):
        refuse_links(out_dir)
        safe_open.require_regular(out_dir / MANIFEST)   # a FIFO there would block the run
        return _run_locked(spec, out_dir, inputs, workers, address, show_progress,
                           serial_cast_threads)


def _run_locked(spec, out_dir, inputs, workers, address, show_progress, serial_cast_threads):
    rows = read_manifest(out_dir)
    done = {s.name: rows[s.name] for s in spec.sequences
            if is_done(spec, s, rows.get(s.name), out_dir, inputs[s.world])}
    pending = [s for s in spec.sequences if s.name not in done]
    check_outputs(spec, pending, out_dir)
    # Nothing is left that this run does not account for: a killed run's temporaries, and the
    # files of every sequence without a valid row (finished after the last manifest write).
    for s in spec.sequences:
        (remove_temporaries if s.name in done else remove_sequence)(out_dir, s)
    for p in out_dir.glob(f'{temp_prefix(MANIFEST)}*'):
        _remove(p)
    if 'semantickitti' in spec.formats:
        semantickitti.write_label_map(out_dir)
    progress = Progress(len(spec.sequences), len(done), enabled=show_progress)
    t0 = time.perf_counter()
    try:
        if workers == 1 and address is None:
            for seq in pending:
                row = run_sequence(spec, seq, out_dir, serial_cast_threads)
                _finish(out_dir, done, row, progress)
        else:
            _run_ray(spec, pending, out_dir, workers, address, done, progress)
    finally:
        progress.close()
        _write_manifest(out_dir, spec, done)
    wall = time.perf_counter() - t0
    new = [done[s.name] for s in pending]
    return {'sequences': len(spec.sequences), 'skipped': len(spec.sequences) - len(pending),
            'recorded': len(new), 'frames': sum(sum(r['frames'].values()) for r in new),
            'points': sum(r['points'] for r in new), 'wall_s': wall}


def _finish(out_dir, done, row, progress):
    done[row['id']] = row
    _append(out_dir, row)
    progress.update(sum(row['frames'].values()))


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


def _run_ray(spec, pending, out_dir, workers, address, done, progress):
    session = None
    refs = {}
    try:
        # start_ray first: it sets what Ray reads at its first import (loopback only).
        session = start_ray(workers or os.cpu_count() or 1, address)
        import ray
        task = ray.remote(num_cpus=1, max_retries=0)(run_sequence)
        spec_ref = ray.put(spec)
        waiting = list(pending)
        while waiting or refs:
            while waiting and (workers is None or len(refs) < workers):
                seq = waiting.pop(0)
                # A task holds one CPU: its casts use one thread, so that N workers on N cores
                # do not run 2N cast threads that take turns.
                refs[task.remote(spec_ref, seq, str(out_dir), 1)] = seq
            ready, _ = ray.wait(list(refs), num_returns=1)
            for ref in ready:       # in refs (in progress) until its row is written
                _finish(out_dir, done, _result(ref), progress)
                refs.pop(ref)
    except BaseException:
        with deferred():            # a second Ctrl-C does not cut the cleanup short
            if _abandon(refs, out_dir, session):
                session = None      # stopped already
        raise
    finally:
        if session is not None:
            session.stop()


def _abandon(refs, out_dir, session):
    """
    End the tasks of refs, then remove their sequences' files; returns True if session stopped.

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
    for seq in refs.values():     # the sequences in progress, not the finished ones
        remove_sequence(out_dir, seq)
    return stopped
