// The 64-byte SDMA request decoder: any 64 bytes decode; encoding the decoded
// request and decoding again gives the same request (the fields the engine
// reads survive a round trip).
#include <cstdlib>
#include <cstring>

#include "fuzz/fuzz_input.h"
#include "hw/sdma_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    uint8_t raw[pfsim::kSdmaRequestBytes] = {};
    if (size) std::memcpy(raw, data, size < sizeof raw ? size : sizeof raw);  // data may be null when size is 0
    const pfsim::SdmaRequest r = pfsim::SdmaRequest::decode(raw);
    uint8_t again[pfsim::kSdmaRequestBytes];
    r.encode(again);
    if (!(pfsim::SdmaRequest::decode(again) == r)) std::abort();
    return 0;
}
