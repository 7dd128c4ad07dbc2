"""
The node executables' entry points: a signal while the node's module still imports ends it quietly.

A console script imports its module (rclpy, numba, open3d: a few seconds on a busy machine, a
minute at load 15) before any of the node's code runs, so a Ctrl-C then printed a
KeyboardInterrupt traceback. Here a SIGINT or SIGTERM while the module imports ends the process
at once, with exit code 0 (as run_node does for a signal) and no traceback: the handler runs at
the next bytecode of the import (a blocking system call is interrupted for it), so nothing holds
the signal until the import ends. Then run_node takes the signals over.
"""

import atexit
import importlib
import os
import signal
import sys


def import_or_exit(module, code=lambda signum: 0, line=None):
    """
    Return module imported; a SIGINT or SIGTERM meanwhile ends the process at once.

    code(signum) is the exit code; line, when given, is printed on stderr first. Nothing of the
    package has run yet, so there is nothing to clean up (os._exit).
    """
    def end(signum, _frame):
        if line:
            print(line, file=sys.stderr)
        quick_exit(code(signum), run_atexit=False)

    held = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, end) for s in held}
    try:
        return importlib.import_module(module)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _main(module):
    """Import module (a signal meanwhile exits 0), then exit with its main()'s exit code."""
    quick_exit(import_or_exit(module).main())


def quick_exit(code, run_atexit=True):
    """
    Exit with code once the node is shut down: atexit handlers run, the interpreter's teardown not.

    The node, its executor and rclpy are shut down by then and its files written; what is left
    is the finalisation of the extension modules (DDS, open3d, numba), 3.4 s of `run`'s 4.1 s
    from SIGINT to exit on 2 cores beside two CPU hogs, past ros2 launch's 5 s grace with more.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if run_atexit:
        atexit._run_exitfuncs()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def lidar_3d():
    """Run lidar_3d_node."""
    return _main('ubot_lidar_sim.ros.lidar_3d_node')


def laser_scan():
    """Run laser_scan_node."""
    return _main('ubot_lidar_sim.ros.laser_scan_node')


def terrain_sensor():
    """Run terrain_sensor_node."""
    return _main('ubot_lidar_sim.ros.terrain_sensor_node')


def demo_driver():
    """Run demo_driver_node."""
    return _main('ubot_lidar_sim.ros.demo.demo_driver_node')


def base_sim():
    """Run base_sim_node."""
    return _main('ubot_lidar_sim.ros.base_sim_node')
