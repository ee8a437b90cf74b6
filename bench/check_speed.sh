#!/bin/bash
# Benchmark: wall time of `pfsim check` over every kernel at default sizes, and
# gemv_stream's simulated time per wall second and peak RSS.
# usage: bench/check_speed.sh [RUNS]   (default 3). docs/performance.md records results.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
source bench/prologue.sh
for i in $(seq "$runs"); do
    /usr/bin/time -f '%e' -o "$work/t" "$bin" check >/dev/null
    cat "$work/t"
done | median | xargs -I{} echo "pfsim check (all kernels, off and on): median {} s wall"
for mode in off on; do
    for i in $(seq "$runs"); do
        /usr/bin/time -f '%e %M' -o "$work/t" "$bin" run gemv_stream --prefetch "$mode" --json >"$work/out.json"
        read -r wall rss <"$work/t"
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); wall = float(sys.argv[2]); rss = int(sys.argv[3])
print("%.1f %.3f %.1f %.2f %d" % (d["kernel_time_ns"] / 1e3 / wall, d["sim_time_total_ns"] / 1e6 / wall,
                                  d["kernel_time_ns"] / 1e3, wall, rss // 1024))
' "$work/out.json" "$wall" "$rss"
    done | sort -n | awk -v m="$mode" '{ v[NR] = $0 } END { split(v[int((NR + 1) / 2)], f, " ");
        printf "gemv_stream prefetch %s: median %s kernel us simulated per wall s (%s ms per wall s with the 4.4 ms warm-up; kernel %s us, run %s s wall, peak RSS %s MiB)\n", m, f[1], f[2], f[3], f[4], f[5] }'
done
