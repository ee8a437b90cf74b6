#!/bin/sh
# Usage: run_pytest.sh PFSIM PATH... — runs the test files or folders PATH
# (tests/python/BUILD says which part runs which).
set -eu
pfsim=$1
shift
# The compile cache every test shares and keeps across runs (docs/testing.md,
# "What it costs"): pfsim's own default when HOME is unset, as under Bazel. A
# kernel no change reached is not compiled again.
export PFSIM_CACHE_DIR="/tmp/pfsim-cache-$(id -u)"
# Bazel runs a test per core already: devices keep their tile arithmetic on one
# thread, as `check`'s side-by-side children do, unless the caller chose (the
# tests of the helper thread set it themselves).
export PFSIM_TILE_THREADS="${PFSIM_TILE_THREADS:-1}"
export PYTHONDONTWRITEBYTECODE=1
exec "$pfsim" test "$@" -p no:cacheprovider -q -rfE \
    ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"}
