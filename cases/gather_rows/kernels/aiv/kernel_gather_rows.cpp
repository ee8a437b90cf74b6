// out[i] = 2 * table[index[i]]: rows picked at run time from an index tensor,
// each transformed by `passes` vector passes. Each core handles a slice of the
// indices one row at a time (single-buffered) and prefetches the row `distance`
// indices ahead: an address only known at run time.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

constexpr int kRowElems = 32768;  // 128 KiB of fp32 per row
constexpr int kMaxIndices = 256;
constexpr int kMaxDistance = 16;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* table = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* index = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    const int64_t count = args[3];  // indices per core
    const int distance = static_cast<int>(args[4]);
    const int passes = static_cast<int>(args[5]);
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;
    if (get_sub_block_id(args) != 0) return;  // one core per cluster: its channel group is this block's alone

    const int64_t first = get_block_idx(args) * count;
    using Row = GlobalTensor<float, Shape<1, 1, 1, 1, kRowElems>, Stride<1, 1, 1, 1, 1>>;
    using Indices = GlobalTensor<int32_t, Shape<1, 1, 1, 1, kMaxIndices>, Stride<1, 1, 1, 1, 1>>;
    using RowTile = Tile<TileType::Vec, float, 1, kRowElems>;
    using IndexTile = Tile<TileType::Vec, int32_t, 1, kMaxIndices>;
    IndexTile idx;
    RowTile row;
    TASSIGN(idx, 0x100);
    TASSIGN(row, 0x100 + IndexTile::kBytes);
    TLOAD(idx, Indices(reinterpret_cast<__gm__ int32_t*>(index->buffer.addr) + first));
    set_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);  // the scalar unit reads the indices

    __gm__ float* rows = reinterpret_cast<__gm__ float*>(table->buffer.addr);
    auto source = [&](int64_t i) { return Row(rows + int64_t{idx.data()[i]} * kRowElems); };
    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent events[kMaxDistance + 1];
    for (int64_t i = 0; i < distance && i < count; ++i) events[i % (kMaxDistance + 1)] = TPREFETCH_ASYNC(source(i), ctx);
    for (int64_t i = 0; i < count; ++i) {
        if (i + distance < count) {
            events[(i + distance) % (kMaxDistance + 1)] = TPREFETCH_ASYNC(source(i + distance), ctx);
        }
        events[i % (kMaxDistance + 1)].Wait(ctx.session);
        TLOAD(row, source(i));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);
        for (int p = 0; p < passes; ++p) TMULS(row, row, p % 2 == 0 ? 2.0f : 0.5f);
        TADD(row, row, row);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID2);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID2);
        TSTORE(Row(reinterpret_cast<__gm__ float*>(out->buffer.addr) + (first + i) * kRowElems), row);
        set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID3);  // the row tile is free for the next load
        wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID3);
    }
    pipe_barrier(PIPE_ALL);
}
