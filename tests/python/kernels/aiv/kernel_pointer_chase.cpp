// A pointer-chasing loop, as a host-C++ fallback's walks of a block table are:
// each step loads, from the node it is at, the index of the next node, so each
// load waits for the one before. Block 0 alone walks the chain from node 0.
//   args[2]: steps a pass; args[3]: passes; args[4]: 0 plain; 1 dcci of each
//   node's line after its load; 2 dcci of the whole data cache after each pass.
// It ends with [0] the node it stopped at, [1] the loads it made.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* chain_t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out_t = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const int64_t* chain = reinterpret_cast<__gm__ int64_t*>(chain_t->buffer.addr) + chain_t->start_offset;
    __gm__ int64_t* out = reinterpret_cast<__gm__ int64_t*>(out_t->buffer.addr) + out_t->start_offset;
    const int64_t steps = args[2], passes = args[3], mode = args[4];
    int64_t node = 0, loads = 0;
    for (int64_t pass = 0; pass < passes; ++pass) {
        for (int64_t i = 0; i < steps; ++i) {
            const int64_t* at = &chain[node];
            node = *at;
            ++loads;
            if (mode == 1) dcci(at, SINGLE_CACHE_LINE);
        }
        if (mode == 2) dcci(chain, ENTIRE_DATA_CACHE);
    }
    out[0] = node;
    out[1] = loads;
    dcci(out, SINGLE_CACHE_LINE, CACHELINE_OUT);
}
