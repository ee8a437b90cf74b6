#!/bin/sh
# g++, each call's user, system and wall seconds and arguments appended to
# pfsim_cxx.log in the test's undeclared outputs (bench/test_cpu.sh sets it as
# PFSIM_CXX: the kernel compiler pfsim runs).
exec /usr/bin/time -a -o "${TEST_UNDECLARED_OUTPUTS_DIR:-/dev/null}/pfsim_cxx.log" -f "%U %S %e $*" g++ "$@"
