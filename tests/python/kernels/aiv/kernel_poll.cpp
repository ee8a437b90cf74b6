// Polls the 50 MHz system counter: block b reads it until (b + 1) * args[1]
// ticks have passed since its first read, then reads it 4096 times more (a
// fixed-count delay), then writes into its own 64-byte line of the int64
// output: [0] the first tick, [1] the last tick read, [2] how many reads it
// made, [3] how many stores it made while polling.
//   args[2]: how each read is made: 0 get_sys_cnt(); 1 the full path of every
//            read (a scalar op through current_core(), then the core's time),
//            what get_sys_cnt() did before its fast path; 2 as 1, plus one more
//            scalar op every 1024 reads (a kernel that must time differently).
//   args[3]: when not 0, a GM store into the block's line every args[3] reads.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

static uint64_t read_counter(int64_t how, uint64_t reads) {
    if (how == 0) return get_sys_cnt();
    pfsim::current_core().scalar(how == 2 && reads % 1024 == 1023 ? 2 : 1);
    return pfsim::current_core().now_ps() / 20000;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ int64_t* out = reinterpret_cast<__gm__ int64_t*>(t->buffer.addr) + t->start_offset;
    const int32_t b = get_block_idx(args);
    const uint64_t hold = static_cast<uint64_t>(args[1]) * static_cast<uint64_t>(b + 1);
    const int64_t how = args[2];
    const uint64_t store_every = static_cast<uint64_t>(args[3]);
    uint64_t reads = 0, stores = 0;
    const uint64_t start = read_counter(how, reads++);
    uint64_t now = start;
    while (now - start < hold) {
        now = read_counter(how, reads++);
        if (store_every != 0 && reads % store_every == 0) out[8 * b + 3] = static_cast<int64_t>(++stores);
    }
    for (int i = 0; i < 4096; ++i) now = read_counter(how, reads++);
    out[8 * b] = static_cast<int64_t>(start);
    out[8 * b + 1] = static_cast<int64_t>(now);
    out[8 * b + 2] = static_cast<int64_t>(reads);
    out[8 * b + 3] = static_cast<int64_t>(stores);
    dcci(&out[8 * b], SINGLE_CACHE_LINE, CACHELINE_OUT);
}
