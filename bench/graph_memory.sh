#!/bin/bash
# Benchmark and check (#49): the host memory of a task graph must not grow with
# its task count. Runs bench/cases/graph10k (tensors 24 KiB whatever the count)
# with 1,000, 10,000, 30,000 and 60,000 tasks (`pfsim run --prefetch off`, the
# text summary: a run that asks for no per-task output), one line each (wall,
# CPU, peak RSS, simulated time, tasks per wall second), then the peak RSS each
# task adds from 1,000 to 30,000 tasks and from 30,000 to 60,000. Below the ring's
# task window (16,384 tasks, runtime_env.ring_task_window) every submitted task
# is pending at once, so the first figure also holds the pending tasks' argument
# arrays; the second is past the window at both ends and is the check: exit 1
# when it is above MAX_KIB_PER_TASK (default 0.05: 0.00-0.02 KiB at d0153f1, whose text
# summary keeps no task's record and whose graph keeps only each task's end time past its
# retirement; 0.99 at a8d67c0 and 9174b3f, which kept every task's graph, run and summary
# records; 1.42 at 4fb6969, whose graph kept each completed task's dispatch record and
# arguments; 3.35 at c3549cc, where the call's result was copied and each task kept its
# descriptors and scope records).
# usage: bench/graph_memory.sh [PFSIM] [MAX_KIB_PER_TASK]
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
pfsim=${1:-$here/../bazel-bin/cli/pfsim}
max=${2:-0.05}
python=${PFSIM_PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$here/.." || exit 2
"$pfsim" run bench/cases/graph10k/case.toml --arg tasks=1 >/dev/null 2>&1  # compiles its sources outside the figures
for tasks in 1000 10000 30000 60000; do
    /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$pfsim" run bench/cases/graph10k/case.toml --arg tasks=$tasks \
        --prefetch off >"$work/run.txt" 2>"$work/err.txt"
    rc=$?
    read -r wall rss user sys <"$work/time"
    echo "$tasks $rss" >>"$work/rss"
    "$python" - "$work/run.txt" "$tasks" "$wall" "$rss" "$rc" "$user" "$sys" <<'PY'
import re, sys
path, tasks, wall, rss, rc, user, sys_s = sys.argv[1:]
text = open(path).read()
sim = re.search(r"^kernel time +([0-9.]+) us", text, re.M)
n = re.search(r"^tasks +([0-9]+)", text, re.M)
sim, n = (float(sim.group(1)) if sim else 0), (int(n.group(1)) if n else 0)
print(f"graph10k tasks={tasks}: exit {rc}, {n} tasks run, wall {wall} s (user {user}, sys {sys_s}), "
      f"peak RSS {int(rss) / 1024:.0f} MiB, {sim:.0f} us simulated, {n / float(wall):.0f} tasks/s")
PY
    [ "$rc" = 0 ] || { cat "$work/err.txt" >&2; exit 2; }
done
"$python" - "$work/rss" "$max" <<'PY'
import sys
rss = dict(tuple(map(int, line.split())) for line in open(sys.argv[1]))
limit = float(sys.argv[2])
def per_task(a, b):  # KiB
    return (rss[b] - rss[a]) / (b - a)
print(f"peak RSS per task, 1000 to 30000 tasks: {per_task(1000, 30000):.2f} KiB (pending tasks up to the window included)")
past = per_task(30000, 60000)
verdict = "ok" if past <= limit else "ABOVE the limit"
print(f"peak RSS per task, 30000 to 60000 tasks: {past:.2f} KiB (limit {limit} KiB): {verdict}")
sys.exit(0 if past <= limit else 1)
PY
