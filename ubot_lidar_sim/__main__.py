"""``python -m ubot_lidar_sim {scan,presets,describe,run}``."""

import sys

from ubot_lidar_sim.cli import main as cli_main
from ubot_lidar_sim.ros.demo.runner import main as run_main


def main(argv=None):
    """Dispatch ``run`` to the ROS runner (imported lazily) and the rest to the offline CLI."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == 'run':
        return run_main(argv[1:])
    return cli_main(argv)


if __name__ == '__main__':
    sys.exit(main())
