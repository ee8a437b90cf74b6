// The onboard demo's shape: prefetch a 128-float region into L2, wait, then
// copy it to the output through one UB tile. Built against the onboard
// headers only, as a kernel for the board is.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__ [aicore]  // the CCE spelling; the build defines __aicore__ first
#endif

#include "intrinsic.h"
#include "pipe_sync.h"

constexpr int kElems = 128;

extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr) + in->start_offset;
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr) + out->start_offset;

    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) {  // broken injection shows up as a golden mismatch
        pipe_barrier(PIPE_ALL);
        return;
    }

    using Flat = GlobalTensor<float, Shape<1, 1, 1, 1, kElems>, Stride<kElems, kElems, kElems, kElems, 1>>;
    Flat src_global(src);
    Flat dst_global(dst);

    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent evt = TPREFETCH_ASYNC(src_global, ctx);
    evt.Wait(ctx.session);

    Tile<TileType::Vec, float, 1, kElems, BLayout::RowMajor> tile;
    TASSIGN(tile, 0x100);  // UB 0..0xFF is the prefetch context's scratch
    TLOAD(tile, src_global);
    set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    TSTORE(dst_global, tile);
    pipe_sync();
    pipe_barrier(PIPE_ALL);
}
