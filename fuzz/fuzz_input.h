// Helpers for the fuzz targets (fuzz/*_fuzz.cc). Each target defines
// LLVMFuzzerTestOneInput: under `--config=fuzz` (clang, libFuzzer) it is a
// fuzzer; in the default build corpus_main.cc runs it over its seed corpus
// and the regression inputs, as a test.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace pfsim::fuzz {

// The readers under test take paths: the input, written whole to one file
// per process (under TEST_TMPDIR, TMPDIR or /tmp), with the name's extension.
inline std::string input_file(const uint8_t* data, size_t size, const std::string& extension) {
    const char* dir = std::getenv("TEST_TMPDIR");
    if (!dir) dir = std::getenv("TMPDIR");
    const std::string path = std::string(dir ? dir : "/tmp") + "/pfsim-fuzz-" + std::to_string(getpid()) + extension;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path;
}

inline std::string text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

}  // namespace pfsim::fuzz
