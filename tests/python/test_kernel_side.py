"""The kernel side as simpler's kernels are written: the CCE cache builtins
without <pto/pto-inst.hpp>, "common/platform_config.h", and kernels with a
__CPU_SIM simulator branch beside a raw-CCE one (pfsim builds the former)."""

import os
import subprocess

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
TWO_BRANCH = os.path.join(HERE, "kernels", "sim_branch", "kernel_two_branch.cpp")


def compile_aiv(path):
    r = subprocess.run([pfsim.find_binary(), "compile", str(path), "--core", "aiv"], capture_output=True,
                       text=True, timeout=300)
    return r.returncode, r.stdout + r.stderr


BUILTINS = """#include <cstdint>
{include}
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {{
    __gm__ int32_t* flag = reinterpret_cast<__gm__ int32_t*>(args[0]);
    *flag = PLATFORM_MAX_BLOCKDIM;
    dcci(flag, SINGLE_CACHE_LINE, CACHELINE_OUT);
    dcci(flag, ENTIRE_DATA_CACHE);
    dsb(DSB_DDR);
}}
"""


def test_the_cache_builtins_and_platform_constants_need_no_pto_header(tmp_path):
    src = tmp_path / "builtins.cpp"
    src.write_text(BUILTINS.format(include='#include "intrinsic.h"\n#include "common/platform_config.h"'))
    rc, out = compile_aiv(src)
    assert rc == 0, out
    # Negative control: without pfsim's headers the names are not there.
    src.write_text(BUILTINS.format(include="constexpr int PLATFORM_MAX_BLOCKDIM = 24;"))
    rc, out = compile_aiv(src)
    assert rc == 2 and "dcci" in out and "was not declared" in out, out


def run_two_branch(settings):
    callable_ = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/two_branch_orch.cpp"},
        "incores": [{"func_id": 0, "source": TWO_BRANCH, "core_type": "aiv"}],
    }, HERE)
    results = {}
    with pfsim.Worker(set=settings) as worker:
        handle = worker.register(callable_)
        for n in (256, 1024):
            x = torch.arange(1024, dtype=torch.float32) / 4
            out = torch.zeros(16)
            results[n] = worker.run(handle, [x, out, n])
            assert out[0] == x[:n].sum()
    return results, {n: r.counters["l2"] for n, r in results.items()}


def test_the_simulator_branch_runs_with_its_pointer_accesses_timed_through_l2(tmp_path):
    # Without the core's data cache, each element is one 4-byte load through the
    # scalar path and L2, each its own L2 access with its latency: 768 more of
    # them, and longer by about their time.
    results, l2 = run_two_branch({"core.dcache": "false"})
    assert (l2[1024]["read_lines"], l2[1024]["read_bytes"]) == (1024, 4096), l2
    assert (l2[256]["read_lines"], l2[256]["read_bytes"]) == (256, 1024), l2
    assert results[1024].time_ns > results[256].time_ns + 768 * 10
    # With it (the default), the loads reach the L2 one 64 B line at a time, and
    # the second run finds the first's 16 lines still in the core's cache.
    results, l2 = run_two_branch({})
    assert (l2[1024]["read_lines"], l2[1024]["read_bytes"]) == (48, 3072), l2
    assert (l2[256]["read_lines"], l2[256]["read_bytes"]) == (16, 1024), l2
    # Negative control: the raw-CCE branch does not build on pfsim.
    flipped = tmp_path / "flipped.cpp"
    flipped.write_text(open(TWO_BRANCH).read().replace("#if defined(__CPU_SIM)", "#if !defined(__CPU_SIM)"))
    rc, out = compile_aiv(flipped)
    assert rc == 2 and "__ubuf__" in out, out
