// The weight warm. args: 0 sent (orders it after the dispatch), 1 this step's
// expert weights, 2 the next step's, 3 which block posts. Fire and forget, as
// production code warms weights: one TPREFETCH_ASYNC per tensor, this step's
// first, not waited. A core posts on its cluster's SDMA channel group: block 0
// runs on the die's first vector core, where the combine's copy runs later
// (cluster 0's ring), so the combine queues behind what is left of the warm;
// block 2 runs on the third vector core, cluster 1: another ring of the same
// engine.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pto_async_kernel_api.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    if (static_cast<int64_t>(get_block_idx(args)) != args[3]) return;
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    using Flat = GlobalTensor<uint8_t, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    PrefetchAsyncContext ctx(workspace);
    for (int i = 1; i <= 2; ++i) {
        __gm__ ChipTensor* w = reinterpret_cast<__gm__ ChipTensor*>(args[i]);
        Flat weights(reinterpret_cast<__gm__ uint8_t*>(w->buffer.addr), Flat::Shape(static_cast<int64_t>(w->buffer.size)));
        TPREFETCH_ASYNC(weights, ctx);  // moe: the warm
    }
}
