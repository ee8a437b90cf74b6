#!/bin/bash
# Usage: bench/insight_cost.sh [RUNS] [PFSIM]
# Wall time of `pfsim run` with and without --sanitize and --advise (without
# its what-if re-runs: --no-what-if) on a few kernels and cases, warm compile
# cache: the median of RUNS runs each, and the ratio to the plain run, measured
# in one invocation. The target the issue sets: at most 2x.
set -u
runs=${1:-3}
pfsim=${2:-bazel-bin/cli/pfsim}
targets=(gemv_stream gather_rows cases/weight_warm/case.toml cases/attention_step/case.toml)
modes=("" "--sanitize --error-exitcode 0")
if "$pfsim" help 2>/dev/null | grep -q -- "--advise"; then
    modes+=("--advise --no-what-if" "--sanitize --error-exitcode 0 --advise --no-what-if")
fi
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf "%-40s %-34s %9s %7s\n" target mode "median s" ratio
for t in "${targets[@]}"; do
    "$pfsim" run "$t" >/dev/null 2>&1  # compile once
    base=
    for m in "${modes[@]}"; do
        s=$(for ((i = 0; i < runs; i++)); do
            /usr/bin/time -f %e "$pfsim" run "$t" $m 2>&1 >/dev/null | tail -1
        done | median)
        [ -z "$base" ] && base=$s
        printf "%-40s %-34s %9s %7s\n" "$t" "${m:-plain}" "$s" "$(awk -v a="$s" -v b="$base" 'BEGIN {printf "%.2f", a / b}')"
    done
done
