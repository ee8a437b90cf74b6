"""The product's two builds of an RTL stub: one per waves format, since a
verilated model traces to one format only."""

load("//bazel:verilator.bzl", "verilator_cc_library")

def verilated_vcd_and_fst(name, srcs, top):
    """`name`_vcd (class V`top`, VCD waves) and `name`_fst (class V`top`_fst, FST waves),
    both for use inside SystemC, linted with -Wall."""
    for fmt, prefix, flag in [("vcd", "V" + top, "--trace"), ("fst", "V" + top + "_fst", "--trace-fst")]:
        verilator_cc_library(
            name = name + "_" + fmt,
            srcs = srcs,
            top = top,
            prefix = prefix,
            systemc = True,
            vopts = ["-Wall", flag],
        )
