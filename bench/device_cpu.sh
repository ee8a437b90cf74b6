#!/bin/bash
# Benchmark (#49): the CPU of each device process (one run: prefetch off, then on) of
# simpler's benchmark_bgemm Case0 and alternating_matmul_add Case1 under `pfsim test`,
# against the host's limit (bench/host_limit.py) measured in the same invocation.
# usage: bench/device_cpu.sh SIMPLER_CHECKOUT ROUNDS PFSIM [PFSIM...]
#   Each round runs every case with every PFSIM in turn (builds in alternation: the
#   machine's speed drifts within minutes), after one untimed run of each that fills
#   its compile cache. Prints a line a run pair: the case, the build, the device
#   processes' task-clock in ms (off, on: `perf stat -e task-clock`, CPU time, which
#   a shared machine's load moves less than wall time), each run's wall in ms (the
#   harness's pfsim_wall_off_s / _on_s, a Worker.run's), the device processes' wall
#   (perf's duration_time: their whole life) and peak RSS in MiB (GNU time),
#   the whole `pfsim test`'s user + sys CPU, then each case's limit (the lowest of
#   three). PFSIM_PYTHON picks the python3 that has torch, as for `pfsim test`.
#   DEVICE_CPU_CASES=paged measures simpler's paged_attention Case1 (65,536 tasks) instead.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 3 ] || { sed -n '4,4p' "$0" | sed 's/^# //' >&2; exit 2; }
simpler=$(cd "$1" && pwd) || exit 2
rounds=$2
shift 2
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "device_cpu.sh: ROUNDS must be a positive count, not '$rounds'" >&2; exit 2; }
command -v perf >/dev/null || { echo "device_cpu.sh: perf is not installed (apt install linux-perf)" >&2; exit 2; }
for b in "$@"; do [ -x "$b" ] || { echo "device_cpu.sh: no binary $b" >&2; exit 2; }; done
python=${PFSIM_PYTHON:-python3}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$simpler" "$work/simpler"
# The device processes run under perf stat: a PFSIM_BINARY that wraps `pfsim device`.
cat >"$work/wrap" <<'EOF'
#!/bin/bash
[ "$1" = device ] && exec /usr/bin/time -f %M -o "$DEVICE_CPU_OUT-rss.$$" \
    perf stat -e task-clock,duration_time -x, -o "$DEVICE_CPU_OUT.$$" -- "$DEVICE_CPU_REAL" "$@"
exec "$DEVICE_CPU_REAL" "$@"
EOF
chmod +x "$work/wrap"
cases=(
    "examples/a2a3/tensormap_and_ringbuffer/benchmark_bgemm/test_benchmark_bgemm.py TestBenchmarkBgemm Case0"
    "tests/st/a2a3/tensormap_and_ringbuffer/alternating_matmul_add/test_alternating_matmul_add.py TestAlternatingMatmulAdd Case1"
)
[ "${DEVICE_CPU_CASES:-}" = paged ] &&
    cases=("examples/a2a3/tensormap_and_ringbuffer/paged_attention/test_paged_attention.py TestPagedAttention Case1")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {  # ROUND BUILD_INDEX FILE CLASS CASE: one `pfsim test`, a line of its device processes' CPU
    local b=${builds[$2]} out=$work/cpu
    rm -f "$out".* "$out"-rss.*
    (cd "$work/simpler/$(dirname "$3")" && PFSIM_CACHE_DIR=$work/cache$2 PFSIM_BINARY=$work/wrap DEVICE_CPU_REAL=$b \
        DEVICE_CPU_OUT=$out /usr/bin/time -f '%U %S' -o "$work/total" "$b" test "$(basename "$3")" --case "$4::$5" \
        --manual include -q -p no:cacheprovider --junitxml="$work/xml" >"$work/log" 2>&1) ||
        { echo "device_cpu.sh: $b test $3 --case $4::$5 failed:" >&2; tail -5 "$work/log" >&2; exit 1; }
    [ "$1" = 0 ] && return
    printf '%s %s, %s: %s ms (off, on), run wall %s ms, device wall %s ms, peak RSS %s MiB, pfsim test %s s user + sys, load %s\n' "$4" "$5" "$b" \
        "$(for f in $(ls -tr "$out".*); do awk -F, '/task-clock/ { printf "%.0f ", $1 }' "$f"; done)" \
        "$(grep -o 'name="pfsim_wall_o[fn]*_s" value="[0-9.]*"' "$work/xml" | awk -F'"' '{ printf "%.0f ", $4 * 1000 }')" \
        "$(for f in $(ls -tr "$out".*); do awk -F, '/duration_time/ { printf "%.0f ", $1 / 1e6 }' "$f"; done)" \
        "$(for f in $(ls -tr "$out"-rss.*); do awk 'END { printf "%.0f ", $1 / 1024 }' "$f"; done)" \
        "$(awk 'END { printf "%.1f", $1 + $2 }' "$work/total")" "$(cut -d' ' -f1 /proc/loadavg)"
}
builds=("$@")
for round in $(seq 0 "$rounds"); do
    for row in "${cases[@]}"; do
        read -r file cls case <<<"$row"
        for i in "${!builds[@]}"; do run "$round" "$i" "$file" "$cls" "$case"; done
    done
done
pypath=$("${builds[0]}" python-path)
for row in "${cases[@]}"; do
    read -r file cls case <<<"$row"
    limit=$(for _ in 1 2 3; do (cd "$work/simpler" && PYTHONPATH="$pypath" "$python" "$here/host_limit.py" "$file" "$cls" "$case" |
        cut -d' ' -f1); done | sort -n | head -1)
    echo "$cls $case: host limit $limit s (bench/host_limit.py, the lowest of three)"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
