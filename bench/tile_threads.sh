#!/bin/bash
# Benchmark (#49): a TMATMUL's host time on one tile thread and on two (PFSIM_TILE_THREADS),
# by shape: bench/cases/matmul_threads, `pfsim run --arg shape=S --arg reps=R` under GNU time,
# the two settings in alternation, the median of ROUNDS; a product's time is (run at REPS -
# run at 0 reps) / REPS, in CPU (user + sys, which a shared machine's load moves less) and wall.
# usage: bench/tile_threads.sh [PFSIM] [ROUNDS] [REPS]
set -u -o pipefail
cd "$(dirname "$0")/.."
bin=${1:-bazel-bin/cli/pfsim}
rounds=${2:-5}
reps=${3:-2000}
[ -x "$bin" ] || { echo "tile_threads.sh: no binary $bin" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PFSIM_CACHE_DIR=$work/cache
shapes=("16x128x128 bf16" "16x64x64 fp32" "32x64x64 fp32" "32x64x128 fp32" "64x64x128 fp32" "128x128x128 fp32")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
one() {  # THREADS SHAPE REPS: "cpu_s wall_s" of one run
    PFSIM_TILE_THREADS=$1 /usr/bin/time -f '%U %S %e' -o "$work/t" "$bin" run bench/cases/matmul_threads/case.toml \
        --arg shape="$2" --arg reps="$3" --prefetch off >"$work/log" 2>&1 ||
        { echo "tile_threads.sh: the run failed:" >&2; tail -5 "$work/log" >&2; exit 1; }
    awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$work/t"
}
median() { sort -n | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }
one 1 0 1 >/dev/null  # compiles the kernel
printf '%-22s %14s %14s %14s %14s\n' shape "cpu us 1 thr" "cpu us 2 thr" "wall us 1 thr" "wall us 2 thr"
for s in "${!shapes[@]}"; do
    for r in $(seq "$rounds"); do
        for t in 1 2; do
            read -r c0 w0 < <(one "$t" "$s" 0)
            read -r c w < <(one "$t" "$s" "$reps")
            echo "$t $(awk -v a="$c" -v b="$c0" -v n="$reps" 'BEGIN { printf "%.2f", (a - b) * 1e6 / n }') \
$(awk -v a="$w" -v b="$w0" -v n="$reps" 'BEGIN { printf "%.2f", (a - b) * 1e6 / n }')" >>"$work/s$s"
        done
    done
    printf '%-22s %14s %14s %14s %14s\n' "${shapes[$s]}" \
        "$(awk '$1 == 1 { print $2 }' "$work/s$s" | median)" "$(awk '$1 == 2 { print $2 }' "$work/s$s" | median)" \
        "$(awk '$1 == 1 { print $3 }' "$work/s$s" | median)" "$(awk '$1 == 2 { print $3 }' "$work/s$s" | median)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
