#!/bin/bash
# Benchmark: `pfsim replay` speed (line accesses per wall second) and peak RSS.
# usage: bench/replay_speed.sh [LINE_ACCESSES] [RUNS] [PATTERN]
#        defaults: 10000000 line accesses, 3 runs, both patterns (random, stream)
# Prints each run and the median per pattern; docs/performance.md records results.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}
runs=${2:-3}
patterns=${3:-random stream}
source bench/prologue.sh
for pattern in $patterns; do
python3 bench/gen_trace.py "$work/bench.trace" --lines "$lines" --pattern "$pattern"
results=()
for i in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/time" "$bin" replay "$work/bench.trace" --json >"$work/out.json"
    read -r wall rss_kib <"$work/time"
    line_accesses=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["line_accesses"])' "$work/out.json")
    rate=$(python3 -c "print(int($line_accesses / max($wall, 1e-3)))")
    echo "run $i: $line_accesses line accesses in $wall s = $rate line accesses/s, peak RSS $((rss_kib / 1024)) MiB"
    touched=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gm"]["touched_bytes"] >> 20)' "$work/out.json")
    results+=("$rate $((rss_kib / 1024)) $touched")
done
printf '%s\n' "${results[@]}" | sort -n | awk -v n="$runs" -v p="$pattern" 'NR == int((n + 1) / 2) {
    printf "%s median: %d line accesses/s, peak RSS %d MiB (GM pages touched: %d MiB)\n", p, $1, $2, $3 }'
done
