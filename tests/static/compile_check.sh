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
# Every orchestration name pfsim provides compiles, old and new spellings in one
# program; one name nobody defines does not (the negative control).
if ! g++ -std=c++17 -fsyntax-only -I. -Iinclude tests/static/orchestration_names.cc 2>err.txt; then
    echo "FAIL: the orchestration names did not compile:"; cat err.txt; fail=1
fi
if g++ -std=c++17 -fsyntax-only -I. -Iinclude -DPFSIM_UNKNOWN_NAME tests/static/orchestration_names.cc 2>err.txt; then
    echo "FAIL: an undefined name compiled"; fail=1
fi
# The communication instructions and context compile; a WaitCmp PTO-ISA lacks does not.
if ! g++ -std=c++17 -fsyntax-only -I. -Iinclude tests/static/comm_names.cc 2>err.txt; then
    echo "FAIL: the communication names did not compile:"; cat err.txt; fail=1
fi
if g++ -std=c++17 -fsyntax-only -I. -Iinclude -DPFSIM_UNKNOWN_NAME tests/static/comm_names.cc 2>err.txt; then
    echo "FAIL: WaitCmp::ALWAYS compiled"; fail=1
fi
# A name simpler has and pfsim does not model: exactly one error, naming it.
lacks() {  # SOURCE-TEXT EXPECTED-MESSAGE
    printf '%s\n' "$1" >lacks.cc
    if g++ -std=c++17 -fsyntax-only -I. -Iinclude lacks.cc 2>err.txt; then
        echo "FAIL: compiled: $1"; fail=1
    elif [ "$(grep -c 'error:' err.txt)" -ne 1 ] || ! grep -q "$2" err.txt; then
        echo "FAIL: not one error saying '$2':"; cat err.txt; fail=1
    fi
}
lacks '#include "pto_orchestration_api.h"
void f() { CoreTaskArgs a; a.set_task_timing_slot(3); }' "pfsim lacks CoreTaskArgs::set_task_timing_slot"
# The runtime faces hardware only through its platform interface.
if grep -rn '#include "model/' runtime --include=*.h --include=*.cc | grep -v '^runtime/platform/sim/'; then
    echo "FAIL: runtime/ includes model headers (above)"; fail=1
fi
[ "$fail" -eq 0 ] && echo PASS
exit "$fail"
