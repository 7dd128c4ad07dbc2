"""``describe --list-materials``: the world is loaded (open3d with it) to report its materials."""

from ubot_lidar_sim.cli.describe import run_describe
from ubot_lidar_sim.core.world.world import load_for_config


def command(args, checked=None):
    """Print the effective settings and the world's materials as JSON; return 0."""
    print(run_describe(args, lambda cfg: load_for_config(cfg)[0].sdf_report))
    return 0
