#!/bin/bash
# Usage: bench/field_warm.sh [work] — the field's use of prefetch as a case: the
# cross-task weight warm (cases/weight_warm) scaled to the published
# workload shape, a ~150 MB fire-and-forget warm beside ~0.55 ms of compute
# (pypto-lib #963), and the 256 MiB warm of case_oversize (more than the L2).
# Prints, per case, the graph's time and the consumer task's time with
# prefetch off and on. About 10 s on 2 cores (four runs).
# `work`: instead, the 8 MiB case with the consumer doing 1 to 64 vector passes
# over each tile it loads (--arg work=N), from bandwidth-bound to compute-bound,
# then the 150 MB warm at work=6 and 8 (about 30 s).
# `sizes`: the warm set from 32 MiB to 320 MiB, across the 192 MiB L2, with the
# cube task's steps scaled so that its compute covers the warm at the engine's
# rate (2000 steps per 150 MB, as the 150 MB row), plus the warm task's time
# when it completes with its prefetch (case_deferred: deferred completion, its
# consumer then waits for it). docs/calibration.md records the outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //:pfsim >/dev/null 2>&1
bin=bazel-bin/cli/pfsim
dir=cases/weight_warm
report() {  # LABEL CASE ARGS...
    local label=$1 case=$2
    shift 2
    local off on
    off=$(mktemp) on=$(mktemp)
    "$bin" run "$case" "$@" --prefetch off --json >"$off"
    "$bin" run "$case" "$@" --json >"$on"
    python3 - "$label" "$off" "$on" <<'PY'
import json, sys
label, off, on = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
def consumer(j):  # the last task: the row-sum over the warmed weights
    t = j["tasks"][-1]
    return (t["end_ns"] - t["start_ns"]) / 1e3
def warm(j):  # the warm task's core time
    t = j["tasks"][1]
    return (t["end_ns"] - t["start_ns"]) / 1e3
g_off, g_on = off["kernel_time_ns"] / 1e3, on["kernel_time_ns"] / 1e3
print(f"| {label} | {g_off:.1f} | {g_on:.1f} | {100 * (g_off - g_on) / g_off:+.1f} % | "
      f"{consumer(off):.1f} | {consumer(on):.1f} | {100 * (consumer(off) - consumer(on)) / consumer(off):+.1f} % | "
      f"{warm(on):.2f} | {on['l2']['hits'] / (on['l2']['hits'] + on['l2']['misses']):.3f} |")
PY
    rm -f "$off" "$on"
}
if [ "${1:-}" = sizes ]; then
    echo "| warm set | graph off, us | graph on, us | gain | consumer off, us | consumer on, us | consumer gain | warm task, us | L2 hit rate on | deferred warm task, us |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for mib in 32 64 128 143 176 192 224 256 320; do
        rows=$((mib * 64))             # 16 KiB per row
        iters=$((rows * 2000 / 9152))  # the 150 MB row's compute per byte
        args=(--arg rows=$rows --arg iters=$iters)
        line=$(report "$mib MiB" "$dir/case.toml" "${args[@]}")
        deferred=$("$bin" run "$dir/case_deferred.toml" "${args[@]}" --json |
            python3 -c 'import json, sys; t = json.load(sys.stdin)["tasks"][1]; print("%.1f" % ((t["end_ns"] - t["start_ns"]) / 1e3))')
        echo "$line $deferred |"
    done
    exit 0
fi
echo "| case | graph off, us | graph on, us | gain | consumer off, us | consumer on, us | consumer gain | warm task, us | L2 hit rate on |"
echo "|---|---|---|---|---|---|---|---|---|"
if [ "${1:-}" = work ]; then
    for work in 1 2 4 8 16 32 64; do
        report "8 MiB warm, work=$work" "$dir/case.toml" --arg work="$work"
    done
    for work in 6 8; do
        report "150 MB warm, work=$work" "$dir/case.toml" --arg rows=9152 --arg iters=2000 --arg work="$work"
    done
    exit 0
fi
report "150 MB warm (rows=9152, iters=2000)" "$dir/case.toml" --arg rows=9152 --arg iters=2000
report "256 MiB warm, larger than L2 (case_oversize)" "$dir/case_oversize.toml"
