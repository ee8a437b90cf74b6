#!/bin/bash
# Benchmark of several dies in one simulation (#46): host time per simulated
# microsecond with one die and with two, each die running the same launch (8
# vector blocks streaming 2 MiB each from GM through UB, and a 512 KiB TGET from
# the next rank: with two dies over the link, with one from its own GM).
# Three runs of each, LAUNCHES launches a run; docs/performance.md records the output.
# usage: bench/dies_speed.sh [LAUNCHES]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tests/comm:dies_speed >/dev/null 2>&1 || bazel build //tests/comm:dies_speed
launches=${1:-5}
nproc_line="$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "host: $nproc_line"
for dies in 1 2 1 2 1 2; do
    bazel-bin/tests/comm/dies_speed "$dies" "$launches"
done
