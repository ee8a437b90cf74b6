// The replay trace reader (R|W|P <hex address> <bytes> per line). Bad input is
// a TraceError naming the line; nothing else may escape, and every access it
// returns lies inside the limit.
#include <cstdlib>

#include "fuzz/fuzz_input.h"
#include "replay/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const uint64_t limit = uint64_t{1} << 36;
    try {
        for (const pfsim::TraceAccess& a : pfsim::read_trace(pfsim::fuzz::input_file(data, size, ".trace"), limit, "GM")) {
            if (a.addr >= limit || a.bytes > limit - a.addr) std::abort();
        }
    } catch (const pfsim::TraceError&) {
    }
    return 0;
}
