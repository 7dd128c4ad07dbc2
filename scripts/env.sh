# Source this file (bash): puts .venv and the built workspace on the environment, so that Python
# sees rclpy, ubot_lidar_sim and ubot_lidar_sim_msgs and the node executables are on PATH.
#   source scripts/env.sh
_ubot_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
if [ -f "$_ubot_root/.venv/bin/activate" ]; then
  # shellcheck source=/dev/null
  . "$_ubot_root/.venv/bin/activate"
  export CMAKE_PREFIX_PATH="$_ubot_root/.venv${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export AMENT_PREFIX_PATH="$_ubot_root/.venv${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
else
  echo "scripts/env.sh: no .venv yet: run 'make build' first" >&2
fi
if [ -f "$_ubot_root/install/setup.bash" ]; then
  # shellcheck source=/dev/null
  . "$_ubot_root/install/setup.bash"
  export PATH="$_ubot_root/install/ubot_lidar_sim/lib/ubot_lidar_sim:$PATH"
else
  echo "scripts/env.sh: no install/ yet: run 'make build' first" >&2
fi
unset _ubot_root
