"""The users' include set exposes the kernel ABI (pfsim_kernel_abi.h), and no
model header: a kernel cannot reach into the model's folders."""

import json
import os
import re
import shutil
import subprocess

import pytest

import pfsim

KERNEL = """#include {header}
extern "C" void kernel_entry(__gm__ int64_t* args) {{
    (void)args;
    pfsim::current_core().scalar(1);
}}
"""


def compile_kernel(tmp_path, header):
    source = tmp_path / "kernel.cpp"
    source.write_text(KERNEL.format(header=header))
    return subprocess.run([pfsim.find_binary(), "compile", str(source), "--core", "aiv"],
                          capture_output=True, text=True, timeout=600)


def test_a_kernel_builds_against_the_kernel_abi(tmp_path):
    done = compile_kernel(tmp_path, '"pfsim_kernel_abi.h"')
    assert done.returncode == 0, done.stderr


def test_the_include_set_holds_no_model_header(tmp_path):
    """Where the kernel ABI used to live (model/core/core_ops.h) is not in the include set."""
    done = compile_kernel(tmp_path, '"model/core/core_ops.h"')
    assert done.returncode == 2 and "model/core/core_ops.h" in done.stderr, done.stderr


MATMULS = """#include <pto/pto-inst.hpp>
using namespace pto;
template <typename T, typename C>
void products() {{
    TileLeft<T, 64, 64> a;
    TileRight<T, 64, 64> b;
    TileAcc<C, 64, 64> c, c_in;
    TileAcc<C, 1, 64> bias;
    TASSIGN(a, 0);
    TASSIGN(b, 0);
    TASSIGN(c, 0);
    TASSIGN(c_in, 16384);
    TASSIGN(bias, 32768);
    TMATMUL(c, a, b);
    TMATMUL_ACC(c, a, b);
    TMATMUL_ACC(c, c_in, a, b);
    TMATMUL_BIAS(c, a, b, bias);
}}
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {{
    (void)args;
    products<float, float>();
    products<bfloat16_t, float>();
    products<half, float>();
    products<int8_t, int32_t>();
}}
"""


def calls_in_functions(tmp_path, source_text, name_pattern):
    """Compiles source_text as a cube kernel and disassembles it: (how many functions' names match
    name_pattern, the targets of every call and jump in them). Skips without objdump."""
    objdump = shutil.which("objdump")
    if not objdump:
        pytest.skip("objdump (binutils) is not installed")
    source = tmp_path / "kernel.cpp"
    source.write_text(source_text)
    done = subprocess.run([pfsim.find_binary(), "compile", str(source), "--core", "aic", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    obj = json.loads(done.stdout)["sources"][0]["object"]
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", obj], capture_output=True, text=True, check=True).stdout
    entered, calls = 0, []
    inside = False
    for line in text.splitlines():
        head = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if head:
            inside = re.search(name_pattern, head.group(1)) is not None
            entered += inside
        elif inside and re.search(r"\s(call|jmp)\s", line):
            calls.append(line.split()[-1])
    return entered, calls


def test_what_the_helper_thread_runs_is_uninstrumented(tmp_path):
    """TMATMUL's rows on the helper thread (pfsim::on_two_threads) make no instrumented access: the
    functions it enters (call_rows, matmul's row lambda, sum_columns) call no __tsan_ hook, which would
    reach the simulated core from the wrong thread. Negative control: the row lambda without
    PFSIM_TILE_COMPUTE calls __tsan_read4, __tsan_read8, ... and fails it."""
    entered, calls = calls_in_functions(tmp_path, MATMULS.format(), r"call_rows|UliiiE_clEiii|sum_columns")
    assert entered >= 3 * 4, entered  # the row lambdas and their call_rows of four types and four forms
    assert any("sum_columns" in c for c in calls), calls
    assert not [c for c in calls if "__tsan" in c], sorted(set(c for c in calls if "__tsan" in c))


def test_a_bad_tile_thread_count_is_refused_naming_the_variable():
    """PFSIM_TILE_THREADS is 1 or 2; anything else stops a command before any work: exit 2, the
    variable named on stderr, nothing on stdout. Control: the same command with 1 and 2 succeeds."""
    for value, status in [("3", 2), ("two", 2), ("0", 2), ("1", 0), ("2", 0)]:
        done = subprocess.run([pfsim.find_binary(), "config", "--json"], capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PFSIM_TILE_THREADS": value})
        assert done.returncode == status, (value, done.stderr)
        if status:
            assert "PFSIM_TILE_THREADS='" + value + "'" in done.stderr and done.stdout == "", (value, done)


DN_MOVES = """#include <pto/pto-inst.hpp>
using namespace pto;
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {{
    using GlobalDn = GlobalTensor<bfloat16_t, Shape<1, 1, 1, 128, 128>, Stride<16384, 16384, 16384, 1, 128>, Layout::DN>;
    using MatB = Tile<TileType::Mat, bfloat16_t, 128, 128, BLayout::RowMajor, 128, 128, SLayout::ColMajor, 512>;
    MatB b;
    TASSIGN(b, 0);
    TLOAD(b, GlobalDn(reinterpret_cast<__gm__ bfloat16_t*>(args[0])));
    TSTORE(GlobalDn(reinterpret_cast<__gm__ bfloat16_t*>(args[1])), b);
}}
"""


def test_a_dn_tensors_columns_are_placed_uninstrumented(tmp_path):
    """A DN TLOAD / TSTORE (paged attention's K page: 128 columns, a transfer each) finds each
    column's GM place in code outside the per-access instrumentation: staged_columns and the column
    lambda move_tile hands it call no __tsan_ hook (they read the global tensor's fields, never GM).
    Negative control: the column lambda without PFSIM_TILE_COMPUTE calls __tsan_read8 and fails it."""
    entered, calls = calls_in_functions(tmp_path, DN_MOVES.format(), r"staged_columns|move_tile.*UllE[0-9]*_clEl")
    assert entered >= 2, entered  # staged_columns of the load and of the store
    assert any("move" in c for c in calls), calls  # each column's transfer
    assert not [c for c in calls if "__tsan" in c], sorted(set(c for c in calls if "__tsan" in c))
