"""Compiler flags for pfsim's own C++ (not for third-party code)."""

PFSIM_COPTS = ["-Wall", "-Wextra", "-Werror"]
