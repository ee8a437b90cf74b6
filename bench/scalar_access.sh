#!/bin/bash
# Usage: bench/scalar_access.sh [LOADS] [PFSIM] -- the host CPU of one scalar GM load
# of a kernel's code (a host-C++ fallback's pointer access), on a data-cache
# hit and on a miss: the pointer chase of tests/python (kernel_pointer_chase.cpp)
# on one core, over 2 lines taken in turn (every load a hit, as a fallback's
# query and key lines are) and over 1024 lines in order (each load misses the
# 16 KiB data cache and hits the L2). Each figure is the difference of a run of
# N loads and one of N/2 (N: LOADS, default 10^8, for hits; LOADS/10 for
# misses), over the loads between
# them: the task-clock (CPU) of the whole process tree (perf stat), so start-up
# and the kernel's compile (made once before, into a cache) cancel. PFSIM: a
# pfsim binary to measure instead of the one built here (another commit's).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prologue.sh
loads=${1:-100000000}
bin=${2:-$bin}
py=$work/chase.py
cat >"$py" <<'PY'
import sys
import torch, pfsim
lines, loads = int(sys.argv[1]), int(sys.argv[2])
call = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/orchestration/scalar_reads_orch.cpp"},
    "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_pointer_chase.cpp", "core_type": "aiv"}]},
    "tests/python")
chain = torch.zeros(lines * 8, dtype=torch.int64)
for i in range(lines):
    chain[i * 8] = (i + 1) % lines * 8
out = torch.zeros(8, dtype=torch.int64)
with pfsim.Worker() as w:
    r = w.run(w.register(call), [chain, out, 1, lines, loads // lines, 0])
assert r.error is None, r.error
c = r.summary["cores"]
print(f"hits {c['dcache_hits']} misses {c['dcache_misses']} loads {int(out[1])}", file=sys.stderr)
print(int(out[1]))
PY
# One run: "CPU_seconds loads" of the whole process tree.
one() {
    PFSIM_CACHE_DIR=$work/cache PYTHONPATH=$("$bin" python-path) perf stat -x, -e task-clock \
        -o "$work/stat" /usr/bin/python3 "$py" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
    grep -h "^hits" "$work/err" >&2
    echo "$(awk -F, '/task-clock/ {print $1 / 1000}' "$work/stat")" "$(cat "$work/out")"
}
one 2 2 >/dev/null  # compiles the kernels into the cache
for lines in 2 1024; do
    n=$((lines == 2 ? loads : loads / 10))
    read -r t1 n1 <<<"$(one "$lines" $((n / 2)))"
    read -r t2 n2 <<<"$(one "$lines" "$n")"
    awk -v l="$lines" -v n=$((n2 - n1)) -v t1="$t1" -v t2="$t2" 'BEGIN {
        printf "%s: %.1f ns CPU a load (%s lines, %.3f s and %.3f s)\n", l == 2 ? "hit" : "miss", (t2 - t1) * 1e9 / n, l, t1, t2 }'
done
