#!/bin/sh
# Usage: run_pytest.sh PFSIM — runs tests/python and cases' scene tests.
set -eu
export PFSIM_CACHE_DIR="${TEST_TMPDIR:-/tmp}/pfsim-cache"
export PYTHONDONTWRITEBYTECODE=1
exec "$1" test tests/python cases -p no:cacheprovider -q -rfE \
    ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"}
