// y[r] = sum of row r of W (float32, 4096 columns; W and y may be views):
// the consumer of the warmed weights. Block b of n sums the b-th slice of
// rows, 4 rows (64 KiB) per tile, double-buffered. args[3], work: vector passes
// over each tile (1: one row-sum, bandwidth-bound; more: a layer's compute, same y).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pipe_sync.h"

constexpr int kCols = 4096;
constexpr int kRows = 4;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* w = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* y = reinterpret_cast<__gm__ ChipTensor*>(args[2]);  // args[1]: the matmul's result, only waited for
    const int64_t work = args[3];
    const int64_t rows = static_cast<int64_t>(w->shapes[0]);
    const int64_t per = rows / get_block_num(args);
    const int64_t first = get_block_idx(args) * per;
    __gm__ float* wbase = reinterpret_cast<__gm__ float*>(w->buffer.addr) + w->start_offset + first * kCols;
    __gm__ float* ybase = reinterpret_cast<__gm__ float*>(y->buffer.addr) + y->start_offset + first;

    using Block = GlobalTensor<float, Shape<1, 1, 1, kRows, kCols>, Stride<1, 1, 1, kCols, 1>>;
    using Sums = GlobalTensor<float, Shape<1, 1, 1, 1, kRows>, Stride<1, 1, 1, 1, 1>>;
    using WTile = Tile<TileType::Vec, float, kRows, kCols>;
    using YTile = Tile<TileType::Vec, float, kRows, 1>;
    WTile wt[2];
    YTile yt;
    TASSIGN(wt[0], 0);
    TASSIGN(wt[1], WTile::kBytes);
    TASSIGN(yt, 2 * WTile::kBytes);
    const int64_t blocks = per / kRows;
    for (int64_t b = 0; b < blocks; ++b) {
        WTile& t = wt[b % 2];
        if (b >= 2) wait_flag(PIPE_V, PIPE_MTE2, static_cast<int>(b % 2) + 1);  // the buffer is free again
        TLOAD(t, Block(wbase + b * kRows * kCols));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        if (b >= 1) wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID3);  // the previous sums are stored
        for (int64_t pass = 0; pass < work; ++pass) TROWSUM(yt, t);
        set_flag(PIPE_V, PIPE_MTE2, static_cast<int>(b % 2) + 1);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID4);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID4);
        TSTORE(Sums(ybase + b * kRows), yt);
        set_flag(PIPE_MTE3, PIPE_V, EVENT_ID3);
    }
    if (blocks >= 1) wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID3);
    pipe_sync();
}
