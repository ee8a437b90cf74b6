#!/bin/bash
# deepseek_v4_flash_decode's four communication kernels (dispatch_push,
# dispatch_wait, combine, combine_wait), compiled from a simpler checkout
# unchanged, in pfsim's own two-rank scene with small shapes, outputs checked
# against the test's golden (tests/comm/deepseek_comm_test.cc, #46). CI has no
# simpler checkout: there the test is skipped, saying so.
# usage: bench/deepseek_comm.sh SIMPLER_CHECKOUT
set -euo pipefail
simpler=$(cd "${1:?usage: bench/deepseek_comm.sh SIMPLER_CHECKOUT}" && pwd)
cd "$(dirname "$0")/.."
bazel test //tests/comm:deepseek_comm_test --test_env=PFSIM_SIMPLER_DIR="$simpler" --test_output=all
