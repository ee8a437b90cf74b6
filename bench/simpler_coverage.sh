#!/bin/bash
# Usage: bench/simpler_coverage.sh SIMPLER_CHECKOUT [PFSIM]
# How many of simpler's a2a3 kernel sources compile unchanged against pfsim's
# onboard headers: every kernels/aiv, kernels/aic and kernels/mix source under
# examples/a2a3 and tests/st/a2a3, for its core type (mixed ones for both).
# The generated deepseek/qwen kernels are counted apart. Prints one line per
# failing build with the compiler's first error, then the counts.
set -u
simpler=${1:?usage: simpler_coverage.sh SIMPLER_CHECKOUT [PFSIM]}
pfsim=${2:-bazel-bin/cli/pfsim}
pfsim=$(cd "$(dirname "$pfsim")" && pwd)/$(basename "$pfsim")
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export PFSIM_CACHE_DIR=$cache
cd "$simpler" || exit 2
declare -A ok=() all=()
while IFS= read -r f; do
    case $f in *deepseek*|*qwen*) group=generated;; *) group=hand-written;; esac
    case $f in */kernels/aic/*) cores=aic;; */kernels/aiv/*) cores=aiv;; *) cores="aic aiv";; esac
    for c in $cores; do
        all[$group]=$(( ${all[$group]:-0} + 1 ))
        if out=$("$pfsim" compile "$f" --core "$c" 2>&1); then
            ok[$group]=$(( ${ok[$group]:-0} + 1 ))
        else
            echo "FAIL $c $f: $(grep -m1 'error' <<<"$out" | sed 's/.*error: //' | cut -c1-160)"
        fi
    done
done < <(find examples/a2a3 tests/st/a2a3 \( -path '*kernels/aiv/*.cpp' -o -path '*kernels/aic/*.cpp' -o -path '*kernels/mix/*.cpp' \) | sort)
for group in hand-written generated; do
    echo "$group: ${ok[$group]:-0} of ${all[$group]:-0} builds compile"
done
