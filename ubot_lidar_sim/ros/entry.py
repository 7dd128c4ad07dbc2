"""
The node executables' entry points: a signal while the node's module still imports ends it quietly.

A console script imports its module (rclpy, numba, open3d: a few seconds on a busy machine)
before any of the node's code runs, so a Ctrl-C then printed a KeyboardInterrupt traceback. Here
SIGINT and SIGTERM are only noted while the module imports; when one came, the process exits 0
(as run_node does for a signal) without starting the node. Then run_node takes the signals over.
"""

import atexit
import importlib
import os
import signal
import sys


def _main(module):
    """Import module with the signals held, then return its main()'s exit code (0 if signalled)."""
    came = []
    held = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, lambda signum, _frame: came.append(signum)) for s in held}
    try:
        node_module = importlib.import_module(module)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    if came:
        return 0
    quick_exit(node_module.main())


def quick_exit(code):
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
