"""Compiler flags for pfsim's own C++ (not for third-party code)."""

# Warnings are errors in GCC builds; the fuzz build (clang, --config=fuzz)
# reports them without stopping, since clang's set differs from GCC's.
PFSIM_COPTS = ["-Wall", "-Wextra"] + select({
    "//bazel:fuzzing": [],
    "//conditions:default": ["-Werror"],
})
