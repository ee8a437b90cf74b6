#!/bin/bash
# pfsim report writes a self-contained page whose plots render in headless
# Chromium with nothing on the console; a page with a script error is caught.
set -u
pfsim=$1
work=${TEST_TMPDIR:-$(mktemp -d)}
export HOME=$work
# The kernels from the compile cache every test shares (docs/testing.md, "What it costs").
export PFSIM_CACHE_DIR="/tmp/pfsim-cache-$(id -u)"
fail=0

# Loads FILE in headless Chromium; prints the page title; console lines go to FILE.console.
load() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update --disable-sync \
        --disable-extensions --user-data-dir="$work/profile" --enable-logging=stderr --v=0 \
        --dump-dom "file://$1" 2>"$1.stderr" >"$1.dom"
    grep -E 'CONSOLE|Uncaught' "$1.stderr" >"$1.console"
    sed -n 's:.*<title>\(.*\)</title>.*:\1:p' "$1.dom"
}

"$pfsim" run matmul_tiled --prefetch off --json >"$work/off.json" || { echo "FAIL: run off"; exit 1; }
"$pfsim" run matmul_tiled --json >"$work/on.json" || { echo "FAIL: run on"; exit 1; }
"$pfsim" check prefetch_demo matmul_tiled --json >"$work/check.json" || { echo "FAIL: check"; exit 1; }
"$pfsim" report "$work/off.json" "$work/on.json" --html "$work/runs.html" || { echo "FAIL: report"; exit 1; }
"$pfsim" report "$work/check.json" --html "$work/check.html" || { echo "FAIL: report of a check"; exit 1; }

if grep -qE '(src|href)="(https?:)?//' "$work/runs.html"; then echo "FAIL: the page fetches from the network"; fail=1; fi
title=$(load "$work/runs.html")
[ "$title" = "pfsim report: 4 plots" ] || { echo "FAIL: runs page title '$title'"; fail=1; }
[ -s "$work/runs.html.console" ] && { echo "FAIL: console output:"; cat "$work/runs.html.console"; fail=1; }
for plot in time lanes l2 bandwidth; do
    grep -q "data-plot=\"$plot\"" "$work/runs.html.dom" || { echo "FAIL: plot $plot missing"; fail=1; }
done
grep -q '<polyline' "$work/runs.html.dom" || { echo "FAIL: no lines drawn"; fail=1; }
title=$(load "$work/check.html")
[ "$title" = "pfsim report: 1 plots" ] || { echo "FAIL: check page title '$title'"; fail=1; }

# Negative control: a script error must show up on the console.
echo '<html><head><title>broken</title></head><body><script>notAFunction();</script></body></html>' >"$work/broken.html"
load "$work/broken.html" >/dev/null
[ -s "$work/broken.html.console" ] || { echo "FAIL: a script error went unnoticed"; fail=1; }

# Bad input: exit 2 naming the file.
echo '{"schema": "pfsim.summary/1", "command": "run"' >"$work/truncated.json"
"$pfsim" report "$work/truncated.json" --html "$work/x.html" 2>"$work/err"
[ $? -eq 2 ] && grep -q "truncated.json: byte" "$work/err" || { echo "FAIL: truncated input"; cat "$work/err"; fail=1; }

[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
