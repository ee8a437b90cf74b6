#!/bin/bash
# Usage: bench/python_speed.sh [RUNS] -- the cost of the Python layer: the
# onboard demo's scene test end to end through `pfsim test` (cold and warm
# compile cache), and one run of the same callable from Python on a persistent
# Worker against the same run from the CLI. Medians of RUNS (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prologue.sh
runs=${1:-5}
cache=$work/cache
scene=cases/prefetch_demo/test_prefetch_demo.py
demo=cases/prefetch_demo/case.toml
scene_cold=$(measure 1 "$bin" test "$scene" -q -p no:cacheprovider)
scene_warm=$(measure 0 "$bin" test "$scene" -q -p no:cacheprovider)
cli_run=$(measure 0 "$bin" run "$demo")
cli_check=$(measure 0 "$bin" check "$demo")
python_import=$(PYTHONPATH=$("$bin" python-path) measure 0 /usr/bin/python3 -c 'import torch, pfsim.testing')
# In one process: Worker start (process + SDMA warm-up), register (cached), and per-run wall time.
read -r start register run_ms <<<"$(PFSIM_CACHE_DIR=$cache PYTHONPATH=$("$bin" python-path) /usr/bin/python3 - "$runs" <<'EOF'
import os, statistics, sys, time
import torch, pfsim
runs = int(sys.argv[1])
base = "cases/prefetch_demo"
call = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/orchestration/prefetch_demo_orch.cpp", "function_name": "prefetch_demo_orchestration",
                      "config_name": "prefetch_demo_config", "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.OUT]},
    "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_prefetch_copy.cpp", "core_type": "aiv"}]}, base)
starts, registers, each = [], [], []
for _ in range(runs):
    t0 = time.perf_counter()
    with pfsim.Worker(enable_sdma=True) as w:
        t1 = time.perf_counter()
        h = w.register(call)
        t2 = time.perf_counter()
        src, out = torch.arange(128, dtype=torch.float32), torch.zeros(128)
        for _ in range(20):
            t = time.perf_counter()
            w.run(h, [src, out])
            each.append(time.perf_counter() - t)
    starts.append(t1 - t0)
    registers.append(t2 - t1)
print(f"{statistics.median(starts):.3f} {statistics.median(registers):.3f} {1e3 * statistics.median(each):.2f}")
EOF
)"
echo "runs: $runs (medians, wall seconds unless noted)"
echo "| what | wall |"
echo "|---|---|"
echo "| \`pfsim test\` the prefetch_demo scene test (2 workers: off, on), cold compile cache | $scene_cold s |"
echo "| the same, cached | $scene_warm s |"
echo "| of which: python3 importing torch and pfsim.testing | $python_import s |"
echo "| \`pfsim check\` the prefetch_demo case (2 child runs), cached | $cli_check s |"
echo "| \`pfsim run\` the prefetch_demo case (process, die, warm-up, one run), cached | $cli_run s |"
echo "| \`pfsim.Worker(enable_sdma=True)\` (device process, die, warm-up) | $start s |"
echo "| \`worker.register\` (cached) | $register s |"
echo "| \`worker.run\` on the persistent worker, per run | $run_ms ms |"
