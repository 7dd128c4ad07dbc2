"""
The command line's parser: argparse and the commands' arguments, nothing heavy.

``--help`` of every command and every argument error are answered from this module alone;
cli/__init__.py loads a command's own module only when that command runs.
"""

import argparse
import math

from ubot_lidar_sim.dataset.arguments import add_parser as add_dataset_parser
from ubot_lidar_sim.dataset.arguments import EXAMPLE as DATASET_EXAMPLE
from ubot_lidar_sim.dataset.arguments import SCAN_FORMATS
from ubot_lidar_sim.output.view import add_options as add_view_options
from ubot_lidar_sim.pipeline.run_args import add_arguments as add_run_arguments
from ubot_lidar_sim.pipeline.run_args import DESCRIPTION as RUN_DESCRIPTION
from ubot_lidar_sim.pipeline.run_args import EXAMPLE as RUN_EXAMPLE

SENSORS = ('lidar_3d', 'laser_scan', 'terrain_sensor')
COMMAND_NAMES = ('scan', 'describe', 'presets', 'dataset', 'run', 'view')
PROG = 'python -m ubot_lidar_sim'

EXAMPLES = {
    None: f"""examples:
  {PROG} presets
  {PROG} scan --world demo --set preset=velodyne_vlp16 --out out/vlp16.npz
  {PROG} describe --sensor laser_scan --set preset=sick_tim571
  {PROG} run --seconds 30
  {PROG} COMMAND --help     (the options of one command)""",
    'scan': f"""examples:
  {PROG} scan --world demo --set preset=velodyne_vlp16 --out out/vlp16.npz
  {PROG} scan --sensor laser_scan --world example --out out/scan.json
  {PROG} scan --sensor all --world demo --frames 20 --out out/all.mcap""",
    'presets': f"""example:
  {PROG} presets""",
    'view': f"""examples:
  {PROG} view out/all.mcap            (then open the printed http://127.0.0.1:9090/... URL)
  {PROG} view out/ds --color-by class
  {PROG} view                         (the running graph: /points, /scan, /tf, ...)
  {PROG} view --namespace robot1 --namespace robot2
  {PROG} scan --world demo --frames 10 --out out/demo.mcap --view""",
    'describe': f"""examples:
  {PROG} describe --sensor lidar_3d --set preset=ouster_os1_64
  {PROG} describe --sensor laser_scan --params config/laser_scan.yaml""",
}


class UsageError(Exception):
    """A command-line usage error, reported on one line."""


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault('formatter_class', argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise UsageError(message)


def _common():
    """Return the parent parser of --sensor, --params, --set, --model-path."""
    common = _Parser(add_help=False)
    common.add_argument('--sensor', choices=SENSORS + ('all',), default='lidar_3d',
                        help="scan: 'all' records the three on one base to one .mcap")
    common.add_argument('--params', metavar='FILE.yaml', help='node parameter file')
    common.add_argument('--set', dest='overrides', action='append', default=[],
                        metavar='NAME=VALUE', help='override one parameter (YAML value; the '
                        'names of docs/parameters.md)')
    common.add_argument('--model-path', dest='model_paths', action='append', default=[],
                        metavar='DIR', help='a directory of model:// URIs of SDF worlds '
                        '(repeatable; the model_paths parameter)')
    robot = common.add_argument_group('a robot description (docs/robots.md)')
    robot.add_argument('--robot', metavar='FILE', help='.urdf, .urdf.xacro, model.sdf, a model '
                       'directory or model://NAME: its sensors, base and body')
    robot.add_argument('--robot-args', default='', metavar="'NAME:=VALUE ...'",
                       help='xacro arguments')
    robot.add_argument('--robot-sensor', metavar='NAME', help='scan: the <sensor name> to scan')
    robot.add_argument('--self-filter', action='store_true', help="scan: drop the robot's own "
                       'returns (class self)')
    return common


def _add_scan(sub, common):
    scan = sub.add_parser('scan', parents=[common], help='simulate sweeps and write them',
                          epilog=EXAMPLES['scan'])
    scan.add_argument('--world', help='world YAML or SDF (.world, .sdf), or a built-in world: '
                      "'demo', 'flat', 'example'")
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
    scan.add_argument('--format', metavar='NAME', help='; '.join(
        f"'{name}': --out DIR/ gets {gets}" for name, (gets, _) in SCAN_FORMATS.items())
        + ' (default: from --out)')
    scan.add_argument('--sequence', type=int, default=0, metavar='NN', help='; '.join(
        f'with --format {name}: the sequence number, {numbers}'
        for name, (_, numbers) in SCAN_FORMATS.items()))
    scan.add_argument('--label-map', choices=('native', 'semantickitti'), default='native',
                      help=f"with --format {' or '.join(SCAN_FORMATS)}: the .label ids, the "
                      "world's class ids (native) or SemanticKITTI's own")
    scan.add_argument('--deskew', action='store_true', help='ego-motion-compensated lidar_3d '
                      'sweeps in every output: each point in the sensor frame at the stamp')
    add_view_options(scan, flag=True)


def _add_view(sub):
    view = sub.add_parser('view', epilog=EXAMPLES['view'], help='show an MCAP recording, a '
                          "dataset directory or the running ROS graph in Rerun's web viewer "
                          'on this machine')
    view.add_argument('target', metavar='MCAP|DIR', nargs='?', help='an .mcap file or a '
                      'dataset directory (none: the running graph, over ROS)')
    add_view_options(view, flag=False)
    live = view.add_argument_group('the running graph (no MCAP|DIR)')
    live.add_argument('--namespace', dest='namespaces', action='append', metavar='NS',
                      help="a robot's namespace, e.g. robot1 (repeatable: a fleet; default "
                      'none)')
    for key, default in (('points', 'points'), ('scan', 'scan'), ('boxes', 'lidar_3d/boxes'),
                         ('environment', '/environment')):
        live.add_argument(f'--{key}-topic', dest=f'{key}_topic', default=default,
                          metavar='TOPIC', help=f'default {default}' + (
                              ' (below each --namespace)' if not default.startswith('/')
                              else ''))
    live.add_argument('--world-frame', default='map', metavar='FRAME',
                      help='the frame everything is shown in (default map)')
    live.add_argument('--robot-frame', default='base_link', metavar='FRAME',
                      help='the frame whose path is drawn (default base_link; in a namespace '
                      'NS/base_link)')


def build_parser():
    """Return the argparse parser of every command."""
    p = _Parser(prog=PROG, description='Simulated LiDAR, 2D laser and terrain sensors: '
                'offline sweeps, datasets and the ROS 2 nodes in one process.',
                epilog=EXAMPLES[None])
    sub = p.add_subparsers(dest='command', metavar='COMMAND', parser_class=_Parser)
    common = _common()
    _add_scan(sub, common)
    _add_view(sub)
    sub.add_parser('presets', help='list the sensor presets', epilog=EXAMPLES['presets'])
    describe = sub.add_parser('describe', parents=[common], epilog=EXAMPLES['describe'],
                              help='print the effective settings as JSON')
    describe.add_argument('--world', help='the world_file parameter (a world YAML or SDF)')
    describe.add_argument('--list-materials', action='store_true', help='load world_file and '
                          'list the material each SDF surface got and why')
    dataset = add_dataset_parser(sub)
    dataset.epilog = DATASET_EXAMPLE
    add_run_arguments(sub.add_parser('run', help=RUN_DESCRIPTION, description=RUN_DESCRIPTION,
                                     epilog=RUN_EXAMPLE))
    return p


def parse(argv):
    """Return the parsed arguments; UsageError when no command is named."""
    args = build_parser().parse_args(argv)
    if args.command is None:
        raise UsageError(f'name a command: {", ".join(COMMAND_NAMES)} '
                         f'({PROG} --help shows each with an example)')
    if args.command == 'view':
        args.live = args.target is None     # no MCAP or directory: the running graph
    return args
