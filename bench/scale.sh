#!/bin/bash
# Benchmark (#49): pfsim at the scale of real graphs, in one invocation.
# usage: bench/scale.sh SIMPLER_CHECKOUT [PFSIM] [SET]
#   PFSIM: a built pfsim (default: bazel-bin/cli/pfsim); PFSIM_PYTHON picks the python3
#   that has torch (e.g. /usr/bin/python3), as for `pfsim test`.
#   SET: `scale` (the default: the cases below, then the generated graph) or `paged`
#   (#44's benchmark: Case1 of every paged-attention program simpler ships, each batch 256,
#   and benchmark_bgemm Case0; no generated graph).
#
# For each of simpler's large scene-test cases (alternating_matmul_add Case1 and Case2,
# benchmark_bgemm Case0, paged_attention Case1: the largest paged-attention case simpler
# ships), run unedited from a copy of the checkout by `pfsim test --case CLASS::CASE`
# (prefetch off, then on, each on a fresh die), one row:
#   wall s off / on    each Worker.run (the harness's pfsim_wall_off_s / _on_s)
#   limit s            the same values computed on the host: the case's own compute_golden
#                      with torch (the host's BLAS), no timing model (bench/host_limit.py)
#   x limit            the slower run's wall over the limit (#49's target: at most 3)
#   tensors MiB        the bytes of the case's tensors
#   peak RSS MiB       the largest process of `pfsim test` (GNU time's maximum resident set:
#                      pytest or the device process); target: at most 1.5 x tensors + a few
#                      hundred MiB
#   device MiB         the larger peak of the case's two `pfsim device` processes (the die, its
#                      GM and the runs), apart from pytest's golden: PFSIM_BINARY is a wrapper
#                      that runs each device under GNU time
#   total s            `pfsim test`'s wall (python start, golden, both runs, comparisons)
#   user / sys s       its CPU seconds, every process
#   sim us/s, tasks/s  simulated time and tasks per wall second of the off run
# Then a generated graph (bench/cases/graph10k) with 1,000 to 60,000 tasks: peak
# RSS of `pfsim run`, which must not grow with the task count (bench/graph_memory.sh),
# nor a device's that runs it for the scene harness (bench/device_records.py).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
simpler=$(cd "${1:?usage: scale.sh SIMPLER_CHECKOUT [PFSIM] [scale|paged]}" && pwd)
pfsim=${2:-$here/../bazel-bin/cli/pfsim}
selection=${3:-scale}
case $selection in scale | paged) ;; *) echo "scale.sh: SET must be scale or paged, not $selection" >&2; exit 2 ;; esac
pfsim=$(cd "$(dirname "$pfsim")" && pwd)/$(basename "$pfsim")
python=${PFSIM_PYTHON:-python3}
# As `pfsim test` sets it, for the limit too; OMP_WAIT_POLICY=default: unset (an older pfsim's runs).
if [ "${OMP_WAIT_POLICY:-}" = default ]; then unset OMP_WAIT_POLICY; else export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PFSIM_CACHE_DIR=${PFSIM_CACHE_DIR:-$work/cache}
cp -r "$simpler" "$work/simpler"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/ {print $2}') GiB"
echo "pfsim: $pfsim"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
pypath=$("$pfsim" python-path)

cases=(
    "tests/st/a2a3/tensormap_and_ringbuffer/alternating_matmul_add/test_alternating_matmul_add.py TestAlternatingMatmulAdd Case1"
    "tests/st/a2a3/tensormap_and_ringbuffer/alternating_matmul_add/test_alternating_matmul_add.py TestAlternatingMatmulAdd Case2"
    "examples/a2a3/tensormap_and_ringbuffer/benchmark_bgemm/test_benchmark_bgemm.py TestBenchmarkBgemm Case0"
    "examples/a2a3/tensormap_and_ringbuffer/paged_attention/test_paged_attention.py TestPagedAttention Case1"
)
# A row: FILE CLASS CASE [pfsim test options]. spmd_paged_attention's kernel is written for the
# board's sub-block register (docs/compatibility.md#spmd_paged_attention).
ex=examples/a2a3/tensormap_and_ringbuffer st=tests/st/a2a3/tensormap_and_ringbuffer
[ "$selection" = paged ] && cases=(
    "$ex/paged_attention/test_paged_attention.py TestPagedAttention Case1"
    "$ex/paged_attention_manual_scope/test_paged_attention_manual_scope.py TestPagedAttentionManualScope Case1"
    "$ex/paged_attention_ringbuffer/test_paged_attention_ringbuffer.py TestPagedAttentionRingbuffer ringbuffer_stress"
    "$ex/paged_attention_unroll_manual_scope/test_paged_attention_unroll_manual_scope.py TestPagedAttentionUnrollManualScope Case1"
    "$st/batch_paged_attention/test_batch_paged_attention.py TestBatchPagedAttention Case1"
    "$st/multi_round_paged_attention/test_multi_round_paged_attention.py TestMultiRoundPagedAttention Case1"
    "$st/paged_attention_unroll/test_paged_attention_unroll.py TestPagedAttentionUnroll Case1"
    "$st/paged_attention_unroll_4dims/test_paged_attention_unroll_4dims.py TestPagedAttentionUnroll4dims Case1"
    "$st/spmd_paged_attention/test_spmd_paged_attention.py TestPagedAttentionUnrollTpushPop Case1"
    "$ex/benchmark_bgemm/test_benchmark_bgemm.py TestBenchmarkBgemm Case0"
)
printf '| %-38s | %-13s | %7s | %7s | %11s | %12s | %10s | %7s | %14s | %8s | %7s | %s |\n' case 'wall s off/on' \
    'limit s' 'x limit' 'tensors MiB' 'peak RSS MiB' 'device MiB' 'total s' 'user / sys s' 'sim us/s' 'tasks/s' 'outcome'
printf '#!/bin/sh\nexec /usr/bin/time -a -o "%s" -f %%M "%s" "$@"\n' "$work/device_rss" "$pfsim" >"$work/device.sh"
chmod +x "$work/device.sh"
cd "$work/simpler" || exit 2
for row in "${cases[@]}"; do
    read -r file cls case options <<<"$row"
    xml=$work/result.xml
    rm -f "$xml" "$work/device_rss"
    PFSIM_BINARY=$work/device.sh /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$pfsim" test "$file" \
        --case "$cls::$case" --manual include $options -q -p no:cacheprovider --junitxml="$xml" >"$work/out.txt" 2>&1
    rc=$?
    read -r total rss user sys <"$work/time"
    device=$(sort -n "$work/device_rss" 2>/dev/null | tail -1)
    read -r limit bytes _ < <(PYTHONPATH="$pypath" "$python" "$here/host_limit.py" "$file" "$cls" "$case" 2>/dev/null ||
        echo "- 0 0")
    "$python" - "$xml" "$rc" "$cls::$case" "$total" "$rss" "$limit" "$bytes" "$user" "$sys" "${device:-0}" <<'EOF'
import sys, xml.etree.ElementTree as ET
xml, rc, name, total, rss, limit, size, user, sys_s, device = sys.argv[1:]
p = {}
try:
    for prop in ET.parse(xml).iter("property"):
        try:
            p[prop.get("name")] = float(prop.get("value"))
        except ValueError:  # a text property (pfsim_case)
            pass
except Exception:
    pass
outcome = "passed" if rc == "0" and p else f"failed (exit {rc})"
mib = int(size) / 2**20
if "pfsim_wall_off_s" in p:
    off, on = p["pfsim_wall_off_s"], p["pfsim_wall_on_s"]
    walls = f"{off:.2f} / {on:.2f}"
    ratio = f"{max(off, on) / float(limit):.1f}" if limit != "-" and float(limit) > 0 else "-"
    sim = f"{p['pfsim_time_off_ns'] / 1e3 / off:.1f}"
    tasks = f"{p['pfsim_tasks'] / off:.0f}"
else:
    walls = ratio = sim = tasks = "-"
device = f"{int(device) / 1024:.0f}" if int(device) else "-"
print(f"| {name:38} | {walls:13} | {limit:>7} | {ratio:>7} | {mib:11.0f} | {int(rss) / 1024:12.0f} | {device:>10} "
      f"| {float(total):7.1f} "
      f"| {float(user):6.1f} / {float(sys_s):5.1f} | {sim:>8} | {tasks:>7} | {outcome} |")
EOF
    [ "$rc" = 0 ] || grep -m3 -E '^E |Error|error' "$work/out.txt" | cut -c1-200
done

echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$selection" = scale ]; then
    status=0
    "$here/graph_memory.sh" "$pfsim" || status=$?
    PYTHONPATH="$pypath" "$python" "$here/device_records.py" "$pfsim" || status=$?
    exit "$status"
fi
