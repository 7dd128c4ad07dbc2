"""``python -m ubot_lidar_sim {scan,presets,describe,dataset,run}``."""

import signal
import sys

# Ctrl-C while the heavy modules load (numba, open3d, rclpy: a few seconds) would end in an
# import traceback, or an ImportError when it lands inside a C extension's initialisation.
# Note it instead, and act on it once the imports are done.
_early_sigint = []
signal.signal(signal.SIGINT, lambda signum, frame: _early_sigint.append(signum))

from ubot_lidar_sim.cli import main as cli_main  # noqa: E402 (after the handler)
from ubot_lidar_sim.ros.demo.runner import main as run_main  # noqa: E402

signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv=None):
    """Dispatch ``run`` to the ROS runner (imported lazily) and the rest to the offline CLI."""
    if _early_sigint:
        print('ubot_lidar_sim: interrupted while starting', file=sys.stderr)
        return 130
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == 'run':
        return run_main(argv[1:])
    return cli_main(argv)


if __name__ == '__main__':
    sys.exit(main())
