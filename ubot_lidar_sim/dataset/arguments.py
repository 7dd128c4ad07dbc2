"""The ``dataset`` command's arguments: argparse only, so that ``--help`` loads nothing heavy."""

#: The formats a sequence can be written in (dataset/formats.py writes them).
FORMATS = ('mcap', 'semantickitti', 'pcd', 'kitti_object', 'openpcdet')

#: The formats ``scan --format NAME`` writes (dataset/formats.py scan_formats), for ``scan
#: --help``: {name: (what --out DIR gets, the --sequence numbers it takes)}.
SCAN_FORMATS = {'semantickitti': ('DIR/sequences/NN/ of lidar_3d sweeps', '0-99')}

EXAMPLE = """example:
  python -m ubot_lidar_sim dataset example --out /tmp/ds --workers 1"""


def add_parser(sub):
    """Add the ``dataset`` command to the CLI's subparsers."""
    p = sub.add_parser('dataset', help='record every sequence of a dataset spec (MCAP + '
                       'labels, SemanticKITTI, PCD)')
    p.add_argument('spec', metavar='SPEC.yaml', help='a spec file, or the name of a shipped '
                   'example (example: config/datasets/example.yaml)')
    p.add_argument('--out', required=True, metavar='DIR', help='output directory (resumable)')
    p.add_argument('--workers', type=int, metavar='N',
                   help='sequences at once (default: one per CPU of this machine, or with '
                   "--address as many as the cluster's CPUs take; 1 without --address: no Ray)")
    p.add_argument('--address', metavar='ADDR', help="join the Ray cluster at ADDR ('auto', "
                   'HOST:PORT or ray://HOST:PORT)')
    p.add_argument('--quiet', action='store_true', help='no progress bar')
    p.add_argument('--formats', metavar='F1,F2', help='formats of every sequence, replacing the '
                   f"spec's formats: (default mcap): {', '.join(FORMATS)}")
    p.add_argument('--label-map', choices=('native', 'semantickitti'),
                   help="SemanticKITTI's ids: the world's class ids (native) or SemanticKITTI's "
                   "own, replacing the spec's label_map")
    p.add_argument('--deskew', action='store_true', help='ego-motion-compensated lidar_3d '
                   "sweeps in every format (the spec's deskew: true)")
    return p
