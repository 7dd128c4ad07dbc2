"""
The ``dataset`` command: record every sequence of a spec, in its formats.

``python -m ubot_lidar_sim dataset SPEC.yaml --out DIR [--workers N] [--address ADDR]
[--formats mcap,semantickitti,pcd]``.

Workers: by default one per CPU on an embedded local Ray; ``--workers 1`` runs in this process
without Ray; ``--address`` joins a running Ray cluster. Ctrl-C exits 130 (SIGTERM 143) after
removing the sequences in progress; a rerun resumes.
"""

import importlib.util
import os
import signal
import sys

from ubot_lidar_sim.core.errors import ConfigError
from ubot_lidar_sim.dataset import runner
from ubot_lidar_sim.dataset.formats import FORMATS
from ubot_lidar_sim.dataset.spec import load_spec, with_formats, with_perception
from ubot_lidar_sim.pipeline.interrupts import exit_code, raise_on_sigterm


def add_parser(sub):
    """Add the ``dataset`` command to the CLI's subparsers."""
    p = sub.add_parser('dataset', help='record every sequence of a dataset spec (MCAP + '
                       'labels, SemanticKITTI, PCD)')
    p.add_argument('spec', metavar='SPEC.yaml')
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
    p.add_argument('--deskew', action='store_true', help='ego-motion-compensated SemanticKITTI '
                   "scans (the spec's deskew: true)")
    return p


def _ray_installed():
    return importlib.util.find_spec('ray') is not None     # found, not imported (slow)


def workers_of(args):
    """Return the workers to use (None: all the cluster takes); checks them against Ray."""
    workers = args.workers
    if workers is not None and workers < 1:
        raise ConfigError('--workers', workers, 'an integer >= 1')
    if _ray_installed():
        if args.address is not None:
            return workers          # None: every sequence at once, the cluster's CPUs decide
        return workers or os.cpu_count() or 1
    if args.address is not None or (workers or 1) > 1:
        name, value = ('--address', args.address) if args.address else ('--workers', workers)
        raise ConfigError(name, value, "1 worker without Ray ('pip install ray' for more)")
    return 1


def _interrupt(exc):
    """Return the KeyboardInterrupt (or Terminated) exc is or was caused by, else None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def interrupted(exc):
    """
    Return True when exc is Ctrl-C or SIGTERM: a KeyboardInterrupt, or an error it caused.

    A SIGINT that lands while C code calls back into Python (a numba kernel loading a cached
    object, say) surfaces as a SystemError whose cause is the KeyboardInterrupt.
    """
    return _interrupt(exc) is not None


def run_command(args):
    """Run the ``dataset`` command; returns the exit code (130 after Ctrl-C)."""
    before = raise_on_sigterm()     # SIGTERM cleans up as Ctrl-C does
    try:
        spec = load_spec(args.spec)
        if args.formats is not None:
            spec = with_formats(spec, args.formats, '--formats')
        spec = with_perception(spec, args.label_map, args.deskew)
        workers = workers_of(args)
        summary = runner.run(spec, args.out, workers=workers, address=args.address,
                             show_progress=not args.quiet)
    except BaseException as exc:
        if not interrupted(exc):
            raise
        print('ubot_lidar_sim: interrupted: the sequences in progress were removed; run the '
              'same command again to resume', file=sys.stderr)
        return exit_code(_interrupt(exc))
    finally:
        signal.signal(signal.SIGTERM, before)
    print(f"{summary['recorded']} sequences recorded, {summary['skipped']} already done, "
          f"{summary['frames']} frames, {summary['points']} points in "
          f"{summary['wall_s']:.1f} s: {os.path.join(args.out, runner.MANIFEST)}")
    return 0
