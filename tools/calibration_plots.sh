#!/bin/bash
# Regenerates docs/calibration.png: GM bandwidth against transfer size from 1, 8
# and 48 cores, and the L2 working-set curve (pfsim calibrate --html, rendered by
# headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
./setup.sh
bazel build //:pfsim >/dev/null 2>&1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bazel-bin/cli/pfsim calibrate --only hit_latency --html "$work/calibration.html" >/dev/null
chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --window-size=1000,800 --screenshot=docs/calibration.png \
    "file://$work/calibration.html" >/dev/null 2>&1
echo docs/calibration.png
