#!/bin/bash
# Regenerates traces/golden/ from traces/golden/MANIFEST. Run it when a model
# change is meant to change the golden outputs, and commit what it writes.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //:pfsim >/dev/null 2>&1
bin=bazel-bin/cli/pfsim
grep -v '^#' traces/golden/MANIFEST | while read -r name args; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    "$bin" $args --json --trace "traces/golden/$name.trace.json" >"traces/golden/$name.summary.json"
    echo "traces/golden/$name: $(wc -c <"traces/golden/$name.trace.json") B trace"
done
