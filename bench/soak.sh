#!/bin/bash
# Usage: bench/soak.sh [RUNS] [LINE_ACCESSES] -- long runs keep their memory flat.
#  1. RUNS (default 1000) consecutive runs through one persistent Python Worker
#     (one `pfsim device` process, SDMA on), prefetch on and off in turn, each
#     output checked: of the onboard demo's callable, then of vector_chain's
#     (three tasks, runtime-allocated intermediates); the device process's RSS
#     after run 1, 10, 100 and every RUNS/10 runs, and its growth from run 100.
#  2. One `pfsim replay` of LINE_ACCESSES (default 10^8) streaming line
#     accesses over 512 MiB of GM, its RSS sampled every second: the growth
#     after the first pass over GM has touched its pages.
# docs/performance.md records the results.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prologue.sh
runs=${1:-1000}
lines=${2:-100000000}
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

echo "== $runs runs through one Worker, twice"
PFSIM_CACHE_DIR=$work/cache PYTHONPATH=$("$bin" python-path) /usr/bin/python3 - "$runs" <<'PY'
import sys, time
import torch, pfsim
D = pfsim.ArgDirection
runs = int(sys.argv[1])
demo = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/orchestration/prefetch_demo_orch.cpp", "function_name": "prefetch_demo_orchestration",
                      "config_name": "prefetch_demo_config", "signature": [D.IN, D.OUT]},
    "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_prefetch_copy.cpp", "core_type": "aiv"}]},
    "cases/prefetch_demo")
chain = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/orchestration/vector_chain_orch.cpp", "signature": [D.IN, D.IN, D.OUT]},
    "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_add.cpp", "core_type": "aiv"},
                {"func_id": 1, "source": "kernels/aiv/kernel_scale.cpp", "core_type": "aiv"}]},
    "cases/vector_chain")

def demo_run(w, h, i):
    src, out = torch.arange(128, dtype=torch.float32) + i, torch.zeros(128)
    w.run(h, [src, out], prefetch=(i % 2 == 0))
    return torch.equal(out, src)

def chain_run(w, h, i):  # three dependent tasks, their intermediates allocated by the runtime
    a, b, out = torch.arange(16384, dtype=torch.float32) + i, torch.ones(16384), torch.zeros(16384)
    w.run(h, [a, b, out, 4], prefetch=(i % 2 == 0))
    return torch.equal(out, 2 * (a + b) + a)

def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024

marks = sorted({1, 10, 100, *range(runs // 10, runs + 1, max(1, runs // 10))} - {0})
for name, callable_, one in (("prefetch_demo (one task, SDMA)", demo, demo_run),
                             ("vector_chain (three tasks, runtime-allocated intermediates)", chain, chain_run)):
    print(f"-- {name}")
    seen = {}
    t0 = time.perf_counter()
    with pfsim.Worker(enable_sdma=True) as w:
        h = w.register(callable_)
        for i in range(1, runs + 1):
            assert one(w, h, i), f"{name}: run {i}: wrong output"
            if i in marks:
                seen[i] = rss_mib(w.pid)
                print(f"after run {i:5d}: device RSS {seen[i]:7.1f} MiB, {time.perf_counter() - t0:6.1f} s", flush=True)
    first = 100 if 100 in seen else min(seen)
    print(f"device RSS growth from run {first} to run {runs}: {seen[runs] - seen[first]:+.1f} MiB "
          f"({(seen[runs] - seen[first]) * 1024 / max(1, runs - first):+.2f} KiB a run)")
PY

echo "== replay of $lines streaming line accesses over 512 MiB"
python3 bench/gen_trace.py "$work/soak.trace" --lines "$lines" --pattern stream
"$bin" replay "$work/soak.trace" --json >"$work/replay.json" &
pid=$!
samples=()
while kill -0 "$pid" 2>/dev/null; do
    samples+=("$(rss_kib "$pid")")
    sleep 1
done
wait "$pid"
python3 - "$work/replay.json" "${samples[@]}" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
rss = [int(s) / 1024 for s in sys.argv[2:] if int(s) > 0]
n = len(rss)
print(f"{summary['line_accesses']} line accesses; GM touched {summary['gm']['touched_bytes'] >> 20} MiB; {n} samples")
for q in (0.1, 0.25, 0.5, 0.75, 1.0):
    print(f"  RSS at {int(q * 100):3d} % of the run: {rss[max(0, int(q * n) - 1)]:7.1f} MiB")
print(f"replay RSS growth from 25 % to the end: {rss[-1] - rss[max(0, n // 4 - 1)]:+.1f} MiB (peak {max(rss):.1f} MiB)")
PY
