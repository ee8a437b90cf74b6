// A kernel in the two-branch style of simpler's spmd_paged_attention_highperf:
// a simulator branch in host C++ over __gm__ pointers and a raw-CCE branch for
// the board. out[0] = the sum of in[0..n), n = args[2].
#include <cstdint>

#include "intrinsic.h"
#include "tensor.h"

#if defined(__CPU_SIM)
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in_t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out_t = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* in = reinterpret_cast<__gm__ float*>(in_t->buffer.addr) + in_t->start_offset;
    __gm__ float* out = reinterpret_cast<__gm__ float*>(out_t->buffer.addr) + out_t->start_offset;
    float sum = 0;
    for (int64_t i = 0; i < args[2]; ++i) sum += in[i];
    out[0] = sum;
    dcci(out, SINGLE_CACHE_LINE, CACHELINE_OUT);
    dsb(DSB_DDR);
}
#else
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __ubuf__ float* ub = reinterpret_cast<__ubuf__ float*>(0);
    copy_gm_to_ubuf(ub, reinterpret_cast<__gm__ float*>(args[0]), 0, 1, 1, 0, 0);
    pipe_barrier(PIPE_ALL);
}
#endif
