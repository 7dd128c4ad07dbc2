"""``python -m ubot_lidar_sim {scan,describe,presets,dataset,run}`` (cli/ dispatches)."""

import sys

from ubot_lidar_sim.cli import main


if __name__ == '__main__':
    sys.exit(main())
