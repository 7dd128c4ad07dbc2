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
and see the output directory; dataset/ray_pool.py).
"""

from functools import partial
import json
from pathlib import Path
import resource
import shutil
import time

from ubot_lidar_sim.core.config import to_dict
from ubot_lidar_sim.core.config.configure import effective_config
from ubot_lidar_sim.core.poses import pose_matrix_deg
from ubot_lidar_sim.core.sensors import warm_up
from ubot_lidar_sim.core.world.world import load_for_config, world_key
from ubot_lidar_sim.dataset import formats as formats_mod, spec as spec_mod
from ubot_lidar_sim.dataset.inputs import file_sha256 as _sha256, inputs_sha256
from ubot_lidar_sim.dataset.outdir import locked, refuse_links
from ubot_lidar_sim.dataset.progress import Progress
from ubot_lidar_sim.dataset.ray_pool import check_cluster, run_tasks
from ubot_lidar_sim.output import safe_open
from ubot_lidar_sim.output.atomic import atomic_write, open_append, temp_prefix, WriteError
from ubot_lidar_sim.pipeline.interrupts import deferred
from ubot_lidar_sim.pipeline.record import check_recording, record
from ubot_lidar_sim.pipeline.rig import Rig, RigSensor, TappedRig

MANIFEST = 'manifest.jsonl'
_WORLDS = {}  # per process: (world_key, cast threads) -> (world, materials)


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
    """Refuse (ConfigError '--out') a format's sequence directory holding another sequence."""
    for fmt in spec.formats:
        for seq in pending:
            formats_mod.SEQUENCE_FORMATS[fmt].check_free(out_dir, seq.index, spec.key(seq))


def load_world(cfg, cast_threads=0):
    """
    Return (world, materials) of a config, kept for the next sequence of this process.

    cast_threads: the caster's threads per cast (0: every core; 1: a worker given one CPU).
    """
    key = (world_key(cfg), cast_threads)
    if key not in _WORLDS:
        _WORLDS.clear()          # one world per worker process at a time
        _WORLDS[key] = load_for_config(cfg, cast_threads)
    return _WORLDS[key]


def run_sequence(spec, seq, out_dir, cast_threads=0, on_sweep=None):
    """
    Record one sequence into out_dir; returns its manifest row.

    cast_threads: see load_world; the bytes do not depend on it (a cast's hits are per ray).
    on_sweep(): called after each sweep of the lead sensor (the spec's frames count), or None.
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    with_mcap = 'mcap' in spec.formats
    mcap, labels = formats_mod.mcap_files(out_dir, seq.name)
    try:
        sensors = rig_sensors(spec, seq.world, seq.seed)
        world, materials = load_world(sensors[0].cfg, cast_threads)
        # Every file and folder below out_dir is opened without following a link planted
        # there since the run began (output/safe_open.py).
        with safe_open.output_root(out_dir), Rig(sensors, world, materials) as rig:
            if on_sweep is not None:
                lead = rig.sensors[0]
                rig = TappedRig(rig, lambda fr: fr.sensor is lead and on_sweep())
            stats = record(mcap if with_mcap else None, rig,
                           spec_mod.make_trajectory(seq.trajectory),
                           spec_mod.make_weather(seq.weather), seq.frames,
                           labels_path=labels if with_mcap else None,
                           base_frame=spec.base_frame, tf_rate_hz=spec.tf_rate_hz,
                           compression=spec.compression,
                           deskew=spec.perception.deskews(),
                           make_sinks=lambda: formats_mod.sinks(
                               spec.formats, out_dir, seq.index, seq.name, rig.sensors,
                               spec.key(seq), spec.perception, world,
                               spec_mod.make_trajectory(seq.trajectory)))
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
    """Return the final paths of a sequence in every registered format (formats.py paths)."""
    return [path for fmt in formats_mod.SEQUENCE_FORMATS.values()
            for path in fmt.paths(Path(out_dir), seq.index, seq.name)]


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

    Temporaries: the bag directory, the staged files' and trees' directories
    (output/atomic.py), all named '.<final name>.*' beside their final name (temp_prefix).
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
        for path, name in zip(formats_mod.mcap_files(out_dir, seq.name), ('mcap', 'labels')):
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
    for fmt in spec.formats:        # the files the sequences share (SemanticKITTI's label map)
        formats_mod.SEQUENCE_FORMATS[fmt].write_shared(out_dir, spec.perception,
                                                       [s.index for s in spec.sequences])
    progress = Progress(len(spec.sequences), len(done), enabled=show_progress)
    t0 = time.perf_counter()
    try:
        if workers == 1 and address is None:
            with deferred():    # Ctrl-C inside numba's first load of a kernel is unsafe
                warm_up.run_every_kernel()
            for seq in pending:
                row = run_sequence(spec, seq, out_dir, serial_cast_threads,
                                   progress.sweeps(seq.name, seq.frames))
                _finish(out_dir, done, row, progress)
        else:
            # A task holds one CPU: its casts use one thread, so that N workers on N cores do
            # not run 2N cast threads that take turns.
            run_tasks(run_sequence, spec, pending, (str(out_dir), 1), workers, address,
                      lambda row: _finish(out_dir, done, row, progress),
                      partial(remove_sequence, out_dir),
                      on_sweeps=progress.worker_sweeps(sum(s.frames for s in pending)))
    finally:
        progress.close()
        _write_manifest(out_dir, spec, done)
    wall = time.perf_counter() - t0
    new = [done[s.name] for s in pending]
    return {'sequences': len(spec.sequences), 'skipped': len(spec.sequences) - len(pending),
            'recorded': len(new), 'frames': sum(lead_frames(r) for r in new),
            'messages': sum(r['messages'] for r in new),
            'points': sum(r['points'] for r in new), 'wall_s': wall}


def _finish(out_dir, done, row, progress):
    done[row['id']] = row
    _append(out_dir, row)
    progress.update(lead_frames(row))


def lead_frames(row):
    """Return a manifest row's sweeps of its lead sensor: what the spec's ``frames`` counts."""
    return next(iter(row['frames'].values()), 0)
