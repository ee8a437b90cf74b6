// Warms L2 with a whole tensor: one TPREFETCH_ASYNC of its bytes. args[1]
// says what becomes of the event:
//   0  fire-and-forget, as production code warms the next layer's weights:
//      the kernel returns at once and the engine keeps moving the data;
//   1  waited for before the kernel returns;
//   2  registered for deferred completion (protocol §3.5): the kernel returns
//      at once, the task -- and every task that depends on it -- completes
//      only when the engine has finished the prefetch.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pto_async_kernel_api.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* w = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    const int64_t mode = args[1];
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;
    using Flat = GlobalTensor<uint8_t, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent evt = TPREFETCH_ASYNC(
        Flat(reinterpret_cast<__gm__ uint8_t*>(w->buffer.addr), Flat::Shape(static_cast<int64_t>(w->buffer.size))), ctx);
    if (mode == 1) {
        evt.Wait(ctx.session);
    } else if (mode == 2) {
        AsyncCtx async = get_async_ctx(args);
        pto2::detail::register_pto_async_event(async, evt, ctx.session);
    }
}
