// Microbenchmark: each block (one vector core on a cluster of its own, so each
// posts on its own channel group) builds its session, then `rounds` times
// prefetches its slice of the region, in posts of `part` bytes (0: one post),
// and waits for the last one (unless `wait` is 0: fire and forget, as
// production warms are). The rounds are its timed pass
// (include/pfsim_timed_pass.h); it writes whether every wait returned true (1)
// into its status slot. The second vector core of the cluster returns at once.
// args: 0 region, 1 status (32 B per block), 2 rounds, 3 part, 4 wait, 5 the
// task's first slice, 6 the slice count (the region's and the status's), 7 the
// first slice's bytes (0: every slice the same; else the others share the rest)
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pfsim_timed_pass.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* region = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* status = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const int64_t rounds = args[2];
    const bool wait = args[4] != 0;
    const uint64_t core = static_cast<uint64_t>(args[5] + get_block_idx(args));
    const uint64_t slices = static_cast<uint64_t>(args[6]), lead = static_cast<uint64_t>(args[7]);
    const uint64_t even = lead > 0 && slices > 1 ? (region->buffer.size - lead) / (slices - 1) : region->buffer.size / slices;
    const uint64_t slice = lead > 0 && core == 0 ? lead : even;
    const uint64_t offset = lead > 0 && core > 0 ? lead + (core - 1) * even : core * even;
    const uint64_t part = args[3] > 0 ? static_cast<uint64_t>(args[3]) : slice;
    __gm__ uint8_t* base = reinterpret_cast<__gm__ uint8_t*>(region->buffer.addr) + offset;
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr || get_sub_block_id(args) != 0) return;

    using Part = GlobalTensor<uint8_t, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    PrefetchAsyncContext ctx(workspace);
    bool ok = true;
    pfsim_timed_pass_begin();
    for (int64_t r = 0; r < rounds; ++r) {
        comm::AsyncEvent evt;
        for (uint64_t off = 0; off < slice; off += part) {
            const uint64_t n = slice - off < part ? slice - off : part;
            Part src(base + off, Part::Shape(static_cast<int64_t>(n)));
            evt = TPREFETCH_ASYNC(src, ctx);
        }
        if (wait) ok = evt.Wait(ctx.session) && ok;
    }
    pfsim_timed_pass_end(slice * static_cast<uint64_t>(rounds));

    using StatusTile = Tile<TileType::Vec, uint32_t, 1, 8, BLayout::RowMajor>;
    StatusTile tile;
    TASSIGN(tile, 0x100);
    TEXPANDS(tile, ok ? 1u : 0u);
    using StatusGlobal = GlobalTensor<uint32_t, Shape<1, 1, 1, 1, 8>, Stride<8, 8, 8, 8, 1>>;
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(StatusGlobal(reinterpret_cast<__gm__ uint32_t*>(status->buffer.addr) + core * 8), tile);
    pipe_barrier(PIPE_ALL);
}
