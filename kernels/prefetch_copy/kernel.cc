// The onboard prefetch demo's kernel: prefetch a 128-float region into L2, wait,
// copy it to the output through a UB tile. On the board the includes are
// <pto/pto-inst.hpp> and "intrinsic.h"; nothing else differs.
#include "kernels/pto/pto.h"

using namespace pto;

constexpr int kElems = 128;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr) + in->start_offset;
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr) + out->start_offset;

    void* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;  // broken injection shows up as a golden mismatch

    using GlobalData = GlobalTensor<float, Shape<1, 1, 1, 1, kElems>, Stride<kElems, kElems, kElems, kElems, 1>>;
    GlobalData srcGlobal(src);
    GlobalData dstGlobal(dst);

    PrefetchAsyncContext ctx(reinterpret_cast<__gm__ uint8_t*>(workspace));
    comm::AsyncEvent evt = TPREFETCH_ASYNC(srcGlobal, ctx);
    bool ok = evt.Wait(ctx.session);
    (void)ok;

    using TileData = Tile<TileType::Vec, float, 1, kElems, BLayout::RowMajor>;
    TileData tile;
    TASSIGN(tile, 0x100);  // UB 0..0xFF is the prefetch context's scratch
    TLOAD(tile, srcGlobal);
    set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    TSTORE(dstGlobal, tile);
    pipe_barrier(PIPE_ALL);
}
