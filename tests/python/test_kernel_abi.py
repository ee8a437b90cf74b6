"""The users' include set exposes the kernel ABI (pfsim_kernel_abi.h), and no
model header: a kernel cannot reach into the model's folders."""

import subprocess

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
