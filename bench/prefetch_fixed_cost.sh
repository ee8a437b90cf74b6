#!/bin/bash
# Usage: bench/prefetch_fixed_cost.sh [BYTES...] — where the fixed cost of one
# prefetch + wait goes. For each size (default 4KiB 1MiB) it times the
# prefetch_wait kernel with the session build (rounds=1 less rounds=0) and with
# the session already built (rounds=2 less rounds=1), then again with each cost
# of the path set to zero: the difference is that part's share (parts overlap,
# so shares need not add up to the total). Prints a Markdown table; the
# decomposition in docs/calibration.md is this script's output.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //:pfsim >/dev/null 2>&1
bin=bazel-bin/cli/pfsim
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(4KiB 1MiB)
time_ns() {  # BYTES ROUNDS SET...
    local bytes=$1 rounds=$2
    shift 2
    "$bin" run prefetch_wait --arg "bytes=$bytes" --arg "rounds=$rounds" "$@" --json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["kernel_time_ns"])'
}
parts=(
    "session build + post: dcci of the whole data cache|core.flush_cost=1ps"
    "post: dcci of the flag request's line|core.dcci_line_cost=1ps"
    "post: building the requests|core.request_build=1ps"
    "doorbell to the engine|sdma.doorbell_latency=1ps"
    "engine: per-request start-up (fetch, decode, burst)|sdma.request_startup=1ps"
    "core: set-up of each GM<->UB transfer (control words, polls)|core.transfer_setup=1ps"
    "GM read latency (requests, record, flag copy, prefetched lines)|gm.read_latency=1ps"
    "L2 miss latency|l2.miss_latency=1ps"
)
for bytes in "${sizes[@]}"; do
    echo "### prefetch_wait --arg bytes=$bytes"
    echo
    echo "| part | with session build, ns | session built, ns |"
    echo "|---|---|---|"
    measure() {  # SET... -> "with_build built"
        local r0 r1 r2
        r0=$(time_ns "$bytes" 0 "$@")
        r1=$(time_ns "$bytes" 1 "$@")
        r2=$(time_ns "$bytes" 2 "$@")
        python3 -c "print($r1 - $r0, $r2 - $r1)"
    }
    read -r total_b total_s < <(measure)
    printf '| **total** | %.0f | %.0f |\n' "$total_b" "$total_s"
    for p in "${parts[@]}"; do
        read -r b s < <(measure --set "${p#*|}")
        printf '| %s (`%s`) | %.0f | %.0f |\n' "${p%|*}" "${p#*|}" "$(python3 -c "print($total_b - $b)")" \
            "$(python3 -c "print($total_s - $s)")"
    done
    echo
done
