// Each misuse the prefetch sanitizer reports, and its corrected twin
// (args[3] != 0). args[0]: a 1 MiB float input in GM; args[1]: a 4 KiB float
// output; args[2]: which misuse. The lines marked "site:" are the call sites
// the sanitizer must name (tests/python/test_sanitizer.py).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

constexpr int64_t kElems = 256 * 1024;  // 1 MiB of float
using Whole = GlobalTensor<float, Shape<1, 1, 1, 1, kElems>, Stride<kElems, kElems, kElems, kElems, 1>>;
using Part = GlobalTensor<float, Shape<1, 1, 1, 1, 1024>, Stride<1024, 1024, 1024, 1024, 1>>;
using Sized = GlobalTensor<float, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
using Row = Tile<TileType::Vec, float, 1, 1024>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    const int64_t misuse = args[2];
    const bool fixed = args[3] != 0;
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    const int32_t block = get_block_idx(args);

    switch (misuse) {
        case 0: {  // stale completion: a second context on the group while the first one's flag is in flight
            PrefetchAsyncContext first(workspace);
            comm::AsyncEvent warm = TPREFETCH_ASYNC(Whole(src), first);  // site: stale-earlier
            if (fixed) warm.Wait(first.session);
            PrefetchAsyncContext second(workspace);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Part(src), second);  // site: stale-build
            evt.Wait(second.session);
            break;
        }
        case 1: {  // never waited
            PrefetchAsyncContext ctx(workspace);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Part(src), ctx);  // site: never-waited
            if (fixed) evt.Wait(ctx.session);
            break;
        }
        case 2: {  // mismatched wait: the event of one context waited with another's session
            PrefetchAsyncContext a(workspace), b(workspace);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Part(src), a);  // site: mismatched-post
            evt.Wait(fixed ? a.session : b.session);  // site: mismatched-wait
            break;
        }
        case 3: {  // shared channel group: both vector cores of cluster 0 post (run with 2 blocks)
            PrefetchAsyncContext ctx(workspace);
            if (!fixed || block == 0) {
                comm::AsyncEvent evt = TPREFETCH_ASYNC(Whole(src), ctx);  // site: shared-post
                evt.Wait(ctx.session);
            }
            break;
        }
        case 4: {  // scratch clobbered: a tile at UB 0 loaded while the event is in flight
            PrefetchAsyncContext ctx(workspace);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Whole(src), ctx);  // site: scratch-post
            Row row;
            TASSIGN(row, fixed ? 0x100 : 0x0);  // site: scratch-tile
            TLOAD(row, Part(src + kElems - 1024));
            evt.Wait(ctx.session);
            break;
        }
        case 5: {  // dropped: a zero-byte region
            PrefetchAsyncContext ctx(workspace);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Sized(src, Sized::Shape(fixed ? 1024 : 0)), ctx);  // site: dropped
            evt.Wait(ctx.session);
            break;
        }
        case 6: {  // post blocked: 65 posts without a wait; the twin waits every 32
            PrefetchAsyncContext ctx(workspace);
            comm::AsyncEvent evt;
            for (int i = 0; i < 65; ++i) {
                evt = TPREFETCH_ASYNC(Part(src + 1024 * i), ctx);  // site: blocked
                if (fixed && i % 32 == 31) evt.Wait(ctx.session);
            }
            evt.Wait(ctx.session);
            break;
        }
        case 7: {  // wasted: the region is read (so resident) before it is prefetched
            PrefetchAsyncContext ctx(workspace);
            Row row;
            TASSIGN(row, 0x100);
            if (!fixed) TLOAD(row, Part(src));
            pipe_barrier(PIPE_ALL);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Part(src), ctx);  // site: wasted
            evt.Wait(ctx.session);
            TLOAD(row, Part(src));
            break;
        }
        case 10: {  // wasted: a prefetched region overwritten whole before any read; the twin reads it first
            PrefetchAsyncContext ctx(workspace);
            Row row;
            TASSIGN(row, 0x100);
            comm::AsyncEvent evt = TPREFETCH_ASYNC(Part(dst), ctx);  // site: written-first
            evt.Wait(ctx.session);
            if (fixed) TLOAD(row, Part(dst));
            pipe_barrier(PIPE_ALL);
            TSTORE(Part(dst), row);  // site: written-store
            break;
        }
        case 11: {  // a 1 MiB warm left in flight when the kernel ends (the next run's session is stale); the twin waits
            PrefetchAsyncContext ctx(workspace);
            comm::AsyncEvent warm = TPREFETCH_ASYNC(Whole(src), ctx);  // site: carried-warm
            if (fixed) warm.Wait(ctx.session);
            break;
        }
        case 8: {  // a raw __gm__ store never flushed
            dst[0] = 1.0f;  // site: unflushed
            if (fixed) dcci(dst, SINGLE_CACHE_LINE);
            break;
        }
        case 9: {  // two cores, one 64 B line, each flushing (run with 2 blocks); the twin: a 64 B stride;
                   // args[3] == 2: one line, but block 1 stores only after block 0 has flushed
            if (args[3] == 2 && block == 1) {
                for (int i = 0; i < 20000; ++i) get_sys_cnt();
            }
            __gm__ float* mine = dst + (args[3] == 1 ? 16 * block : block);
            *mine = 2.0f;  // site: lost-write
            dcci(mine, SINGLE_CACHE_LINE);
            break;
        }
    }
    pipe_barrier(PIPE_ALL);
}
