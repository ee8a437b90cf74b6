#!/bin/bash
# Usage: bench/field_warm.sh [work] — the field's use of prefetch as a case: the
# cross-task weight warm (cases/weight_warm) scaled to the published
# workload shape, a ~150 MB fire-and-forget warm beside ~0.55 ms of compute
# (pypto-lib #963), and the 256 MiB warm of case_oversize (more than the L2).
# Prints, per case, the graph's time and the consumer task's time with
# prefetch off and on. About 10 s on 2 cores (four runs).
# `work`: instead, the 8 MiB case with the consumer doing 1 to 64 vector passes
# over each tile it loads (--arg work=N), from bandwidth-bound to compute-bound,
# then the 150 MB warm at work=6 and 8 (about 30 s). docs/calibration.md
# records both outputs.
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
