#!/bin/bash
# The kernel API rejects non-flat prefetch sources at compile time, with the
# documented message, and accepts flat ones. Run from the workspace root.
set -u
fail=0
if ! g++ -std=c++17 -fsyntax-only -I. -Iinclude tests/static/good_prefetch_shape.cc 2>err.txt; then
    echo "FAIL: flat sources did not compile:"; cat err.txt; fail=1
fi
if g++ -std=c++17 -fsyntax-only -I. -Iinclude tests/static/bad_prefetch_shape.cc 2>err.txt; then
    echo "FAIL: a [4, 32] source compiled"; fail=1
elif ! grep -q "requires a flat contiguous logical 1D GM region" err.txt; then
    echo "FAIL: the rejection lacks the documented message:"; cat err.txt; fail=1
fi
# The runtime faces hardware only through its platform interface.
if grep -rn '#include "model/' runtime --include=*.h --include=*.cc | grep -v '^runtime/platform/sim/'; then
    echo "FAIL: runtime/ includes model headers (above)"; fail=1
fi
[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
