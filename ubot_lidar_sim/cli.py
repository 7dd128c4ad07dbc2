"""
Offline command line: ``scan``, ``presets``, ``describe``, ``dataset``; no ROS.

docs/cli-and-datasets.md describes every command.

Every bad parameter, world file or argument ends with exit code 2 and one line on stderr naming
the parameter, the value given and what is allowed. The --out extension picks the writer
(pipeline/writers.py WRITERS), which writes a temporary file beside the target and renames it,
so nothing is left half-written.
"""

import argparse
import hashlib
import json
import math
import os
from pathlib import Path
import sys

from ubot_lidar_sim.core import config as config_mod
from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config import presets as presets_mod
from ubot_lidar_sim.core.config.configure import effective_config, one_line, parse_overrides
from ubot_lidar_sim.core.errors import ConfigError, SimError
from ubot_lidar_sim.core.physics.weather import weather_from
from ubot_lidar_sim.core.poses import BodyTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.sensors import terrain as terrain_mod
from ubot_lidar_sim.core.sensors.describe import describe_models
from ubot_lidar_sim.core.sensors.laser import describe_laser
from ubot_lidar_sim.core.sensors.point_layouts import LAYOUT_DTYPES
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.dataset.command import (add_parser as add_dataset_parser, interrupted,
                                            run_command)
from ubot_lidar_sim.output import pcd, safe_open, semantickitti
from ubot_lidar_sim.output.atomic import all_or_none, WriteError
from ubot_lidar_sim.output.files import jsonable
from ubot_lidar_sim.pipeline.record import check_recording, MAX_FRAMES
from ubot_lidar_sim.pipeline.rig import MESSAGE_OF, Rig, RigSensor
from ubot_lidar_sim.pipeline.writers import extensions, WRITERS
import yaml

SENSORS = ('lidar_3d', 'laser_scan', 'terrain_sensor')
DEFAULT_POSE = {'lidar_3d': (0, 0, 1.5, 0, 0, 0), 'laser_scan': (0, 0, 1.5, 0, 0, 0),
                'terrain_sensor': (0, 0, 0.5, 0, 0, 0)}


class UsageError(Exception):
    """A command-line usage error, reported on one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def build_parser():
    """Return the argparse parser of the three offline commands."""
    p = _Parser(prog='python -m ubot_lidar_sim', description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest='command', required=True, parser_class=_Parser)
    common = _Parser(add_help=False)
    common.add_argument('--sensor', choices=SENSORS + ('all',), default='lidar_3d',
                        help="scan: 'all' records the three on one base to one .mcap")
    common.add_argument('--params', metavar='FILE.yaml', help='node parameter file')
    common.add_argument('--set', dest='overrides', action='append', default=[],
                        metavar='NAME=VALUE', help='override one parameter (YAML value)')
    common.add_argument('--model-path', dest='model_paths', action='append', default=[],
                        metavar='DIR', help='a directory of model:// URIs of SDF worlds '
                        '(repeatable; the model_paths parameter)')
    scan = sub.add_parser('scan', parents=[common], help='simulate sweeps and write them')
    scan.add_argument('--world', help="world YAML, SDF (.world, .sdf), 'demo' or 'flat'")
    scan.add_argument('--pose', nargs=6, type=float,
                      metavar=('X', 'Y', 'Z', 'ROLL', 'PITCH', 'YAW'))
    scan.add_argument('--twist', nargs=6, type=float, default=[0.0] * 6,
                      metavar=('VX', 'VY', 'VZ', 'WX', 'WY', 'WZ'))
    scan.add_argument('--rain', type=float, default=0.0, metavar='MM_PER_H')
    scan.add_argument('--visibility', type=float, default=math.inf, metavar='M')
    scan.add_argument('--snow', type=float, default=0.0, metavar='MM_PER_H',
                      help='snowfall rate, liquid-water equivalent')
    scan.add_argument('--snow-depth', type=float, default=0.0, metavar='M',
                      help='snow on the ground (> 0: ground objects become snow)')
    scan.add_argument('--seed', type=int)
    scan.add_argument('--frames', type=int, default=1)
    scan.add_argument('--out', required=True, metavar='FILE',
                      help='a file (its extension picks the format) or, with --format, a '
                      'directory')
    scan.add_argument('--format', metavar='NAME', help="'semantickitti': --out DIR/ gets "
                      'DIR/sequences/NN/ of lidar_3d sweeps (default: from --out)')
    scan.add_argument('--sequence', type=int, default=0, metavar='NN',
                      help='with --format semantickitti: the sequence number, 0-99')
    sub.add_parser('presets', help='list the sensor presets')
    describe = sub.add_parser('describe', parents=[common],
                              help='print the effective settings as JSON')
    describe.add_argument('--list-materials', action='store_true', help='load world_file and '
                          'list the material each SDF surface got and why')
    add_dataset_parser(sub)
    return p


def _overrides_for(kind, overrides, sensor):
    """Return the --set values of one sensor; with --sensor all each name is SENSOR:NAME."""
    if sensor != 'all':
        return overrides
    out = {}
    for name, value in overrides.items():
        prefix, sep, param = name.partition(':')
        if not sep or prefix not in SENSORS:
            raise ConfigError('--set', name, 'SENSOR:NAME=VALUE with --sensor all, SENSOR one '
                              f'of {", ".join(SENSORS)}')
        if prefix == kind:
            out[param] = value
    return out


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


def _check_format(args):
    """Check --format and --sequence (ConfigError naming them)."""
    if args.format != 'semantickitti':
        raise ConfigError('--format', args.format, "'semantickitti' (the file formats take "
                          "their name from --out's extension)")
    if args.sensor != 'lidar_3d':
        raise ConfigError('--sensor', args.sensor, 'lidar_3d with --format semantickitti')
    semantickitti.check_number(args.sequence, '--sequence')
    out = Path(args.out)
    named_like_a_file = not out.exists() and out.suffix.lower() in WRITERS
    if (out.exists() and not out.is_dir()) or named_like_a_file:
        raise ConfigError('--out', args.out, 'a directory with --format semantickitti (not a '
                          'file name such as one ending in .pcd)')


def scan_key(args):
    """Return the sha256 of everything that decides a scan's output (its arguments but --out)."""
    text = json.dumps({k: v for k, v in sorted(vars(args).items()) if k != 'out'},
                      sort_keys=True, default=str)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _write_semantickitti(args, outputs):
    """Write the sweeps (an iterable) as DIR/sequences/NN (+ poses, label map), all or none."""
    root = Path(args.out)
    with all_or_none():
        writer = semantickitti.SequenceWriter(root, args.sequence, scan_key(args))
        for res in outputs:
            writer.add(res.points, res.sensor_pose, res.stamp_s)
        writer.close()
        semantickitti.write_label_map(root, sequences=(args.sequence,))
    return [root / name for name in writer.files()] + [root / semantickitti.LABEL_MAP]


def run_scan(args):
    """Run the ``scan`` command; returns the list of files written."""
    sensor = args.sensor
    ext = Path(args.out).suffix.lower()
    allowed = extensions(sensor)
    if args.format is not None:
        _check_format(args)
    elif ext not in allowed:
        raise ConfigError('--out', args.out, f'a file ending in {" or ".join(allowed)} '
                          f'for --sensor {sensor}')
    if not 1 <= args.frames <= MAX_FRAMES:
        raise ConfigError('--frames', args.frames, f'an integer 1-{MAX_FRAMES}')
    if not Path(args.out).parent.is_dir():
        raise ConfigError('--out', args.out, 'a file in an existing directory')
    if args.format is not None:
        semantickitti.check_free(args.out, args.sequence, scan_key(args))
    extra = {'model_paths': args.model_paths} if args.model_paths else {}
    if args.world is not None:
        extra['world_file'] = args.world
    if args.seed is not None:
        extra['seed'] = args.seed
    kinds = SENSORS if sensor == 'all' else (sensor,)
    overrides = parse_overrides(args.overrides)
    cfgs = [effective_config(k, args.params, _overrides_for(k, overrides, sensor), extra)
            for k in kinds]
    cfg = cfgs[0]
    weather = _weather(args)
    for kind, c in zip(kinds, cfgs):
        if kind == 'lidar_3d':
            build_beams(c)  # refuse a scan over max_rays_per_scan before loading the world
            if ext == '.pcd' and args.format is None:
                pcd.check_dtype(LAYOUT_DTYPES[c.point_layout], c.point_layout)
    sensors = _rig_sensors(kinds, cfgs)
    if args.format is None and WRITERS[ext].recording:
        # Sizes, one world, frame ids and topics: before the world is loaded.
        check_recording(sensors, args.frames, frames_name='--frames')
    pose = args.pose if args.pose is not None else DEFAULT_POSE[kinds[-1]]
    trajectory = BodyTwist(pose_matrix_deg(pose[:3], pose[3:]), twist_from_cli(*args.twist))
    world, materials = load_for_config(cfg)
    # The sweeps as the nodes and the dataset runner compute them (pipeline/rig.py), each
    # written (to a temporary name) as it comes, so memory does not grow with --frames.
    root = args.out if args.format is not None else Path(args.out).parent
    with safe_open.output_root(root), Rig(sensors, world, materials) as rig:
        if args.format is not None:
            frames = rig.frames(trajectory, weather, args.frames)
            return _write_semantickitti(args, (fr.result for fr in frames))
        return WRITERS[ext].write(Path(args.out), rig, trajectory, weather, args.frames, cfg,
                                  sensor)


def run_describe(args):
    """Run the ``describe`` command: JSON of the settings that apply and the models in words."""
    if args.sensor == 'all':
        raise ConfigError('--sensor', 'all', f'one of {", ".join(SENSORS)} for describe')
    extra = {'model_paths': args.model_paths} if args.model_paths else None
    cfg = effective_config(args.sensor, args.params, parse_overrides(args.overrides), extra)
    # Only what applies: the fields of the config's pattern and model, not the others'.
    settings = {name: getattr(cfg, name) for name in config_mod.applicable_names(cfg)}
    out = {'sensor': args.sensor, 'settings': settings}
    if args.list_materials:
        out['world_materials'] = [{'object': o, 'material': m, 'why': w}
                                  for o, m, w in load_for_config(cfg)[0].sdf_report]
    if args.sensor == 'lidar_3d':
        out['detection_threshold_counts'] = cfg.detection_threshold_counts
        out['detection_z'] = cfg.detection_z
        out['models'] = describe_models(cfg)
    elif args.sensor == 'laser_scan':
        if cfg.model == 'physical':
            out['detection_threshold_counts'] = cfg.detection_threshold_counts
            out['detection_z'] = cfg.detection_z
        out['models'] = describe_laser(cfg)
    else:
        out['models'] = {'terrain': ' '.join(terrain_mod.__doc__.split())}
    return json.dumps(jsonable(out), indent=2)


def run_presets():
    """Run the ``presets`` command: one line per preset (name, sensors, pattern, summary)."""
    rows = [(n, ','.join(presets_mod.preset_nodes(n)), presets_mod.preset_pattern(n),
             presets_mod.preset_summary(n)) for n in presets_mod.list_presets(None)]
    widths = [max(len(row[k]) for row in rows) for k in range(3)]
    return '\n'.join(f'{n:<{widths[0]}}  {s:<{widths[1]}}  {p:<{widths[2]}}  {text}'
                     for n, s, p, text in rows)


def _describe_error(err):
    if isinstance(err, WriteError):
        return f'--out: {err}'
    if isinstance(err, OSError) and err.filename is not None:
        return (f'file: got {str(err.filename)!r}, allowed a readable/writable path '
                f'({err.strerror or one_line(err)})')
    if isinstance(err, yaml.YAMLError):
        return f'params: got a file that is not valid YAML, allowed YAML ({one_line(err)})'
    return one_line(err)


def main(argv=None):
    """Entry point of ``python -m ubot_lidar_sim``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        if args.command == 'presets':
            print(run_presets())
        elif args.command == 'describe':
            print(run_describe(args))
        elif args.command == 'dataset':
            return run_command(args)
        else:
            for path in run_scan(args):
                print(path)
        return 0
    except UsageError as e:
        print(f'ubot_lidar_sim: argument error: {one_line(e)}', file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`presets | head`): no error line; stdout goes to /dev/null so
        # that flushing it at exit does not raise again (the Python docs' recipe, exit 1).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (SimError, ValueError, OSError, yaml.YAMLError) as e:
        if interrupted(e):
            return _interrupted()
        print(f'ubot_lidar_sim: error: {_describe_error(e)}', file=sys.stderr)
        return 2
    except BaseException as e:      # Ctrl-C, or an error it caused inside C code
        if not interrupted(e):
            raise
        return _interrupted()


def _interrupted():
    """Report Ctrl-C on one line; exit code 130 (128 + SIGINT), as a shell reports it."""
    print('ubot_lidar_sim: interrupted: no output file was written or changed', file=sys.stderr)
    return 130
