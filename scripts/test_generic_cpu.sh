#!/usr/bin/env bash
# The core tests with numba compiling for a generic x86-64 (no SSE4 / AVX / FMA features), into a
# fresh cache, so that no tolerance depends on the host's vector width (issue 26, docs/NOTES.md).
# Numba keys its on-disk cache on the CPU name and features (codegen.magic_tuple), so the host's
# cache would not be loaded anyway; the fresh NUMBA_CACHE_DIR makes sure, and leaves it clean.
# Usage: scripts/test_generic_cpu.sh [--junitxml PATH] [pytest args]
set -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=/dev/null
source scripts/env.sh >/dev/null
cache=$(mktemp -d "${TMPDIR:-/tmp}/ubot_numba_generic.XXXXXX")
trap 'rm -rf "$cache"' EXIT
echo "test_generic_cpu: NUMBA_CPU_NAME=generic, NUMBA_CACHE_DIR=$cache: pytest test/core"
NUMBA_CPU_NAME=generic NUMBA_CPU_FEATURES= NUMBA_CACHE_DIR="$cache" \
  python -m pytest -q -p no:cacheprovider test/core "$@"
