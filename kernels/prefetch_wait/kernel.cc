// Microbenchmark: on one vector core, build the session, then `rounds` times
// prefetch `bytes` and wait. Writes whether every wait returned true (1) into
// the status output.
#include "kernels/pto/pto.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* region = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* status = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    void* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;

    PrefetchAsyncContext ctx(reinterpret_cast<__gm__ uint8_t*>(workspace));
    bool ok = true;
    for (int64_t r = 0; r < args[2]; ++r) {
        pfsim::rt::AsyncEvent evt = pfsim::rt::prefetch_async(region->buffer.addr, region->buffer.size, ctx);
        ok = evt.Wait(ctx.session) && ok;
    }

    using StatusTile = Tile<TileType::Vec, uint32_t, 1, 8, BLayout::RowMajor>;
    StatusTile tile;
    TASSIGN(tile, 0x100);
    for (int i = 0; i < 8; ++i) tile.at(0, i) = ok ? 1u : 0u;
    using StatusGlobal = GlobalTensor<uint32_t, Shape<1, 1, 1, 1, 8>, Stride<8, 8, 8, 8, 1>>;
    TSTORE(StatusGlobal(reinterpret_cast<__gm__ uint32_t*>(status->buffer.addr)), tile);
    pipe_barrier(PIPE_ALL);
}
