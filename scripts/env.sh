# Source this file (bash): puts the venv and the built workspace on the environment, so that Python
# sees rclpy, ubot_lidar_sim and ubot_lidar_sim_msgs and the node executables are on PATH.
#   source scripts/env.sh                    # the default build: Kilted (.venv, install/)
#   ROS_DISTRO=jazzy source scripts/env.sh   # the Jazzy build (.venv-jazzy, install-jazzy/)
# UBOT_INSTALL is left set to the install directory (the tests start its executables).
UBOT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/distro.sh
. "$UBOT_ROOT/scripts/distro.sh"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
if [ -f "$UBOT_VENV/bin/activate" ]; then
  # shellcheck source=/dev/null
  . "$UBOT_VENV/bin/activate"
  export CMAKE_PREFIX_PATH="$UBOT_VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export AMENT_PREFIX_PATH="$UBOT_VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"
  # The wheels set no ROS_DISTRO; a sourced ROS 2 has set its own already.
  if [ -n "$UBOT_SUFFIX" ]; then export ROS_DISTRO=jazzy; fi
else
  echo "scripts/env.sh: no $(basename "$UBOT_VENV") yet: run 'make build${UBOT_SUFFIX:+ ROS_DISTRO=jazzy}' first" >&2
fi
if [ -f "$UBOT_INSTALL/setup.bash" ]; then
  # shellcheck source=/dev/null
  . "$UBOT_INSTALL/setup.bash"
  export PATH="$UBOT_INSTALL/ubot_lidar_sim/lib/ubot_lidar_sim:$PATH"
  export UBOT_INSTALL
else
  echo "scripts/env.sh: no $(basename "$UBOT_INSTALL")/ yet: run 'make build${UBOT_SUFFIX:+ ROS_DISTRO=jazzy}' first" >&2
fi
unset UBOT_ROOT UBOT_SUFFIX UBOT_ROS_WHEELS UBOT_ROS_PINS UBOT_VENV UBOT_BUILD UBOT_WS UBOT_LOG
