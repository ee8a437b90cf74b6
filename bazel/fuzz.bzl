"""A fuzz target: LLVMFuzzerTestOneInput in `srcs`, seeds in fuzz/corpus/NAME,
each finding's input in fuzz/regressions/NAME. In the default build it is a
test running every seed and regression input (fuzz/corpus_main.cc); under
--config=fuzz the same target is a libFuzzer binary (bench/fuzz.sh runs it)."""

load("//bazel:copts.bzl", "PFSIM_COPTS")

def pfsim_fuzz_test(name, srcs, deps):
    corpus = "corpus/" + name
    regressions = "regressions/" + name
    native.cc_test(
        name = name,
        size = "small",
        srcs = srcs,
        copts = PFSIM_COPTS,
        args = ["fuzz/" + corpus, "fuzz/" + regressions],
        data = native.glob([corpus + "/**", regressions + "/**"]),
        linkopts = select({
            "//bazel:fuzzing": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        deps = deps + [":fuzz_input"] + select({
            "//bazel:fuzzing": [],
            "//conditions:default": [":corpus_main"],
        }),
    )
