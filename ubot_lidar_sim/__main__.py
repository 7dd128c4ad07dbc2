"""``python -m ubot_lidar_sim {scan,presets,describe,dataset,run}``."""

import sys

from ubot_lidar_sim.pipeline.interrupts import deferred, exit_code

try:
    # A Ctrl-C while open3d, numba and rclpy load would print an import traceback or a page of
    # Open3D warnings: it is held until the imports are done, then ends the command.
    with deferred():
        from ubot_lidar_sim.cli import main as cli_main
        from ubot_lidar_sim.pipeline.run import main as run_main
except KeyboardInterrupt as exc:
    print('ubot_lidar_sim: interrupted', file=sys.stderr)
    sys.exit(exit_code(exc))


def main(argv=None):
    """Dispatch ``run`` to the ROS runner and the rest to the offline CLI."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == 'run':
        return run_main(argv[1:])
    return cli_main(argv)


if __name__ == '__main__':
    code = main()
    if sys.argv[1:2] == ['run']:
        from ubot_lidar_sim.ros.entry import quick_exit
        quick_exit(code)        # no slow teardown of DDS, open3d, numba after a clean stop
    sys.exit(code)
