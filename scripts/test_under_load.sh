#!/usr/bin/env bash
# make test-under-load: `make test` (scripts/run_tests.sh) with two CPU hogs on the same cores
# for its whole length. The hogs are this script's children, killed on every exit (a pass, a
# failure, Ctrl-C). HOGS (default 2) sets their number. Prints the wall time at the end.
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
HOGS=${HOGS:-2}
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${hogs[@]}"; do
    wait "$pid" 2>/dev/null
  done
  hogs=()
}
trap stop_hogs EXIT
trap 'stop_hogs; exit 130' INT
trap 'stop_hogs; exit 143' TERM
for _ in $(seq 1 "$HOGS"); do
  python3 -c 'while 1: pass' &
  hogs+=("$!")
done
echo "test-under-load: ${#hogs[@]} CPU hogs (pids ${hogs[*]}) beside make test"
start=$(date +%s)
scripts/run_tests.sh
rc=$?
echo "test-under-load: $(( $(date +%s) - start )) s with ${#hogs[@]} CPU hogs, exit $rc"
exit $rc
