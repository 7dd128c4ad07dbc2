#!/usr/bin/env bash
# colcon test + colcon test-result, then the plain "N passed, N failed" line CI counts.
# ROS_DISTRO=jazzy: the same suite on the Jazzy build (scripts/distro.sh).
# TEST_PART=release_dependent: only the tests that depend on the ROS release (test/release_part.py:
# they import rclpy or a ROS package, or start a ROS process); .ci/run runs Jazzy so, and this
# script says what it leaves out. Unset: every test.
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=/dev/null
source scripts/env.sh >/dev/null
UBOT_ROOT="$ROOT"
# shellcheck source=scripts/distro.sh
. scripts/distro.sh
export COLCON_LOG_PATH="$UBOT_LOG"
RESULTS="$UBOT_BUILD/ubot_lidar_sim"
rm -rf "$RESULTS/test_results" "$RESULTS/pytest.xml"
# The test-only interface packages (test/support: a livox_ros_driver2 stand-in), apart from
# install/ so that users never get them; the CustomMsg tests fail (not skip) without them.
scripts/build_test_interfaces.sh || exit 1
# shellcheck source=/dev/null
source "$UBOT_WS/test_interfaces/install/local_setup.bash"
export UBOT_TEST_INTERFACES=1
part=()
if [ -n "${TEST_PART:-}" ]; then
  [ "$TEST_PART" = release_dependent ] || { echo "run_tests: TEST_PART=$TEST_PART: only release_dependent is known" >&2; exit 2; }
  part=(-m release_dependent)
  echo "run_tests: TEST_PART=release_dependent: the tests that depend on the ROS release; not run: the release-independent ones (they never import rclpy nor start a ROS process: test/release_part.py), pytest's 'deselected' count below, and the generic-CPU rerun of test/core"
fi
colcon test --base-paths . ubot_lidar_sim_msgs --packages-select ubot_lidar_sim \
  --build-base "$UBOT_BUILD" --install-base "$UBOT_INSTALL" \
  --event-handlers console_direct+ --pytest-args -p no:cacheprovider "${part[@]}"
# The core tests again, numba compiled for a generic CPU (issue 26); counted in the line below.
[ ${#part[@]} -gt 0 ] || scripts/test_generic_cpu.sh --junitxml "$RESULTS/test_results/generic_cpu/pytest.xml"
colcon test-result --verbose --test-result-base "$RESULTS"
rc=$?
UBOT_RESULTS="$RESULTS" python - <<'PY'
import glob
import os
import sys
import xml.etree.ElementTree as ET

tests = failed = skipped = 0
for path in glob.glob(os.environ['UBOT_RESULTS'] + '/**/*.xml', recursive=True):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        continue
    for suite in root.iter('testsuite'):
        tests += int(suite.get('tests', 0))
        failed += int(suite.get('failures', 0)) + int(suite.get('errors', 0))
        skipped += int(suite.get('skipped', 0))
if tests == 0:
    print('no test results found: pytest ran no test', file=sys.stderr)
    failed = max(failed, 1)
passed = tests - failed - skipped
line = f'{passed} passed, {failed} failed'
print(line + (f', {skipped} skipped' if skipped else ''))
sys.exit(1 if failed else 0)
PY
py_rc=$?
[ $rc -eq 0 ] && [ $py_rc -eq 0 ]
