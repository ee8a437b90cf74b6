#!/bin/sh
# Usage: run_pytest.sh PFSIM — runs tests/python and kernels/cases' scene tests.
# Under Bazel's sharding (TEST_TOTAL_SHARDS) each shard runs whole files, so a
# file's kernels compile in one shard only; shard_files.py balances the files
# by their measured time.
set -eu
export PFSIM_CACHE_DIR="${TEST_TMPDIR:-/tmp}/pfsim-cache"
export PYTHONDONTWRITEBYTECODE=1
[ -z "${TEST_SHARD_STATUS_FILE:-}" ] || touch "$TEST_SHARD_STATUS_FILE"
files=$(python3 tests/python/shard_files.py "${TEST_SHARD_INDEX:-0}" "${TEST_TOTAL_SHARDS:-1}" tests/python kernels/cases)
# shellcheck disable=SC2086
exec "$1" test $files -p no:cacheprovider -q -rfE \
    ${XML_OUTPUT_FILE:+--junitxml="$XML_OUTPUT_FILE"}
