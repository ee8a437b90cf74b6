// Microbenchmark: on one vector core, build the session, then `rounds` times
// prefetch the whole region and wait. Writes whether every wait returned true
// (1) into the status output.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* region = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* status = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const int64_t rounds = args[2];
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;

    using Region = GlobalTensor<uint8_t, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    Region src(reinterpret_cast<__gm__ uint8_t*>(region->buffer.addr),
               Region::Shape(static_cast<int64_t>(region->buffer.size)));
    PrefetchAsyncContext ctx(workspace);
    bool ok = true;
    for (int64_t r = 0; r < rounds; ++r) {
        comm::AsyncEvent evt = TPREFETCH_ASYNC(src, ctx);
        ok = evt.Wait(ctx.session) && ok;
    }

    using StatusTile = Tile<TileType::Vec, uint32_t, 1, 8, BLayout::RowMajor>;
    StatusTile tile;
    TASSIGN(tile, 0x100);
    TEXPANDS(tile, ok ? 1u : 0u);
    using StatusGlobal = GlobalTensor<uint32_t, Shape<1, 1, 1, 1, 8>, Stride<8, 8, 8, 8, 1>>;
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(StatusGlobal(reinterpret_cast<__gm__ uint32_t*>(status->buffer.addr)), tile);
    pipe_barrier(PIPE_ALL);
}
