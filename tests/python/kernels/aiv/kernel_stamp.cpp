// Each block holds its core for (block_idx + 1) * args[1] ticks of the 50 MHz
// system counter, then writes into its own 64-byte line of the int64 output:
// [0] the tick it started at, [1] the tag args[2].
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    const uint64_t start = get_sys_cnt();
    __gm__ ChipTensor* t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ int64_t* out = reinterpret_cast<__gm__ int64_t*>(t->buffer.addr) + t->start_offset;
    const int32_t b = get_block_idx(args);
    const uint64_t hold = static_cast<uint64_t>(args[1]) * static_cast<uint64_t>(b + 1);
    while (get_sys_cnt() - start < hold) {
    }
    out[8 * b] = static_cast<int64_t>(start);
    out[8 * b + 1] = args[2];
    dcci(&out[8 * b], SINGLE_CACHE_LINE, CACHELINE_OUT);
}
