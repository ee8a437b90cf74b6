#!/bin/bash
# Regenerates the example sweeps of docs/sweeps.md: a CSV and a PNG plot each
# (the PNG is pfsim's HTML plot, rendered by headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
./setup.sh
bazel build //:pfsim >/dev/null 2>&1
bin=bazel-bin/cli/pfsim
out=docs/sweeps
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sweep() {
    local name=$1
    shift
    "$bin" sweep "$@" --jobs "$(nproc)" --csv "$out/$name.csv" --html "$work/$name.html"
    chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/profile" --window-size=1000,900 --screenshot="$out/$name.png" \
        "file://$work/$name.html" >/dev/null 2>&1
    echo "$out/$name.csv, $out/$name.png"
}
sweep distance gemv_stream --grid arg.distance=1,2,4,8,16
sweep l2_size gemv_stream --grid l2.size=24MiB,48MiB,96MiB,192MiB,384MiB
sweep request_size prefetch_wait --grid arg.bytes=16MiB,64MiB --grid prefetch.request_bytes=1MiB,16MiB
sweep sdma_bandwidth gemv_stream --grid sdma.bandwidth=280GB/s,1TB/s,4TB/s
