"""
Offline command line (CONTRACT §3): ``scan``, ``presets`` and ``describe``, no ROS graph needed.

Every bad parameter, world file or argument ends with exit code 2 and one line on stderr naming
the parameter, the value given and what is allowed. The --out extension picks the writer
(output/files.py WRITERS), which writes a temporary file beside the target and renames it, so
nothing is left half-written.
"""

import argparse
import json
import math
from pathlib import Path
import sys

from ubot_lidar_sim.core import config as config_mod
from ubot_lidar_sim.core import presets as presets_mod
from ubot_lidar_sim.core.errors import ConfigError, SimError
from ubot_lidar_sim.core.params_file import read_params_file
from ubot_lidar_sim.core.poses import ConstantTwist, pose_matrix_deg, twist_from_cli
from ubot_lidar_sim.core.sensors import terrain as terrain_mod
from ubot_lidar_sim.output import files

SENSORS = ('lidar_3d', 'laser_scan', 'terrain_sensor')
CONFIG_CLASSES = {'lidar_3d': 'LidarConfig', 'laser_scan': 'LaserScanConfig',
                  'terrain_sensor': 'TerrainConfig'}
DEFAULT_POSE = {'lidar_3d': (0, 0, 1.5, 0, 0, 0), 'laser_scan': (0, 0, 1.5, 0, 0, 0),
                'terrain_sensor': (0, 0, 0.5, 0, 0, 0)}
# ROS-only keys a node parameter file may carry; they mean nothing offline.
_ROS_ONLY = ('use_sim_time',)


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
    common.add_argument('--sensor', choices=SENSORS, default='lidar_3d')
    common.add_argument('--params', metavar='FILE.yaml', help='node parameter file')
    common.add_argument('--set', dest='overrides', action='append', default=[],
                        metavar='NAME=VALUE', help='override one parameter (YAML value)')
    scan = sub.add_parser('scan', parents=[common], help='simulate sweeps and write them')
    scan.add_argument('--world', help="world YAML, 'demo' or 'flat'")
    scan.add_argument('--pose', nargs=6, type=float,
                      metavar=('X', 'Y', 'Z', 'ROLL', 'PITCH', 'YAW'))
    scan.add_argument('--twist', nargs=6, type=float, default=[0.0] * 6,
                      metavar=('VX', 'VY', 'VZ', 'WX', 'WY', 'WZ'))
    scan.add_argument('--rain', type=float, default=0.0, metavar='MM_PER_H')
    scan.add_argument('--visibility', type=float, default=math.inf, metavar='M')
    scan.add_argument('--seed', type=int)
    scan.add_argument('--frames', type=int, default=1)
    scan.add_argument('--out', required=True, metavar='FILE')
    sub.add_parser('presets', help='list the sensor presets')
    sub.add_parser('describe', parents=[common], help='print the effective settings as JSON')
    return p


def parse_overrides(items):
    """Return {name: value} from NAME=VALUE strings, values parsed as YAML."""
    import yaml

    out = {}
    for item in items:
        name, sep, text = item.partition('=')
        if not sep or not name.strip():
            raise ConfigError('--set', item, 'NAME=VALUE')
        try:
            out[name.strip()] = yaml.safe_load(text) if text.strip() else ''
        except yaml.YAMLError as e:
            raise ConfigError(name.strip(), text, f'a YAML value ({_one_line(e)})') from e
    return out


def effective_config(sensor, params_file=None, overrides=None, extra=None):
    """Return the sensor's config: preset < params file < --set < explicit flags (``extra``)."""
    import yaml

    file_params = {}
    if params_file:
        try:
            file_params = read_params_file(params_file, sensor)
        except OSError as e:
            raise ConfigError('--params', params_file,
                              f'a readable parameter file ({e.strerror or e})') from e
        except yaml.YAMLError as e:
            raise ConfigError('--params', params_file, f'valid YAML ({_one_line(e)})') from e
    for key in _ROS_ONLY:
        file_params.pop(key, None)
    merged = {**(overrides or {}), **(extra or {})}
    params = presets_mod.merge_params(file_params, merged, use_presets=sensor == 'lidar_3d')
    cls = getattr(config_mod, CONFIG_CLASSES[sensor])
    return config_mod.from_dict(cls, params)


def frame_path(out, k, frames):
    """Output name of sweep k: FILE_0000.ext when frames > 1."""
    out = Path(out)
    return out if frames == 1 else out.with_name(f'{out.stem}_{k:04d}{out.suffix}')


def _weather(rain, visibility):
    """Return the Weather of --rain and --visibility (its limits; errors name the flag)."""
    from ubot_lidar_sim.core.physics.weather import weather_from
    return weather_from({'rain_mm_h': '--rain', 'visibility_m': '--visibility'},
                        rain_mm_h=rain, visibility_m=visibility)


def run_scan(args):
    """Run the ``scan`` command; returns the list of files written."""
    sensor = args.sensor
    ext = Path(args.out).suffix.lower()
    allowed = files.extensions(sensor)
    if ext not in allowed:
        raise ConfigError('--out', args.out, f'a file ending in {" or ".join(allowed)} '
                          f'for --sensor {sensor}')
    if args.frames < 1:
        raise ConfigError('--frames', args.frames, 'an integer >= 1')
    if not Path(args.out).parent.is_dir():
        raise ConfigError('--out', args.out, 'a file in an existing directory')
    extra = {}
    if args.world is not None:
        extra['world_file'] = args.world
    if args.seed is not None:
        extra['seed'] = args.seed
    cfg = effective_config(sensor, args.params, parse_overrides(args.overrides), extra)
    weather = _weather(args.rain, args.visibility)
    if sensor == 'lidar_3d':
        from ubot_lidar_sim.core.sensors.scan_pattern import build_beams
        build_beams(cfg)  # refuse a scan over max_rays_per_scan before loading the world
    pose = args.pose if args.pose is not None else DEFAULT_POSE[sensor]
    trajectory = ConstantTwist(pose_matrix_deg(pose[:3], pose[3:]), twist_from_cli(*args.twist))
    from ubot_lidar_sim.core.world.world import load_for_config
    world, materials = load_for_config(cfg)
    period = 1.0 / cfg.rate_hz
    outputs = []
    if sensor == 'lidar_3d':
        from ubot_lidar_sim.core.sensors.lidar import LidarSimulator
        sim = LidarSimulator(cfg, world, materials)
        # compute_workers > 1: the same sweeps split over that many processes (same bytes).
        from ubot_lidar_sim.core.execution.worker import ScanProcess, sweep
        pool = ScanProcess(cfg, world, materials, cfg.compute_workers) \
            if cfg.compute_workers > 1 else None
        try:
            for k in range(args.frames):
                stamp = (k + (1 if cfg.stamp_at == 'end' else 0)) * period
                outputs.append(sweep(sim, pool, trajectory, stamp, weather, k))
        finally:
            if pool is not None:
                pool.close()
    elif sensor == 'laser_scan':
        from ubot_lidar_sim.core.sensors.laser import LaserScanner
        scanner = LaserScanner(cfg, world, materials)
        outputs = [scanner.scan(trajectory, k * period, weather, scan_index=k)
                   for k in range(args.frames)]
    else:
        from ubot_lidar_sim.core.sensors.terrain import TerrainSensor
        terrain = TerrainSensor(cfg, world)
        outputs = [(k * period, terrain.sample(trajectory([k * period])[0]))
                   for k in range(args.frames)]
    written = []
    for k, res in enumerate(outputs):
        path = frame_path(args.out, k, args.frames)
        files.WRITERS[ext].write(path, res, cfg, sensor)
        written.append(path)
    return written


def run_describe(args):
    """Run the ``describe`` command: JSON of every effective setting and the model descriptions."""
    cfg = effective_config(args.sensor, args.params, parse_overrides(args.overrides))
    out = {'sensor': args.sensor, 'settings': config_mod.to_dict(cfg)}
    if args.sensor != 'terrain_sensor':
        from ubot_lidar_sim.core.sensors.describe import describe_models
        out['detection_threshold_counts'] = cfg.detection_threshold_counts
        out['detection_z'] = cfg.detection_z
        lidar_cfg = cfg if args.sensor == 'lidar_3d' else cfg.to_lidar_config()
        out['models'] = describe_models(lidar_cfg)
    else:
        out['models'] = {'terrain': ' '.join(terrain_mod.__doc__.split())}
    return json.dumps(files.jsonable(out), indent=2)


def run_presets():
    """Run the ``presets`` command: one line per preset."""
    names = presets_mod.list_presets()
    width = max(len(n) for n in names)
    return '\n'.join(f'{n:<{width}}  {presets_mod.preset_summary(n)}' for n in names)


def _one_line(err):
    return ' '.join(str(err).split())


def _describe_error(err):
    import yaml

    if isinstance(err, OSError) and err.filename is not None:
        return (f'file: got {str(err.filename)!r}, allowed a readable/writable path '
                f'({err.strerror or _one_line(err)})')
    if isinstance(err, yaml.YAMLError):
        return f'params: got a file that is not valid YAML, allowed YAML ({_one_line(err)})'
    return _one_line(err)


def main(argv=None):
    """Entry point of ``python -m ubot_lidar_sim``; returns the exit code."""
    import yaml

    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        if args.command == 'presets':
            print(run_presets())
        elif args.command == 'describe':
            print(run_describe(args))
        else:
            for path in run_scan(args):
                print(path)
        return 0
    except UsageError as e:
        print(f'ubot_lidar_sim: argument error: {_one_line(e)}', file=sys.stderr)
        return 2
    except (SimError, ValueError, OSError, yaml.YAMLError) as e:
        print(f'ubot_lidar_sim: error: {_describe_error(e)}', file=sys.stderr)
        return 2
