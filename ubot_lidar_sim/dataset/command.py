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
from ubot_lidar_sim.dataset.arguments import add_parser  # noqa: F401
from ubot_lidar_sim.dataset.spec import load_spec, with_formats, with_perception
from ubot_lidar_sim.pipeline.interrupts import (_interrupt, exit_code,  # noqa: F401
                                                interrupted, raise_on_sigterm)


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
          f"{summary['frames']} frames ({summary['messages']} messages recorded), "
          f"{summary['points']} points in "
          f"{summary['wall_s']:.1f} s: {os.path.join(args.out, runner.MANIFEST)}")
    return 0
