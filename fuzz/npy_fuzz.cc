// The .npy reader case files take initial values and goldens from. Bad input
// is std::invalid_argument naming the file; the data it returns comes from
// the file (never more bytes than it holds).
#include <cstdlib>
#include <stdexcept>

#include "session/npy.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const pfsim::NpyArray a = pfsim::read_npy(pfsim::fuzz::input_file(data, size, ".npy"));
        if (a.data.size() > size) std::abort();
    } catch (const std::invalid_argument&) {
    }
    return 0;
}
