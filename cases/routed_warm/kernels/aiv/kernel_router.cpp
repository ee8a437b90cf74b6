// The router of a mixture of experts: picks the two experts with the highest
// scores (the lower index on a tie) and writes route[0] = the first, route[1] =
// the second, route[2] = 1 if the second's score reaches `threshold`, else 0.
// Scalar code over __gm__ pointers: each access goes through the core's scalar
// path and L2; the written line is flushed out of the core's data cache, as on
// the board, so the orchestrator and the scheduler read it from GM.
// args: 0 scores (int32 [experts], at least 2), 1 route (int32 [>= 3]), 2 threshold
#include <cstdint>

#include "tensor.h"
#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* scores = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* route = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const int64_t threshold = args[2];
    const __gm__ int32_t* s = reinterpret_cast<__gm__ int32_t*>(scores->buffer.addr) + scores->start_offset;
    __gm__ int32_t* r = reinterpret_cast<__gm__ int32_t*>(route->buffer.addr) + route->start_offset;
    const uint32_t experts = scores->shapes[0];

    uint32_t first = 0;
    for (uint32_t e = 1; e < experts; ++e) {
        if (s[e] > s[first]) first = e;
    }
    uint32_t second = first == 0 ? 1 : 0;
    for (uint32_t e = second + 1; e < experts; ++e) {
        if (e != first && s[e] > s[second]) second = e;
    }
    r[0] = static_cast<int32_t>(first);
    r[1] = static_cast<int32_t>(second);
    r[2] = s[second] >= threshold ? 1 : 0;
    dcci(r, SINGLE_CACHE_LINE, CACHELINE_OUT);
    dsb(DSB_DDR);
}
