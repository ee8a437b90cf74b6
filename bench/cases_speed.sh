#!/bin/bash
# Usage: bench/cases_speed.sh [RUNS] -- the cost of running users' sources:
# compiling one kernel with a cold and a warm cache, the onboard demo's case end
# to end (cold and warm), the same case by its name, and a 500-task
# graph (tasks scheduled per wall second). Medians of RUNS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prologue.sh
runs=${1:-3}
cache=$work/cache
kernel=cases/vector_chain/kernels/aiv/kernel_add.cpp
demo=cases/prefetch_demo/case.toml
graph=bench/cases/graph500/case.toml
compile_cold=$(measure 1 "$bin" compile "$kernel")
compile_warm=$(measure 0 "$bin" compile "$kernel")
demo_cold=$(measure 1 "$bin" run "$demo")
demo_warm=$(measure 0 "$bin" run "$demo")
by_name_warm=$(measure 0 "$bin" run prefetch_demo)
PFSIM_CACHE_DIR=$cache "$bin" run "$graph" >/dev/null  # compile once
graph_warm=$(measure 0 "$bin" run "$graph")
tasks=$(PFSIM_CACHE_DIR=$cache "$bin" run "$graph" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["tasks"]))')
echo "runs: $runs (medians, seconds of wall time)"
echo "| what | wall s |"
echo "|---|---|"
echo "| compile one incore, cold cache | $compile_cold |"
echo "| the same, cached (\`pfsim compile\` answers from the cache) | $compile_warm |"
echo "| \`run\` the prefetch_demo case, cold cache (1 incore + 1 orchestration compiled) | $demo_cold |"
echo "| the same, cached | $demo_warm |"
echo "| \`run prefetch_demo\` (the shipped copy, by its name), cached | $by_name_warm |"
echo "| \`run\` graph500 ($tasks tasks), cached | $graph_warm |"
python3 -c "print('| tasks scheduled per wall second (graph500, whole run) | %.0f |' % ($tasks / $graph_warm))"
