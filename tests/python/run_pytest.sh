#!/bin/sh
# Usage: run_pytest.sh PFSIM PATH... — runs the test files or folders PATH
# (tests/python/BUILD says which part runs which).
set -eu
pfsim=$1
shift
export PFSIM_CACHE_DIR="${TEST_TMPDIR:-/tmp}/pfsim-cache"
export PYTHONDONTWRITEBYTECODE=1
exec "$pfsim" test "$@" -p no:cacheprovider -q -rfE \
    ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"}
