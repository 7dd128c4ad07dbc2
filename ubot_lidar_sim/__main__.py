"""``python -m ubot_lidar_sim {scan,describe,presets,dataset,run}`` (cli/ dispatches)."""

import sys

from ubot_lidar_sim.cli import main


if __name__ == '__main__':
    code = main()
    if sys.argv[1:2] == ['run']:
        from ubot_lidar_sim.ros.entry import quick_exit
        quick_exit(code)        # no slow teardown of DDS, open3d, numba after a clean stop
    sys.exit(code)
