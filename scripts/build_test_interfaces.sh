#!/usr/bin/env bash
# Build the test-only interface packages (test/support/: a livox_ros_driver2 stand-in with
# CustomMsg and CustomPoint) into .ws/test_interfaces (.ws-jazzy/... for ROS_DISTRO=jazzy), apart
# from install/: users never get them. Rebuilds only when a file under test/support changed.
# Needs scripts/env.sh sourced. Then: source .ws/test_interfaces/install/local_setup.bash
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
UBOT_ROOT="$ROOT"
# shellcheck source=scripts/distro.sh
. scripts/distro.sh
export COLCON_LOG_PATH="$UBOT_LOG"
WS="$UBOT_WS/test_interfaces"
want=$(find test/support -type f -print0 | sort -z | xargs -0 sha1sum | sha1sum | cut -c1-16)
if [ -f "$WS/.stamp" ] && [ "$(cat "$WS/.stamp")" = "$want" ]; then
  exit 0
fi
rm -rf "$WS"
mkdir -p "$WS"
colcon build --base-paths test/support/livox_ros_driver2 --build-base "$WS/build" \
  --install-base "$WS/install" --cmake-args -DBUILD_TESTING=OFF \
  --event-handlers console_cohesion- summary- >"$WS/colcon-build.log" 2>&1 \
  || { tail -n 5 "$WS/colcon-build.log" >&2; echo "build_test_interfaces: colcon build failed: see $WS/colcon-build.log" >&2; exit 1; }
echo "$want" >"$WS/.stamp"
