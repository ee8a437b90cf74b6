#!/bin/bash
# Benchmark: two pfsim binaries side by side in one invocation (same machine, same
# moment), runs alternating between them: replay of the random and stream traces
# of bench/replay_speed.sh, and gemv_stream prefetch off and on. Prints, per
# workload, each binary's median wall time and peak RSS and the speed-up.
# usage: bench/compare_speed.sh OLD_PFSIM [NEW_PFSIM] [RUNS] [LINE_ACCESSES] [GEMV_ROWS]
#        NEW_PFSIM defaults to this checkout's build; 3 runs, 10 M line accesses,
#        gemv_stream at 49152 rows (384 MiB of weights).
# An old binary: `git worktree add /tmp/old REV && (cd /tmp/old && bazel build //:pfsim)`.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1")
runs=${3:-3}
lines=${4:-10000000}
rows=${5:-49152}
source bench/prologue.sh
new=$(realpath "${2:-$bin}")
for b in "$old" "$new"; do [ -x "$b" ] || { echo "no binary $b" >&2; exit 2; }; done
echo "old: $old"
echo "new: $new"
for pattern in random stream; do
    python3 bench/gen_trace.py "$work/$pattern.trace" --lines "$lines" --pattern "$pattern" >/dev/null
done

# run_one BINARY ARGS...: "wall_s rss_mib" of one run; stdout of pfsim kept in $work/out.json
run_one() {
    local b=$1; shift
    /usr/bin/time -f '%e %M' -o "$work/t" "$b" "$@" >"$work/out.json"
    awk '{ printf "%s %d\n", $1, $2 / 1024 }' "$work/t"
}

compare() {  # NAME ARGS...
    local name=$1; shift
    : >"$work/old.t"; : >"$work/new.t"
    for _ in $(seq "$runs"); do
        run_one "$old" "$@" >>"$work/old.t"
        cp "$work/out.json" "$work/old.json"
        run_one "$new" "$@" >>"$work/new.t"
        cp "$work/out.json" "$work/new.json"
    done
    local ow or nw nr same
    ow=$(cut -d' ' -f1 "$work/old.t" | median); or=$(cut -d' ' -f2 "$work/old.t" | median)
    nw=$(cut -d' ' -f1 "$work/new.t" | median); nr=$(cut -d' ' -f2 "$work/new.t" | median)
    # What the model computes must not change: the summaries, but for host-memory accounting.
    # (Between builds whose model or cases changed on purpose they differ: say why in the record.)
    same=$(python3 bench/same_results.py "$work/old.json" "$work/new.json")
    printf '%-28s old %6.2f s %5d MiB   new %6.2f s %5d MiB   speed-up %.2fx   %s\n' \
        "$name" "$ow" "$or" "$nw" "$nr" "$(python3 -c "print($ow / max($nw, 1e-3))")" "$same"
}

compare "replay random" replay "$work/random.trace" --json
compare "replay stream" replay "$work/stream.trace" --json
compare "gemv_stream prefetch off" run gemv_stream --prefetch off --arg rows="$rows" --json
compare "gemv_stream prefetch on" run gemv_stream --prefetch on --arg rows="$rows" --json
