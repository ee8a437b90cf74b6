// Warms L2 with a whole tensor: one TPREFETCH_ASYNC of its bytes. With
// wait = 0 it returns at once (fire-and-forget, as production code warms
// the next layer's weights): the engine keeps moving the data after the
// kernel has ended. With wait = 1 it waits for the event first.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* w = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    const bool wait = args[1] != 0;
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;
    using Flat = GlobalTensor<uint8_t, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent evt = TPREFETCH_ASYNC(
        Flat(reinterpret_cast<__gm__ uint8_t*>(w->buffer.addr), Flat::Shape(static_cast<int64_t>(w->buffer.size))), ctx);
    if (wait) evt.Wait(ctx.session);
}
