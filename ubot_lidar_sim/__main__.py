"""``python -m ubot_lidar_sim {scan,describe,presets,dataset,run}`` (cli/ dispatches)."""

import signal
import sys

from ubot_lidar_sim.ros.entry import import_or_exit, quick_exit


def _import_main():
    """
    Return cli.main, imported as ros/entry.py imports the nodes.

    A Ctrl-C while the CLI still imports (numpy, yaml: a fraction of a second, longer on a busy
    machine) would print a KeyboardInterrupt traceback; here it ends the process at once with
    one line and 130 (143 for SIGTERM), before anything was read or written.
    """
    return import_or_exit('ubot_lidar_sim.cli', lambda signum: 128 + signum,
                          'ubot_lidar_sim: interrupted: no output file was written or '
                          'changed').main


if __name__ == '__main__':
    code = _import_main()()
    if code in (128 + signal.SIGINT, 128 + signal.SIGTERM):
        from ubot_lidar_sim.pipeline.interrupts import forget_caught_interrupt
        forget_caught_interrupt()   # exit with the code, not by a SIGINT CPython re-raises
    if sys.argv[1:2] == ['run']:
        quick_exit(code)        # no slow teardown of DDS, open3d, numba after a clean stop
    sys.exit(code)
