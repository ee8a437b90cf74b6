#!/bin/bash
# Benchmark: every kernel (default arguments) on the TLM model and with the RTL
# blocks in the loop (sdma.frontend=rtl, l2.tags=rtl, both): kernel time, its
# ratio to the TLM model's, whether outputs and L2/SDMA counts are identical,
# and the median wall time of RUNS runs. Prints a Markdown table; docs/rtl.md
# records the result.
# usage: bench/rtl_in_loop.sh [RUNS]   (default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
source bench/prologue.sh
echo
echo "| kernel | RTL in the loop | kernel time (us) | vs TLM | outputs and counts | wall (s, median of $runs) |"
echo "|---|---|---:|---:|---|---:|"
for kernel in prefetch_demo prefetch_wait no_gain matmul_tiled gather_rows gemv_stream; do
    for mode in tlm sdma l2 both; do
        case $mode in
            tlm) sets="" ;;
            sdma) sets="--set sdma.frontend=rtl" ;;
            l2) sets="--set l2.tags=rtl" ;;
            both) sets="--set sdma.frontend=rtl --set l2.tags=rtl" ;;
        esac
        for i in $(seq "$runs"); do
            # shellcheck disable=SC2086
            /usr/bin/time -f '%e' -o "$work/t" "$bin" run "$kernel" $sets --json >"$work/$mode.json" 2>/dev/null
            cat "$work/t"
        done | median >"$work/$mode.wall"
        python3 - "$kernel" "$mode" "$work" <<'PY'
import json, sys
kernel, mode, work = sys.argv[1:]
d = json.load(open(f"{work}/{mode}.json"))
t = json.load(open(f"{work}/tlm.json"))
wall = open(f"{work}/{mode}.wall").read().strip()
def key(s):
    return ([o["sha256"] for o in s["outputs"]],
            {k: s["l2"][k] for k in ("hits", "misses", "writebacks", "prefetch_lines", "prefetch_resident")},
            {k: s["sdma"][k] for k in ("requests", "prefetch_bytes", "copy_bytes", "channel_errors")})
same = "identical" if key(d) == key(t) and d["reference_equal"] else "DIFFER"
ratio = d["kernel_time_ns"] / t["kernel_time_ns"]
label = {"tlm": "none (TLM)", "sdma": "SDMA front-end", "l2": "L2 tags", "both": "both"}[mode]
print(f"| {kernel if mode == 'tlm' else ''} | {label} | {d['kernel_time_ns'] / 1e3:.3f} | {ratio:.4f} | {same} | {wall} |")
PY
    done
done
