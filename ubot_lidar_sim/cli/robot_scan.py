"""
``scan --robot FILE --robot-sensor NAME``: one sensor of a robot, its model frame at --pose.

The robot's other links occlude the sensor (class ``self``; ``--self-filter`` drops them).
``--out X.json`` of a laser writes the LaserScan fields and ``frame_id``; .npz writes the
sensor's result as ``scan`` does.
"""

from pathlib import Path

from ubot_lidar_sim.core.config.configure import parse_overrides
from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.core.poses import pose_matrix_deg
from ubot_lidar_sim.core.robot.load import load_robot, parse_args
from ubot_lidar_sim.core.robot.mapping import LASER
from ubot_lidar_sim.core.robot.scanner import RobotScanner
from ubot_lidar_sim.core.world.world import load_for_config
from ubot_lidar_sim.output.files import message_fields, write_json
from ubot_lidar_sim.output.safe_open import output_root
from ubot_lidar_sim.pipeline.writers import WRITERS

DEFAULT_POSE = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)    # the model frame on the ground at the origin


def run_robot_scan(args):
    """Scan the robot's sensor once; return the file written."""
    if not args.robot_sensor:
        raise ConfigError('--robot-sensor', None, 'a <sensor name> of the robot (describe '
                          '--robot FILE lists them)')
    desc = load_robot(args.robot, parse_args(args.robot_args), args.model_paths)
    overrides = parse_overrides(args.overrides)
    if args.world is not None:
        overrides['world_file'] = args.world
    if args.seed is not None:
        overrides['seed'] = args.seed
    scanner_cfg = {args.robot_sensor: overrides}
    world_probe = RobotScanner.config_only(desc, args.robot_sensor, scanner_cfg, args.params)
    ext = Path(args.out).suffix.lower()
    if ext not in ('.json', '.npz') or (ext == '.json' and world_probe[0] != LASER):
        raise ConfigError('--out', args.out, 'a .json (a laser) or .npz file')
    world, materials = load_for_config(world_probe[1])
    scanner = RobotScanner(desc, args.robot_sensor, world, materials, scanner_cfg,
                           args.params, self_filter=args.self_filter)
    pose = args.pose if args.pose is not None else DEFAULT_POSE
    result = scanner.scan(pose_matrix_deg(pose[:3], pose[3:]))
    with output_root(Path(args.out).parent):
        if ext == '.json':
            header, fields = message_fields(result, scanner.cfg, LASER)
            write_json(args.out, {'header': header, **fields,
                                  'frame_id': scanner.cfg.frame_id,
                                  'topic': scanner.sensor.topic,
                                  'message_type': scanner.sensor.message_type})
        else:
            WRITERS[ext].write_frame(Path(args.out), result, scanner.cfg, scanner.kind)
    return Path(args.out)


def command(args, checked=None):
    """Run ``scan --robot``; print the file written; return 0."""
    print(run_robot_scan(args))
    return 0
