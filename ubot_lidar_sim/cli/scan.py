"""
The ``scan`` command: simulate sweeps and write them (loads the world, open3d and the kernels).

The --out extension picks the writer (pipeline/writers.py WRITERS), which writes a temporary
file beside the target and renames it, so nothing is left half-written. ``--format NAME`` writes
one sequence of a dataset format into the directory --out (dataset/formats.py SEQUENCE_FORMATS:
the formats with scan_sensors), through its sink, all or none.
"""

import hashlib
import json
from pathlib import Path
import sys

from ubot_lidar_sim.cli.parser import SENSORS
from ubot_lidar_sim.cli.progress import chain, SweepProgress
from ubot_lidar_sim.cli.view import frame_logger
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.physics.weather import weather_from
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.sensors import warm_up
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.dataset.formats import scan_formats, SinkArgs
from ubot_lidar_sim.dataset.perception import Perception
from ubot_lidar_sim.output import safe_open
from ubot_lidar_sim.output.atomic import all_or_none
from ubot_lidar_sim.output.view import View
from ubot_lidar_sim.pipeline.interrupts import deferred
from ubot_lidar_sim.pipeline.record import check_recording, MAX_FRAMES
from ubot_lidar_sim.pipeline.rig import DeskewedRig, MESSAGE_OF, Rig, RigSensor, TappedRig
from ubot_lidar_sim.pipeline.writers import extensions, WRITERS

#: Arguments that do not change a scan's output (kept out of scan_key).
_NOT_KEYED = ('out', 'view', 'color_by', 'web_port', 'grpc_port', 'serve_seconds')
#: Arguments keyed only when not at their default (the keys of earlier scans stay).
_KEYED_IF_SET = {'label_map': 'native', 'deskew': False}
DEFAULT_POSE = {'lidar_3d': (0, 0, 1.5, 0, 0, 0), 'laser_scan': (0, 0, 1.5, 0, 0, 0),
                'terrain_sensor': (0, 0, 0.5, 0, 0, 0)}
assert set(DEFAULT_POSE) == set(SENSORS)


def _rig_sensors(kinds, cfgs):
    """
    Return the RigSensors of a scan: a sensor alone is the posed frame (identity mount).

    With --sensor all, --pose places base_link (default: the terrain sensor's) and each sensor
    sits at its own default pose's offset from it (lidar_3d and laser_scan 1 m above).
    """
    base = DEFAULT_POSE[kinds[-1]][:3]
    return [RigSensor(k, k, c, pose_matrix_deg([a - b for a, b in zip(DEFAULT_POSE[k][:3], base)],
                                               (0, 0, 0)), f'/{MESSAGE_OF[k]}')
            for k, c in zip(kinds, cfgs)]


def _weather(args):
    """Return the Weather of --rain, --visibility, --snow, --snow-depth (errors name the flag)."""
    return weather_from({'rain_mm_h': '--rain', 'visibility_m': '--visibility',
                         'snowfall_rate_mm_h': '--snow', 'snow_depth_m': '--snow-depth'},
                        rain_mm_h=args.rain, visibility_m=args.visibility,
                        snowfall_rate_mm_h=args.snow, snow_depth_m=args.snow_depth)


def _sequence_format(args):
    """Return the SequenceFormat of --format, its --sensor, --sequence and --out checked."""
    known = scan_formats()
    if args.format not in known:
        names = ' or '.join(repr(name) for name in known)
        raise ConfigError('--format', args.format, f'{names} (the file formats take their name '
                          "from --out's extension)")
    fmt, with_format = known[args.format], f'with --format {args.format}'
    if args.sensor not in fmt.scan_sensors:
        raise ConfigError('--sensor', args.sensor, f'{" or ".join(fmt.scan_sensors)} '
                          f'{with_format}')
    fmt.check_number(args.sequence, '--sequence')
    out = Path(args.out)
    named_like_a_file = not out.exists() and out.suffix.lower() in WRITERS
    if (out.exists() and not out.is_dir()) or named_like_a_file:
        raise ConfigError('--out', args.out, f'a directory {with_format} (not a file name such '
                          'as one ending in .pcd)')
    return fmt


def scan_key(args):
    """Return the sha256 of everything that decides a scan's output (its arguments but --out)."""
    text = json.dumps({k: v for k, v in sorted(vars(args).items()) if k not in _NOT_KEYED
                       and not (k in _KEYED_IF_SET and v == _KEYED_IF_SET[k])},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _write_sequence(fmt, args, rig, frames):
    """Write the frames (an iterable) as sequence --sequence of fmt in --out, all or none."""
    root, options = Path(args.out), Perception(label_map=args.label_map)
    with all_or_none():
        sink = fmt.make_sink(SinkArgs(root, args.sequence, f'seq_{args.sequence:04d}',
                                      rig.sensors, scan_key(args), options, rig.world, None))
        for fr in frames:
            sink.add(fr)
        names = sink.close() + fmt.write_shared(root, options, (args.sequence,))
    return [root / name for name in names]


def run_scan(args, kinds, cfgs, view=None, progress=None):
    """
    Run the ``scan`` command (kinds, cfgs: scan_check.check's); return the files written.

    view: an output.view.View that shows each sweep as it is computed, or None; progress: an
    on_frame callback (cli/progress.py SweepProgress) or None.
    """
    sensor = args.sensor
    ext = Path(args.out).suffix.lower()
    allowed = extensions(sensor)
    fmt = None if args.format is None else _sequence_format(args)
    if fmt is None and args.label_map != 'native':
        names = ' or '.join(scan_formats())
        raise ConfigError('--label-map', args.label_map, f'native unless --format {names} '
                          "(it picks the ids of SemanticKITTI's .label files)")
    if fmt is None and ext not in allowed:
        raise ConfigError('--out', args.out, f'a file ending in {" or ".join(allowed)} '
                          f'for --sensor {sensor}')
    if not 1 <= args.frames <= MAX_FRAMES:
        raise ConfigError('--frames', args.frames, f'an integer 1-{MAX_FRAMES}')
    if fmt is not None:
        fmt.check_free(args.out, args.sequence, scan_key(args))
    cfg = cfgs[0]
    weather = _weather(args)
    for kind, c in zip(kinds, cfgs):
        if kind == 'lidar_3d' and fmt is None:
            WRITERS[ext].check_lidar(c)     # as PCD's point layouts
    sensors = _rig_sensors(kinds, cfgs)
    if fmt is None and WRITERS[ext].recording:
        # Sizes, one world, frame ids and topics: before the world is loaded.
        check_recording(sensors, args.frames, frames_name='--frames')
    pose = args.pose if args.pose is not None else DEFAULT_POSE[kinds[-1]]
    trajectory = BodyTwist(pose_matrix_deg(pose[:3], pose[3:]), twist_from_cli(*args.twist))
    world, materials = load_for_config(cfg)
    with deferred():        # Ctrl-C inside numba's first load of a kernel is unsafe (warm_up.py)
        warm_up.run_every_kernel()
    # The sweeps as the nodes and the dataset runner compute them (pipeline/rig.py), each
    # written (to a temporary name) as it comes, so memory does not grow with --frames.
    root = args.out if fmt is not None else Path(args.out).parent
    with safe_open.output_root(root), Rig(sensors, world, materials) as rig:
        if args.deskew:
            rig = DeskewedRig(rig)
        if view is not None or progress is not None:
            rig = TappedRig(rig, chain(view and frame_logger(view, weather), progress))
        if fmt is not None:
            return _write_sequence(fmt, args, rig, rig.frames(trajectory, weather, args.frames))
        return WRITERS[ext].write(Path(args.out), rig, trajectory, weather, args.frames, cfg,
                                  sensor)


def command(args, checked):
    """Run ``scan`` after scan_check.check (checked: its result); print the files written."""
    view = View(web_port=args.web_port, grpc_port=args.grpc_port, color_by=args.color_by,
                bind=args.bind) if args.view else None
    progress = SweepProgress(args.frames, checked[0][0]) if args.frames > 1 else None
    files = run_scan(args, *checked, view=view, progress=progress)
    for path in files:
        print(path)
    if progress is not None:
        print(progress.summary(files), file=sys.stderr)
    if view is not None:
        view.announce()
        view.serve_until_ctrl_c(args.serve_seconds, f'{len(files)} file(s) written, listed above')
    return 0
