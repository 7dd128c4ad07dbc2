"""``python -m ubot_lidar_sim {scan,describe,presets,dataset,run}`` (cli/ dispatches)."""

import importlib
import signal
import sys


def _import_main():
    """
    Return cli.main, imported with SIGINT and SIGTERM held (as ros/entry.py does for the nodes).

    A Ctrl-C while the CLI still imports (numpy, yaml: a fraction of a second, longer on a busy
    machine) would print a KeyboardInterrupt traceback; here it ends the process with one line
    and 130 (143 for SIGTERM), before anything was read or written.
    """
    came = []
    held = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, lambda signum, _frame: came.append(signum)) for s in held}
    try:
        cli = importlib.import_module('ubot_lidar_sim.cli')
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    if came:
        print('ubot_lidar_sim: interrupted: no output file was written or changed',
              file=sys.stderr)
        sys.exit(128 + came[0])
    return cli.main


if __name__ == '__main__':
    code = _import_main()()
    if code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
        from ubot_lidar_sim.pipeline.interrupts import forget_caught_interrupt
        forget_caught_interrupt()   # exit with the code, not by a SIGINT CPython re-raises
    if sys.argv[1:2] == ['run']:
        from ubot_lidar_sim.ros.entry import quick_exit
        quick_exit(code)        # no slow teardown of DDS, open3d, numba after a clean stop
    sys.exit(code)
