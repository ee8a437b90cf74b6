#!/bin/bash
# Usage: bench/simpler_tests.sh SIMPLER_CHECKOUT [PFSIM] [TIMEOUT_SECONDS]
# Runs every a2a3 tensormap_and_ringbuffer example and system test of a simpler
# checkout (examples/a2a3/tensormap_and_ringbuffer, tests/st/a2a3/tensormap_and_ringbuffer)
# exactly as it is, one file at a time under `pfsim test` (prefetch off and on for
# each case), and prints one row per file: its outcome, pytest's counts, the wall
# time, the simulated time of its cases with prefetch off and on (summed over the
# cases, from the junit XML's properties), and the first error line of a file that
# did not pass. The checkout is not
# changed: each file runs from a copy of the checkout in a temporary folder.
# The last line counts the files that passed. Compiled kernels are cached in a
# fresh $PFSIM_CACHE_DIR shared by the files of one invocation.
# SIMPLER_TESTS_SKIP (an extended regular expression over the file's path) leaves
# the files it matches out, e.g. the long ones for a quick pass.
set -u -o pipefail
simpler=${1:?usage: simpler_tests.sh SIMPLER_CHECKOUT [PFSIM] [TIMEOUT_SECONDS]}
pfsim=${2:-bazel-bin/cli/pfsim}
limit=${3:-600}
pfsim=$(cd "$(dirname "$pfsim")" && pwd)/$(basename "$pfsim")
simpler=$(cd "$simpler" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PFSIM_CACHE_DIR=$work/cache
cp -r "$simpler" "$work/simpler"
cd "$work/simpler" || exit 2
passed=0
total=0
printf '%-72s %-8s %5s %5s %5s %7s %21s  %s\n' file outcome pass fail skip wall 'simulated-us-off/on' first-error
while IFS= read -r f; do
    total=$((total + 1))
    xml=$work/result.xml
    rm -f "$xml"
    start=$(date +%s.%N)
    timeout --kill-after=10 "$limit" "$pfsim" test "$f" -q -p no:cacheprovider --junitxml="$xml" \
        > "$work/out.txt" 2>&1
    rc=$?
    wall=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)")
    read -r np nf ns sim < <(python3 - "$xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1])
    s = next(root.iter("testsuite"))
    n, f, e, k = (int(s.get(a, 0)) for a in ("tests", "failures", "errors", "skipped"))
    off = on = 0.0
    for p in root.iter("property"):
        if p.get("name") == "pfsim_time_off_ns":
            off += float(p.get("value")) / 1e3
        elif p.get("name") == "pfsim_time_on_ns":
            on += float(p.get("value")) / 1e3
    print(n - f - e - k, f + e, k, f"{off:.1f}/{on:.1f}" if off else "-")
except Exception:
    print(0, 0, 0, "-")
EOF
)
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        outcome=timeout
    elif [ "$rc" -eq 0 ] && [ "$np" -gt 0 ]; then
        outcome=passed
        passed=$((passed + 1))
    elif [ "$rc" -eq 0 ] || [ "$rc" -eq 5 ]; then
        outcome=no-test
    else
        outcome=failed
    fi
    first=""
    if [ "$outcome" != passed ]; then
        first=$(grep -m1 -E '^E  |Error|error:|refused|lacks' "$work/out.txt" | sed 's/^E  *//' | cut -c1-150)
    fi
    printf '%-72s %-8s %5s %5s %5s %7s %21s  %s\n' "$f" "$outcome" "$np" "$nf" "$ns" "$wall" "$sim" "$first"
done < <(find examples/a2a3/tensormap_and_ringbuffer tests/st/a2a3/tensormap_and_ringbuffer -name 'test_*.py' | sort |
          { if [ -n "${SIMPLER_TESTS_SKIP:-}" ]; then grep -Ev "$SIMPLER_TESTS_SKIP"; else cat; fi; })
echo "$passed of $total files passed"
