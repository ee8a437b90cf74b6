"""pfsim_kernel: one kernel's device code and host side, registered with pfsim."""

load("//bazel:copts.bzl", "PFSIM_COPTS")

def pfsim_kernel(name, hdrs = [], deps = []):
    """kernel.cc is device code as written for the board: its `kernel_entry` is
    renamed to `<name>_kernel_entry` so that many kernels link into one binary.
    host.cc registers the kernel (inputs, reference, expected gain)."""
    native.cc_library(
        name = "device",
        srcs = ["kernel.cc"],
        hdrs = hdrs,
        copts = PFSIM_COPTS,
        local_defines = ["kernel_entry=" + name + "_kernel_entry"],
        deps = ["//kernels/pto"] + deps,
    )
    native.cc_library(
        name = name,
        srcs = ["host.cc"],
        copts = PFSIM_COPTS,
        visibility = ["//visibility:public"],
        alwayslink = True,
        deps = [
            ":device",
            "//kernels:registry",
            "//kernels/pto",
        ] + deps,
    )
