"""pfsim_kernel: one shipped kernel: its device code and its host side."""

load("//bazel:copts.bzl", "PFSIM_COPTS")

def pfsim_kernel(name, hdrs = []):
    """kernel.cc (and `hdrs`) is device code as written for the board: it is
    not compiled by Bazel but embedded in pfsim and compiled at run time,
    through the same loader as a user's kernel. host.cc registers the kernel
    (inputs, reference, expected gain)."""
    native.filegroup(
        name = "device_sources",
        srcs = ["kernel.cc"] + hdrs,
        visibility = ["//visibility:public"],
    )
    native.cc_library(
        name = name,
        srcs = ["host.cc"],
        hdrs = hdrs,
        copts = PFSIM_COPTS,
        visibility = ["//visibility:public"],
        alwayslink = True,
        deps = [
            "//include:kernel_api",
            "//kernels:registry",
        ],
    )
