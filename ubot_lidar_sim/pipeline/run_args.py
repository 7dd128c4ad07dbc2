"""The ``run`` command's arguments: argparse only, so that ``--help`` loads nothing heavy."""

import argparse

from ubot_lidar_sim.output.view import add_options as add_view_options

DESCRIPTION = ('run lidar_3d, laser_scan, terrain_sensor and demo_driver in one process over DDS '
               '(a fleet: a process per robot) and print a live status line per sensor')

EXAMPLE = """examples:
  python -m ubot_lidar_sim run --seconds 30 --preset ouster_os1_64
  python -m ubot_lidar_sim run --seconds 10 --snapshots out/
  python -m ubot_lidar_sim run --view      (then open the printed http://127.0.0.1:9090/... URL)"""


def add_arguments(parser):
    """Add the ``run`` options to an argparse parser."""
    parser.add_argument('--params', metavar='FILE', help='node parameter file (<node>, '
                        '/**/<node> or /**: ros__parameters: {...}; blocks merge in file order)')
    parser.add_argument('--seconds', type=float, default=0.0,
                        help='stop after this many seconds (default 0: until Ctrl-C)')
    parser.add_argument('--preset', help='lidar_3d preset, e.g. velodyne_vlp16')
    parser.add_argument('--snapshots', metavar='DIR',
                        help='write PNG snapshots of the run into DIR')
    parser.add_argument('--set', action='append', default=[], metavar='NODE:NAME=VALUE',
                        help='override one parameter of one node, value as YAML, e.g. '
                        'lidar_3d:sub_rays=1 (repeatable)')
    parser.add_argument('--robots', type=int, default=1,
                        help='robots of a fleet (1-5): each in namespace robotK with its four '
                        'nodes, on its own loop, seeing the others (the status shows robot1); '
                        'robots 2-N run in a process each')
    parser.add_argument('--one-process', action='store_true',
                        help='run every robot of a fleet in this one process (one GIL: slower '
                        'than a process per robot)')
    parser.add_argument('--robot', type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument('--verbose', action='store_true',
                        help="keep the nodes' info logs (they interleave with the status)")
    add_view_options(parser, flag=True)
    return parser
