// Half of a race: role 0 prefetches its input (a few us with prefetch on),
// then writes out[0]; role 1 waits 2 us of its own, then copies out[0] to
// out[1]. Nothing orders them, so out[1] depends on the cores' timing.
#include <cstdint>

#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    if (args[2] == 0) {
        using G = GlobalTensor<float, Shape<1, 1, 1, 1, 64>, Stride<1, 1, 1, 1, 1>>;
        PrefetchAsyncContext ctx(get_dma_workspace(args, DMA_WORKSPACE_SDMA));
        TPREFETCH_ASYNC(G(reinterpret_cast<__gm__ float*>(in->buffer.addr)), ctx).Wait(ctx.session);
        dst[0] = 1.0f;
    } else {
        const uint64_t until = get_sys_cnt() + 100;
        while (get_sys_cnt() < until) {
        }
        dst[1] = dst[0];
    }
}
