// Decode-style y = W x on every vector core: W (fp16, rows x 4096) streams
// through the cores in 32 KiB blocks of 4 rows, block b of the task taking
// the b-th share of the rows. The two vector cores of a cluster share one SDMA
// channel group (their sessions would overwrite each other's requests), so
// only the first of them posts: `distance` blocks ahead, for itself and for
// its sibling, which holds the next block of the task (the 48 blocks go in
// order to the 48 idle vector cores). The sibling just loads: a line still being
// filled is waited for by the L2, and a prefetch changes no value either way.
#include "../gemv_shape.h"
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
using namespace gemv;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* w = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* x = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* y = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    const int64_t rows = args[3];
    const int distance = static_cast<int>(args[4]);
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;

    const int64_t core = get_block_idx(args);
    const int64_t cores = get_block_num(args);
    const int64_t rows_per_core = rows / cores;
    const int64_t blocks = rows_per_core / kBlockRows;
    __gm__ half* wbase = reinterpret_cast<__gm__ half*>(w->buffer.addr) + core * rows_per_core * kCols;
    __gm__ float* ybase = reinterpret_cast<__gm__ float*>(y->buffer.addr) + core * rows_per_core;

    using Block = GlobalTensor<half, Shape<1, 1, 1, kBlockRows, kCols>, Stride<1, 1, 1, kCols, 1>>;
    using FlatBlock = GlobalTensor<half, Shape<1, 1, 1, 1, kBlockRows * kCols>, Stride<1, 1, 1, 1, 1>>;
    using Vector = GlobalTensor<half, Shape<1, 1, 1, 1, kCols>, Stride<1, 1, 1, 1, 1>>;
    using Result = GlobalTensor<float, Shape<1, 1, 1, 1, kBlockRows>, Stride<1, 1, 1, 1, 1>>;
    using WTile = Tile<TileType::Vec, half, kBlockRows, kCols>;
    using XTile = Tile<TileType::Vec, half, 1, kCols>;
    using PTile = Tile<TileType::Vec, float, kBlockRows, kCols>;  // the products, widened to sum in float
    using YTile = Tile<TileType::Vec, float, kBlockRows, 1>;
    XTile xt;
    WTile wt[2], prod;
    PTile wide;
    YTile yt;
    TASSIGN(xt, 0x100);
    TASSIGN(wt[0], 0x100 + XTile::kBytes);
    TASSIGN(wt[1], 0x100 + XTile::kBytes + WTile::kBytes);
    TASSIGN(prod, 0x100 + XTile::kBytes + 2 * WTile::kBytes);
    TASSIGN(wide, 0x100 + XTile::kBytes + 3 * WTile::kBytes);
    TASSIGN(yt, 0x100 + XTile::kBytes + 3 * WTile::kBytes + PTile::kBytes);
    TLOAD(xt, Vector(reinterpret_cast<__gm__ half*>(x->buffer.addr)));

    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent events[kMaxDistance + 1];
    auto block = [&](int64_t b) { return Block(wbase + b * kBlockRows * kCols); };
    const bool poster = get_sub_block_id(args) == 0;
    __gm__ half* sibling = wbase + rows_per_core * kCols;
    auto prefetch = [&](int64_t b) {
        if (!poster) return;
        TPREFETCH_ASYNC(FlatBlock(sibling + b * kBlockRows * kCols), ctx);  // done when ours is: same queue, in order
        events[b % (kMaxDistance + 1)] = TPREFETCH_ASYNC(FlatBlock(block(b).data()), ctx);
    };
    for (int64_t b = 0; b < distance && b < blocks; ++b) prefetch(b);

    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    for (int64_t b = 0; b < blocks; ++b) {
        if (b + distance < blocks) prefetch(b + distance);
        if (poster) events[b % (kMaxDistance + 1)].Wait(ctx.session);
        WTile& wb = wt[b % 2];
        if (b >= 2) wait_flag(PIPE_V, PIPE_MTE2, static_cast<int>(b % 2) + 1);  // buffer free again
        TLOAD(wb, block(b));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TCOLEXPANDMUL(prod, wb, xt);
        TCVT(wide, prod, RoundMode::CAST_NONE);
        TROWSUM(yt, wide);
        set_flag(PIPE_V, PIPE_MTE2, static_cast<int>(b % 2) + 1);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID3);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID3);
        TSTORE(Result(ybase + b * kBlockRows), yt);
    }
    pipe_barrier(PIPE_ALL);
}
