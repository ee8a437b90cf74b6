// Case files (docs/cases.md): the TOML and what it names. Bad input is a
// CaseError naming the file and key; nothing else may escape.
#include "session/case_file.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        (void)pfsim::read_case(pfsim::fuzz::input_file(data, size, ".toml"));
    } catch (const pfsim::CaseError&) {
    }
    return 0;
}
