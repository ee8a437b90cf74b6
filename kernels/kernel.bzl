"""pfsim_kernel: one shipped kernel: its device code and its host side."""

load("//bazel:copts.bzl", "PFSIM_COPTS")

def pfsim_kernel(name, hdrs = [], srcs = ["kernel.cc"]):
    """kernel.cc (and `hdrs`) is device code as written for the board: it is
    not compiled by Bazel but embedded in pfsim and compiled at run time,
    through the same loader as a user's kernel. host.cc registers the kernel
    (inputs, reference, expected gain). A kernel whose device code is a
    shipped case's incore (kernels/cases/) gives srcs = []."""
    native.filegroup(
        name = "device_sources",
        srcs = srcs + hdrs,
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
