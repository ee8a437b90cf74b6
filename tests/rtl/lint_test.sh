#!/bin/bash
# verilator --lint-only -Wall accepts every RTL stub without a warning, in its
# product build and in each broken variant the differential tests use.
set -u
failed=0
lint() {
    if out=$(verilator --lint-only -Wall "$@" 2>&1) && [ -z "$out" ]; then
        echo "clean: $*"
    else
        echo "NOT CLEAN: $*"; echo "$out"; failed=1
    fi
}
lint rtl_stubs/l2_tags/l2_slice_tags.sv
lint --top-module l2_tags rtl_stubs/l2_tags/l2_tags.sv rtl_stubs/l2_tags/l2_slice_tags.sv
lint -DBROKEN_LRU_WAY0 --top-module l2_tags rtl_stubs/l2_tags/l2_tags.sv rtl_stubs/l2_tags/l2_slice_tags.sv
lint rtl_stubs/sdma_frontend/sdma_frontend.sv
lint -DBROKEN_ARBITER_SKIPS_LAST rtl_stubs/sdma_frontend/sdma_frontend.sv
# Negative control: a stub with an unused signal is not clean.
tmp=$(mktemp -d)
printf 'module bad(input logic a, input logic b, output logic y);\n  assign y = a;\nendmodule\n' > "$tmp/bad.sv"
if verilator --lint-only -Wall "$tmp/bad.sv" >/dev/null 2>&1; then
    echo "NOT CAUGHT: the lint accepted an unused input"; failed=1
fi
rm -rf "$tmp"
exit $failed
