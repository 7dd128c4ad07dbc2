# Sourced (bash) by bootstrap.sh, env.sh, run_tests.sh and build_test_interfaces.sh: the ROS release
# this checkout builds and tests, and its directories, so that Kilted and Jazzy builds coexist.
#   ROS_DISTRO=jazzy  -> the Jazzy wheels (requirements-jazzy.txt) in .venv-jazzy, build-jazzy/,
#                        install-jazzy/, log-jazzy/, .ws-jazzy/
#   anything else     -> the default, Kilted (requirements-ros.txt) in .venv, build/, install/, log/,
#                        .ws/ (or a sourced ROS 2 of that name: scripts/bootstrap.sh)
# Needs UBOT_ROOT set to the checkout.
if [ "${ROS_DISTRO:-}" = jazzy ]; then
  UBOT_SUFFIX=-jazzy
  UBOT_ROS_WHEELS=requirements-jazzy.txt
  UBOT_ROS_PINS=constraints-jazzy.txt
else
  UBOT_SUFFIX=
  UBOT_ROS_WHEELS=requirements-ros.txt
  UBOT_ROS_PINS=
fi
UBOT_VENV="$UBOT_ROOT/.venv$UBOT_SUFFIX"
UBOT_BUILD="$UBOT_ROOT/build$UBOT_SUFFIX"
UBOT_INSTALL="$UBOT_ROOT/install$UBOT_SUFFIX"
UBOT_WS="$UBOT_ROOT/.ws$UBOT_SUFFIX"
# The scripts give it to colcon as COLCON_LOG_PATH (env.sh does not: a user's other workspaces
# keep their own log directories).
UBOT_LOG="$UBOT_ROOT/log$UBOT_SUFFIX"
