#!/bin/bash
# Usage: bench/test_cpu.sh [BAZEL TEST ARGS...] -- where the CPU of a
# `bazel test` goes (docs/testing.md, "What it costs").
#
# Runs `bazel test ARGS` (default //...) with every test under bench/cpu_time.py
# (its user and system CPU seconds, every process it started included) and with
# the kernel compiler logged (PFSIM_CXX: bench/logging_cxx.sh), then prints a line a
# test that ran: CPU seconds, wall seconds, kernel compiles, their CPU seconds,
# and the compiles of a key its cache had built before (a repeated build).
# The flags change every test's cache key: the first such run runs every test.
# With PFSIM_COLD=1 the logging compiler is a fresh copy at a new path, which is
# in every kernel's cache key: each test compiles as on a fresh machine (add
# --nocache_test_results to rerun tests whose results Bazel holds).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
[ $# -gt 0 ] || set -- //...
cxx="$here/logging_cxx.sh"
if [ "${PFSIM_COLD:-}" = 1 ]; then
    cold=$(mktemp -d)
    trap 'rm -rf "$cold"' EXIT
    cp "$cxx" "$cold/"
    cxx="$cold/logging_cxx.sh"
fi
bazel test "$@" --run_under="$here/cpu_time.py" --test_env=PFSIM_CXX="$cxx"
rc=$?
testlogs=$(bazel info bazel-testlogs)
printf '%-46s %7s %7s %8s %7s %9s\n' target cpu_s wall_s compiles cxx_s repeated
for log in $(grep -rl "^cpu_time:" "$testlogs" --include=test.log); do
    dir=$(dirname "$log")
    target=${dir#"$testlogs"/}
    zip="$dir/test.outputs/outputs.zip"
    compiles=$( (unzip -p "$zip" pfsim_cxx.log 2>/dev/null || true) | awk '
        / -c / && $4 != "--version" {
            for (i = 4; i <= NF; i++) if ($i == "-o") o = $(i + 1)
            sub(/\.tmp\..*/, "", o); n++; cpu += $1 + $2; if (seen[o]++) d++
        }
        END { printf "%d %.1f %d", n, cpu, d }')
    grep "^cpu_time:" "$log" | tail -1 | awk -v t="$target" -v c="$compiles" '
        { split(c, x, " "); printf "%-46s %7.1f %7.1f %8d %7.1f %9d\n", t, $3 + $6, $9, x[1], x[2], x[3] }'
done | sort -k2 -n -r
exit $rc
