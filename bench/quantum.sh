#!/bin/bash
# Benchmark of a simulation setting: how results move with core.quantum (how far
# a core may run ahead of SystemC time), which should move none of them. Per
# quantum: a GM-bound 32-block row-sum over 4 MiB each (the task's time), the
# 256 MiB warm larger than the L2 (graph gain and its row-sum with prefetch on),
# and calibrate's same_address ratio. About a minute on 2 cores;
# docs/calibration.md ("Limits of the fits") records its output.
# usage: bench/quantum.sh [QUANTUM ...]   (default 0.1us 0.25us 0.5us 1us 2us 4us)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prologue.sh
quanta=("$@")
[ ${#quanta[@]} -gt 0 ] || quanta=(0.1us 0.25us 0.5us 1us 2us 4us)
json() { "$bin" run "$@" --json 2>/dev/null; }
printf '%-8s %14s %9s %18s %14s\n' quantum "row-sum us" "warm gain" "warm row-sum us" same_address
for q in "${quanta[@]}"; do
    set_q=(--set "core.quantum=$q")
    json cases/weight_warm/case.toml --prefetch off --arg blocks=32 --arg rows=8192 "${set_q[@]}" >"$work/rowsum"
    json cases/weight_warm/case_oversize.toml --prefetch off "${set_q[@]}" >"$work/off"
    json cases/weight_warm/case_oversize.toml "${set_q[@]}" >"$work/on"
    stream=(calib_stream --arg cores=48 --arg bytes=1MiB --arg warm=1 "${set_q[@]}")
    json "${stream[@]}" >"$work/own"
    json "${stream[@]}" --arg shared=1 >"$work/shared"
    python3 - "$q" "$work" <<'PY'
import json, sys
q, w = sys.argv[1], sys.argv[2]
load = lambda name: json.load(open(f"{w}/{name}"))
span = lambda t: (t["end_ns"] - t["start_ns"]) / 1e3
off, on = load("off"), load("on")
gain = 100 * (off["kernel_time_ns"] - on["kernel_time_ns"]) / off["kernel_time_ns"]
ratio = load("shared")["timed_pass"]["ns"] / load("own")["timed_pass"]["ns"]
print(f"{q:<8} {span(load('rowsum')['tasks'][2]):14.1f} {gain:+8.1f}% {span(on['tasks'][-1]):18.1f} {ratio:14.3f}")
PY
done
