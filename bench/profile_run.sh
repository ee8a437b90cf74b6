#!/bin/bash
# Benchmark: where the wall time of one pfsim command goes, by block. Samples
# the command with `perf record` and sums the samples by what each function
# belongs to: the case's input generation, its computed golden (reference),
# the comparison and hashes of outputs, the kernel's own code (tile
# instructions' values), each hardware block of the model, SystemC's
# scheduler, copies in libc, and the host kernel (page zeroing, faults).
# usage: bench/profile_run.sh [PFSIM ARGS...]
#        default: run gemv_stream --prefetch off --arg rows=49152
# Needs perf (linux-perf) and the right to sample (kernel.perf_event_paranoid <= 2).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v perf >/dev/null || { echo "profile_run.sh: perf is not installed (apt install linux-perf)" >&2; exit 2; }
source bench/prologue.sh
[ $# -gt 0 ] || set -- run gemv_stream --prefetch off --arg rows=49152
echo "command: pfsim $*"
"$bin" "$@" >/dev/null  # compiles the case's sources into the cache outside the profile
/usr/bin/time -f '%e %U %S %M' -o "$work/t" perf record -q -F 499 -o "$work/perf.data" "$bin" "$@" >/dev/null
read -r wall user sys rss <"$work/t"
perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio 2>/dev/null | python3 -c '
import re, sys
wall, cpu, rss = float(sys.argv[1]), float(sys.argv[2]) + float(sys.argv[3]), int(sys.argv[4]) // 1024
# First match wins: (block, pattern over "DSO SYMBOL").
blocks = [
    ("input generation (make_values)", r"make_values|in_chunks|store_values|half_bits_of|Xorshift|host_buffer"),
    ("reference (computed golden)", r"compute_golden"),
    ("outputs compared and hashed", r"run_case|element_value|sha256|compress"),
    ("kernel code: tile instructions", r"^\S+\.so \[\.\] pto::"),
    ("kernel code: the rest", r"^[0-9a-f]{64}\.so "),
    ("L2 (model/l2)", r"L2Cache|TlmTags|Lru|Srrip|SameLine|Mshr|Replacement"),
    ("GM (model/gm)", r"GmTiming|Calendar|GlobalMemory|GmBacking|PageStore"),
    ("SDMA engine (model/sdma)", r"Sdma|Channel|Descriptor"),
    ("cores (model/core)", r"Core::|current_core|Worker"),
    ("runtime and orchestration", r"rt::|TaskGraph|Prefetch|Orchestr"),
    ("SystemC and TLM plumbing", r"libsystemc|sc_core|tlm"),
    ("copies and fills (libc)", r"^libc\.so\S* \[\.\] __mem"),
    ("host kernel (page zeroing, faults)", r"^\[kernel"),
]
share = {name: 0.0 for name, _ in blocks}
other = 0.0
for line in sys.stdin:
    m = re.match(r"\s*([0-9.]+)%\s+(.*)", line)
    if not m:
        continue
    pct, rest = float(m.group(1)), " ".join(m.group(2).split())
    for name, pattern in blocks:
        if re.search(pattern, rest):
            share[name] += pct
            break
    else:
        other += pct
print("wall %.2f s, CPU %.2f s (all threads, perf included), peak RSS %d MiB" % (wall, cpu, rss))
for name, _ in blocks:
    print("  %-38s %5.1f %%  %6.2f CPU s" % (name, share[name], share[name] * cpu / 100))
print("  %-38s %5.1f %%  %6.2f CPU s" % ("other", other, other * cpu / 100))
' "$wall" "$user" "$sys" "$rss"
