// Prefetches whose fate in L2 is known exactly, for the advisor's tests (run
// with --set l2.size=1536KiB: 3072 lines of 512 B, 12 ways). args[0] holds
// C (1.5 MiB, as much as L2), A (256 KiB) and B (1.5 MiB) back to back;
// args[2] is the mode:
//   0: load C (L2 full of it); prefetch A and wait (each of A's 512 fills
//      evicts one line of C); load B (evicting A unused); load C again (512 of
//      its misses are on lines A's fills evicted): accuracy 0, pollution 512.
//   1: prefetch A and wait at once, then load it: every useful line late.
//   2: prefetch A, compute for a while, wait, load A: no line late.
//   3: compute only: no access reaches L2 (the ideal what-if gains nothing).
//   4: prefetch A, compute, wait, load A (every line a hit, covered by the
//      prefetch); then load the first 256 KiB of B (every line a miss).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

constexpr int64_t kChunk = 4096;  // floats: 16 KiB per TLOAD
constexpr int64_t kC = 1536 * 256, kA = 256 * 256, kB = 1536 * 256;  // floats
using Chunk = GlobalTensor<float, Shape<1, 1, 1, 1, kChunk>, Stride<1, 1, 1, 1, 1>>;
using RegionA = GlobalTensor<float, Shape<1, 1, 1, 1, kA>, Stride<1, 1, 1, 1, 1>>;
using Row = Tile<TileType::Vec, float, 1, kChunk>;

static void load(Row& row, __gm__ float* from, int64_t floats) {
    for (int64_t i = 0; i < floats; i += kChunk) TLOAD(row, Chunk(from + i));  // advise: helper load
    pipe_barrier(PIPE_ALL);
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    const int64_t mode = args[2];
    Row row, work;
    TASSIGN(row, 0x100);
    TASSIGN(work, 0x100 + Row::kBytes);
    if (mode == 3) {
        for (int i = 0; i < 2000; ++i) TADDS(work, work, 1.0f);
        return;
    }
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ float* c = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ float* a = c + kC;
    __gm__ float* b = a + kA;
    PrefetchAsyncContext ctx(get_dma_workspace(args, DMA_WORKSPACE_SDMA));
    if (mode == 4) {
        comm::AsyncEvent evt = TPREFETCH_ASYNC(RegionA(a), ctx);  // advise: warm
        for (int i = 0; i < 2000; ++i) TADDS(work, work, 1.0f);
        evt.Wait(ctx.session);
        for (int64_t i = 0; i < kA; i += kChunk) TLOAD(row, Chunk(a + i));  // advise: covered load
        for (int64_t i = 0; i < kA; i += kChunk) TLOAD(row, Chunk(b + i));  // advise: cold load
        pipe_barrier(PIPE_ALL);
        return;
    }
    if (mode == 0) {
        load(row, c, kC);
        comm::AsyncEvent evt = TPREFETCH_ASYNC(RegionA(a), ctx);  // advise: polluting
        evt.Wait(ctx.session);
        load(row, b, kB);
        load(row, c, kC);
    } else {
        comm::AsyncEvent evt = TPREFETCH_ASYNC(RegionA(a), ctx);  // advise: prefetch
        if (mode == 2) {
            for (int i = 0; i < 2000; ++i) TADDS(work, work, 1.0f);
        }
        evt.Wait(ctx.session);
        load(row, a, kA);
    }
}
