"""
``scan``'s checks that need no world and no kernel: arguments and parameters.

They run before cli/scan.py is loaded, so a bad --set, --params, --world or --out is
answered without loading open3d or numba. Returns the sensors' configs for the scan itself.
"""

import math
from pathlib import Path

from ubot_lidar_sim.cli.parser import SENSORS
from ubot_lidar_sim.core.beams.firing import build_beams
from ubot_lidar_sim.core.config.configure import effective_config, parse_overrides
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.world.names import resolve_world
from ubot_lidar_sim.core.world.schema import MAX_EXTENT_M


def overrides_for(kind, overrides, sensor):
    """Return the --set values of one sensor; with --sensor all each name is SENSOR:NAME."""
    if sensor != 'all':             # SENSOR:NAME of the one sensor is its NAME, as with all
        return {name.partition(':')[2] if name.startswith(f'{kind}:') else name: value
                for name, value in overrides.items()}
    out = {}
    for name, value in overrides.items():
        prefix, sep, param = name.partition(':')
        if not sep or prefix not in SENSORS:
            raise ConfigError('--set', name, 'SENSOR:NAME=VALUE with --sensor all, SENSOR one '
                              f'of {", ".join(SENSORS)}')
        if prefix == kind:
            out[param] = value
    return out


def check_out_folders(out):
    """Raise ConfigError when a folder of out exists as something else (a missing one is made)."""
    folder = Path(out).parent
    existing = next(p for p in (folder, *folder.parents) if p.exists() or p == Path(p.anchor))
    if not existing.is_dir():
        raise ConfigError('--out', out, f'a path whose folders are folders ({existing} is not)')


def check_motion(args):
    """Refuse a --pose or --twist value that is not finite or beyond MAX_EXTENT_M (the spec's)."""
    for name, values in (('--pose', args.pose), ('--twist', args.twist)):
        if values is not None and not all(math.isfinite(v) and abs(v) <= MAX_EXTENT_M
                                          for v in values):
            raise ConfigError(name, ' '.join(f'{v:g}' for v in values), '6 finite numbers '
                              f'within +-{MAX_EXTENT_M:g} (m, deg, m/s, deg/s)')


def check(args):
    """Check the arguments and parameters of a scan; return (sensor kinds, their configs)."""
    check_motion(args)
    check_out_folders(args.out)
    extra = {'model_paths': args.model_paths} if args.model_paths else {}
    if args.world is not None:
        extra['world_file'] = args.world
    if args.seed is not None:
        extra['seed'] = args.seed
    kinds = SENSORS if args.sensor == 'all' else (args.sensor,)
    overrides = parse_overrides(args.overrides)
    cfgs = [effective_config(k, args.params, overrides_for(k, overrides, args.sensor), extra)
            for k in kinds]
    resolve_world(cfgs[0].world_file)   # a world file that cannot be read: before open3d loads
    for kind, c in zip(kinds, cfgs):
        if kind == 'lidar_3d':
            build_beams(c)  # refuse a scan over max_rays_per_scan before loading the world
    return kinds, cfgs
