// A case prefetch cannot help: the data is already resident in L2 (the kernel
// has just read it), and the prefetch is issued right before its wait. The
// kernel then reads the block again and writes the element-wise sum of the two
// reads (equal, so out = 2 * in).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

constexpr int kRows = 16, kCols = 1024;  // 64 KiB of floats

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;
    using Global = GlobalTensor<float, Shape<1, 1, 1, kRows, kCols>, Stride<kRows * kCols, kRows * kCols, kRows * kCols, kCols, 1>>;
    using Flat = GlobalTensor<float, Shape<1, 1, 1, 1, kRows * kCols>, Stride<1, 1, 1, 1, 1>>;
    Global src(reinterpret_cast<__gm__ float*>(in->buffer.addr));
    Global dst(reinterpret_cast<__gm__ float*>(out->buffer.addr));
    using Block = Tile<TileType::Vec, float, kRows, kCols>;
    Block first, second;
    TASSIGN(first, 0x100);
    TASSIGN(second, 0x100 + Block::kBytes);

    TLOAD(first, src);  // misses: now every line is resident
    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent evt = TPREFETCH_ASYNC(Flat(src.data()), ctx);
    evt.Wait(ctx.session);
    TLOAD(second, src);  // hits, with or without the prefetch
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TADD(first, first, second);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(dst, first);
    pipe_barrier(PIPE_ALL);
}
