"""The ``describe`` command: JSON of the settings that apply and the models in words."""

import json

from ubot_lidar_sim.cli.parser import SENSORS
from ubot_lidar_sim.core import config as config_mod
from ubot_lidar_sim.core.config.configure import effective_config, parse_overrides
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.sensors import terrain as terrain_mod
from ubot_lidar_sim.core.sensors.describe import describe_laser, describe_models
from ubot_lidar_sim.output.json_values import jsonable


def run_describe(args, sdf_report=None):
    """
    Run the ``describe`` command: JSON of the settings that apply and the models in words.

    sdf_report(cfg) -> [(object, material, why)]: --list-materials (cli/describe_materials.py,
    which loads the world, open3d with it); None without.
    """
    if args.sensor == 'all':
        raise ConfigError('--sensor', 'all', f'one of {", ".join(SENSORS)} for describe')
    extra = {'model_paths': args.model_paths} if args.model_paths else {}
    if getattr(args, 'world', None) is not None:
        extra['world_file'] = args.world
    cfg = effective_config(args.sensor, args.params, parse_overrides(args.overrides),
                           extra or None)
    # Only what applies: the fields of the config's pattern and model, not the others'.
    settings = {name: getattr(cfg, name) for name in config_mod.applicable_names(cfg)}
    out = {'sensor': args.sensor, 'settings': settings}
    if sdf_report is not None:
        out['world_materials'] = [{'object': o, 'material': m, 'why': w}
                                  for o, m, w in sdf_report(cfg)]
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


def command(args, checked=None):
    """Print the effective settings as JSON; return 0."""
    print(run_describe(args))
    return 0
