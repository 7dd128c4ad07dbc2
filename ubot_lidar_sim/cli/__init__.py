"""
The command line: ``python -m ubot_lidar_sim {scan,describe,presets,dataset,run,view}``.

docs/cli-and-datasets.md describes every command. The parser (cli/parser.py) is argparse
alone; COMMANDS names the module of each command, loaded with importlib only when that
command runs, so ``--help``, ``presets`` and argument errors load none of open3d, numba, ray,
matplotlib or rclpy (docs/architecture.md, "Loading on demand").

Every bad parameter, world file or argument ends with exit code 2 and one line on stderr naming
the parameter, the value given and what is allowed.
"""

import importlib
import os
import sys

from ubot_lidar_sim.cli.parser import parse, UsageError
from ubot_lidar_sim.core.config.configure import effective_config, one_line  # noqa: F401
from ubot_lidar_sim.core.errors import SimError
from ubot_lidar_sim.output.atomic import WriteError
from ubot_lidar_sim.pipeline.interrupts import deferred, interrupted
import yaml

#: command: (module whose check(args) runs first and loads nothing heavy, or None;
#: module whose command(args, checked) runs it, function name). Loaded on demand.
COMMANDS = {
    'scan': ('ubot_lidar_sim.cli.scan_check', 'ubot_lidar_sim.cli.scan', 'command'),
    'describe': (None, 'ubot_lidar_sim.cli.describe', 'command'),
    'presets': (None, 'ubot_lidar_sim.cli.presets', 'command'),
    'dataset': (None, 'ubot_lidar_sim.dataset.command', 'run_command'),
    'run': (None, 'ubot_lidar_sim.pipeline.run', 'run'),
    'view': (None, 'ubot_lidar_sim.cli.view', 'command'),
}
#: (command, option): the module that replaces the command's when the option is set.
VARIANTS = {('describe', 'list_materials'): 'ubot_lidar_sim.cli.describe_materials',
            ('view', 'live'): 'ubot_lidar_sim.cli.view_live',
            ('describe', 'robot'): 'ubot_lidar_sim.cli.robot_describe',
            ('scan', 'robot'): 'ubot_lidar_sim.cli.robot_scan'}


def _describe_error(err):
    if isinstance(err, WriteError):
        return f'--out: {err}'
    if isinstance(err, OSError) and err.filename is not None:
        return (f'file: got {str(err.filename)!r}, allowed a readable/writable path '
                f'({err.strerror or one_line(err)})')
    if isinstance(err, yaml.YAMLError):
        return f'params: got a file that is not valid YAML, allowed YAML ({one_line(err)})'
    return one_line(err)


def _load(name):
    """Import a command's module; a Ctrl-C while open3d, numba or rclpy load waits for them."""
    with deferred():
        return importlib.import_module(name)


def dispatch(args):
    """Run the parsed command: its checks, then its module; return the exit code."""
    check_name, module_name, function = COMMANDS[args.command]
    for (command, option), variant in VARIANTS.items():
        if args.command == command and getattr(args, option, False):
            module_name = variant
    robot = getattr(args, 'robot', None)    # a robot's sensors: the variant checks them
    checked = _load(check_name).check(args) if check_name and not robot else None
    run = getattr(_load(module_name), function)
    if check_name is None and function != 'command':
        return run(args)
    return run(args, checked)


def main(argv=None):
    """Entry point of ``python -m ubot_lidar_sim``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return dispatch(parse(argv)) or 0
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
            return _interrupted(e)
        print(f'ubot_lidar_sim: error: {_describe_error(e)}', file=sys.stderr)
        return 2
    except BaseException as e:      # Ctrl-C, or an error it caused inside C code
        if not interrupted(e):
            raise
        return _interrupted(e)


def _interrupted(exc):
    """Report Ctrl-C on one line; exit code 130 (128 + SIGINT), as a shell reports it."""
    print('ubot_lidar_sim: interrupted: no output file was written or changed', file=sys.stderr)
    return 130
