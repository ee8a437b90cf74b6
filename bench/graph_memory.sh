#!/bin/bash
# Benchmark and check (#49): the host memory of a task graph must not grow with
# its task count. Runs bench/cases/graph10k (tensors 24 KiB whatever the count)
# with 1,000, 10,000 and 30,000 tasks (`pfsim run --prefetch off`), one line each
# (wall, peak RSS, simulated time, tasks per wall second), then the peak RSS each
# task adds, from 1,000 to 30,000 tasks. Exit 1 when that is above
# MAX_KIB_PER_TASK (default 4: 2.8 KiB at 2026-12-06; 8.2 KiB before, when
# each task held a 4 KiB GM page for its deferred-completion slab and its
# argument arrays until the graph ended).
# usage: bench/graph_memory.sh [PFSIM] [MAX_KIB_PER_TASK]
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
pfsim=${1:-$here/../bazel-bin/cli/pfsim}
max=${2:-4}
python=${PFSIM_PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$here/.." || exit 2
"$pfsim" run bench/cases/graph10k/case.toml --arg tasks=1 >/dev/null 2>&1  # compiles its sources outside the figures
for tasks in 1000 10000 30000; do
    /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$pfsim" run bench/cases/graph10k/case.toml --arg tasks=$tasks \
        --prefetch off --json >"$work/run.json" 2>"$work/err.txt"
    rc=$?
    read -r wall rss user sys <"$work/time"
    echo "$tasks $rss" >>"$work/rss"
    "$python" - "$work/run.json" "$tasks" "$wall" "$rss" "$rc" "$user" "$sys" <<'PY'
import json, sys
path, tasks, wall, rss, rc, user, sys_s = sys.argv[1:]
try:
    s = json.load(open(path))
    sim = s.get("kernel_time_ns", 0) / 1e3
    n = len(s.get("tasks", []))
except Exception:
    sim, n = 0, 0
print(f"graph10k tasks={tasks}: exit {rc}, {n} tasks run, wall {wall} s (user {user}, sys {sys_s}), "
      f"peak RSS {int(rss) / 1024:.0f} MiB, {sim:.0f} us simulated, {n / float(wall):.0f} tasks/s")
PY
    [ "$rc" = 0 ] || { cat "$work/err.txt" >&2; exit 2; }
done
"$python" - "$work/rss" "$max" <<'PY'
import sys
rows = [tuple(map(int, line.split())) for line in open(sys.argv[1])]
(t0, r0), (t1, r1) = rows[0], rows[-1]
per_task = (r1 - r0) / (t1 - t0)  # KiB
verdict = "ok" if per_task <= float(sys.argv[2]) else "ABOVE the limit"
print(f"peak RSS per task, {t0} to {t1} tasks: {per_task:.2f} KiB (limit {sys.argv[2]} KiB): {verdict}")
sys.exit(0 if per_task <= float(sys.argv[2]) else 1)
PY
