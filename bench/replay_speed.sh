#!/bin/bash
# Benchmark: `pfsim replay` speed (line accesses per wall second) and peak RSS,
# against the naive data-carrying LRU loop of bench/limit_l2.cc (the team's
# baseline: 192 MiB, 16 ways, 512 B lines over a sparse page store, a 512 B copy
# per access, no timing), built with g++ -O2 and run in the same invocation on
# the same number of line accesses (random and sequential).
# usage: bench/replay_speed.sh [LINE_ACCESSES] [RUNS] [PATTERN]
#        defaults: 10000000 line accesses, 3 runs, both patterns (random, stream)
# pfsim runs twice per pattern: as `pfsim replay` (timing only: no bytes move,
# nothing observes them) and with --verify (the pattern's bytes carried through
# GM and compared with a flat reference on every read: the data-carrying
# replay, two copies per access where the naive loop makes one).
# Prints each run, the median per pattern and mode and its ratio to the naive
# loop's median; docs/performance.md records results.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${1:-10000000}
runs=${2:-3}
patterns=${3:-random stream}
source bench/prologue.sh
g++ -O2 -o "$work/limit_l2" bench/limit_l2.cc
for pattern in $patterns; do
naive=$(for i in $(seq "$runs"); do
    "$work/limit_l2" "$lines" 1 "$([ "$pattern" = stream ] && echo s || echo r)" | sed -E 's/.*: ([0-9.]+) M line accesses.*/\1/'
done | sort -n | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }')
echo "naive loop ($pattern): median $naive M line accesses/s over $runs runs"
python3 bench/gen_trace.py "$work/bench.trace" --lines "$lines" --pattern "$pattern"
for mode in "" --verify; do
results=()
for i in $(seq "$runs"); do
    /usr/bin/time -f '%e %M' -o "$work/time" "$bin" replay "$work/bench.trace" --json $mode >"$work/out.json"
    read -r wall rss_kib <"$work/time"
    line_accesses=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["line_accesses"])' "$work/out.json")
    rate=$(python3 -c "print(int($line_accesses / max($wall, 1e-3)))")
    echo "run $i${mode:+ ($mode)}: $line_accesses line accesses in $wall s = $rate line accesses/s, peak RSS $((rss_kib / 1024)) MiB"
    touched=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["gm"]["touched_bytes"] >> 20)' "$work/out.json")
    results+=("$rate $((rss_kib / 1024)) $touched")
done
printf '%s\n' "${results[@]}" | sort -n | awk -v n="$runs" -v p="$pattern${mode:+ $mode}" -v naive="$naive" 'NR == int((n + 1) / 2) {
    printf "%s median: %d line accesses/s, peak RSS %d MiB (GM pages touched: %d MiB); %.2fx the naive loop\n",
           p, $1, $2, $3, $1 / (naive * 1e6) }'
done
done
