#!/bin/bash
# Benchmark: the full `pfsim check --uncertainty` (every shipped case, at both ends
# of every parameter's plausible range one at a time, then at each case's lowest
# and highest combination): its table and its wall time, with the machine's load
# before and after (the run takes the 2 cores for minutes; time it on a quiet
# machine). usage: bench/uncertainty.sh [pfsim check options, e.g. --vary KEY,...]
# docs/performance.md and docs/configuration.md record results.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/prologue.sh
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/time -f '%e' -o "$work/t" "$bin" check --uncertainty "$@"
echo "pfsim check --uncertainty $*: $(cat "$work/t") s wall; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
