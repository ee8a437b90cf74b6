#!/bin/bash
# Benchmark: is build NEW faster than build OLD on one command? Runs `OLD ARGS...`
# and `NEW ARGS...` in PAIRS alternating pairs (old first, then new, in the same
# minute), so a machine whose speed drifts within the hour moves both halves of a
# pair together. Prints each pair's wall times and ratio, each build's median and
# the median of the per-pair ratios (old / new: above 1 means NEW is faster), and
# whether the two builds printed the same results (bench/same_results.py on the
# last pair's stdout: pass --json for a summary to compare).
# usage: bench/ab_pairs.sh PAIRS OLD_PFSIM NEW_PFSIM ARGS...
#   e.g. bench/ab_pairs.sh 7 /tmp/old/bazel-bin/cli/pfsim bazel-bin/cli/pfsim \
#          replay /tmp/random.trace --json
# Builds are not made here: `git worktree add /tmp/old REV && (cd /tmp/old && bazel build //:pfsim)`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 4 ] || { sed -n '9,12p' "$0" | sed 's/^# //' >&2; exit 2; }
pairs=$1 old=$(realpath -m "$2") new=$(realpath -m "$3"); shift 3
[[ "$pairs" =~ ^[1-9][0-9]*$ ]] || { echo "ab_pairs: PAIRS must be a positive count, not '$pairs'" >&2; exit 2; }
for b in "$old" "$new"; do [ -x "$b" ] || { echo "ab_pairs: no binary $b" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "old: $old"
echo "new: $new"
echo "command: ${*}"
run_one() {  # BINARY OUT: wall seconds of one run, stdout to OUT
    local b=$1 out=$2
    /usr/bin/time -f '%e' -o "$work/t" "$b" "${args[@]}" >"$out" || { echo "ab_pairs: $b failed" >&2; exit 2; }
    cat "$work/t"
}
args=("$@")
: >"$work/pairs"
for i in $(seq "$pairs"); do
    o=$(run_one "$old" "$work/old.out")
    n=$(run_one "$new" "$work/new.out")
    r=$(python3 -c "print(f'{$o / max($n, 1e-3):.3f}')")
    echo "pair $i: old $o s, new $n s, ratio $r"
    echo "$o $n $r" >>"$work/pairs"
done
median() { sort -n | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }
echo "median: old $(cut -d' ' -f1 "$work/pairs" | median) s, new $(cut -d' ' -f2 "$work/pairs" | median) s," \
     "per-pair ratio $(cut -d' ' -f3 "$work/pairs" | median)x over $pairs pairs;" \
     "$(python3 bench/same_results.py "$work/old.out" "$work/new.out")"
