// Calibration microbenchmark, the shape of PTO-ISA's TPREFETCH_ASYNC L2-access
// test: one vector core, `pairs` times, reads a cold 16 KiB region as 16 TLOADs
// of 1 KiB, each followed by an MTE2 -> S flag, then prefetches another 16 KiB
// region, waits, and reads it the same way. The reads `measure` names are
// timed passes (include/pfsim_timed_pass.h): the run reports their total, the
// cold reads (measure 0) or the prefetched ones (measure 1).
// args: 0 region (2 * pairs * 16 KiB), 1 pairs, 2 measure
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pfsim_timed_pass.h"

namespace {
constexpr int kCols = 256;     // floats per TLOAD: 1 KiB
constexpr int kFloats = 4096;  // 16 KiB per region

using Row = Tile<TileType::Vec, float, 1, kCols, BLayout::RowMajor>;
using Chunk = GlobalTensor<float, Shape<1, 1, 1, 1, kCols>, Stride<1, 1, 1, 1, 1>>;

void read(__gm__ float* src, Row& tile, bool timed) {
    pipe_barrier(PIPE_ALL);
    if (timed) pfsim_timed_pass_begin();
    for (int off = 0; off < kFloats; off += kCols) {
        TLOAD(tile, Chunk(src + off));
        set_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_S, EVENT_ID0);
    }
    pipe_barrier(PIPE_ALL);
    if (timed) pfsim_timed_pass_end(kFloats * sizeof(float));
}
}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* region = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    const uint64_t pairs = static_cast<uint64_t>(args[1]);
    const bool prefetched = args[2] != 0;
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(region->buffer.addr);
    Row tile;
    TASSIGN(tile, 0x4000);
    PrefetchAsyncContext ctx(workspace);
    using Region = GlobalTensor<float, Shape<1, 1, 1, 1, kFloats>, Stride<1, 1, 1, 1, 1>>;
    for (uint64_t p = 0; p < pairs; ++p) {
        read(src + p * kFloats, tile, !prefetched);
        __gm__ float* warm = src + (pairs + p) * kFloats;
        comm::AsyncEvent evt = TPREFETCH_ASYNC(Region(warm), ctx);
        evt.Wait(ctx.session);
        read(warm, tile, prefetched);
    }
}
