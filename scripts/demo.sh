#!/usr/bin/env bash
# The headless demo (`make demo` runs this after bootstrap): all four nodes in one process over
# real DDS for DEMO_SECONDS, a live status line per sensor, PNG snapshots in out/demo/.
#   DEMO_SECONDS=30 DEMO_PRESET=velodyne_vlp16 scripts/demo.sh [extra runner arguments]
# DEMO_SUB_RAYS (default 1): sub-rays per 3D LiDAR beam. The presets model the beam footprint
# with 7, which costs ~5x the ray casting; the live demo uses 1 so that all sensors keep their
# rates on a 2-core machine. DEMO_SUB_RAYS=7 runs the full beam model. DEMO_ROBOTS (default 1):
# robots of a fleet, each on its own loop seeing the others (the status shows robot1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
export MPLBACKEND=Agg
if ! python -c 'import rclpy, ubot_lidar_sim_msgs' 2>/dev/null; then
  # shellcheck source=/dev/null
  source scripts/env.sh >/dev/null
fi
out_dir="${DEMO_OUT:-out/demo}"
mkdir -p "$out_dir"
# `python -m ubot_lidar_sim run` is the documented entry; the runner module is the same code.
entry=(-m ubot_lidar_sim run)
python -c 'import importlib.util as u, sys; sys.exit(u.find_spec("ubot_lidar_sim.__main__") is None)' \
  || entry=(-m ubot_lidar_sim.pipeline.run)
exec python "${entry[@]}" --seconds "${DEMO_SECONDS:-30}" \
  --preset "${DEMO_PRESET:-velodyne_vlp16}" --set "lidar_3d:sub_rays=${DEMO_SUB_RAYS:-1}" \
  --robots "${DEMO_ROBOTS:-1}" --snapshots "$out_dir" "$@"
