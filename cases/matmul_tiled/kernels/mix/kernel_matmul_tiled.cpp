// C = A x B on the cube cores in 128 x 128 tiles, K = 2048 streamed in 16
// steps. Each cluster owns one 128-column block n of C and walks the row blocks
// m in order; its B panel is reused from L2 after the first row block, its A
// panels are new each time. A and B are stored tile by tile, so an operand
// panel is one contiguous GM region.
//
// Prefetch runs on vector cores only: each cluster's vector core posts the A
// panels of row blocks 1.. (one 512 KiB post each) at once and waits for them;
// the engine brings each panel in well before the cube reaches it. The cube
// never waits on an event: its loads find the lines resident (or still being
// filled, and then wait for them in L2).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

constexpr int kT = 128;                      // tile edge
constexpr int kSteps = 16;                   // K / 128
constexpr int kTileElems = kT * kT;          // 32 KiB of fp16
constexpr int kPanelElems = kSteps * kTileElems;  // 512 KiB

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* a = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* b = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* c = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    const int64_t m_blocks = args[3];
    const int64_t n = get_block_idx(args);  // this cluster's column block
    const int64_t n_blocks = get_block_num(args);
    __gm__ half* apanels = reinterpret_cast<__gm__ half*>(a->buffer.addr);
    __gm__ half* bpanel = reinterpret_cast<__gm__ half*>(b->buffer.addr) + n * kPanelElems;

#if defined(__DAV_VEC__)
    (void)bpanel;
    (void)c;
    (void)n_blocks;
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;
    using Panel = GlobalTensor<half, Shape<1, 1, 1, 1, kPanelElems>, Stride<1, 1, 1, 1, 1>>;
    PrefetchAsyncContext ctx(workspace);
    comm::AsyncEvent last;
    for (int64_t m = 1; m < m_blocks; ++m) last = TPREFETCH_ASYNC(Panel(apanels + m * kPanelElems), ctx);
    last.Wait(ctx.session);  // one queue, in order: every post is done
#else
    using Operand = GlobalTensor<half, Shape<1, 1, 1, kT, kT>, Stride<1, 1, 1, kT, 1>>;
    using Left = Tile<TileType::Left, half, kT, kT>;
    using Right = Tile<TileType::Right, half, kT, kT>;
    using Acc = Tile<TileType::Acc, float, kT, kT>;
    using Out = GlobalTensor<float, Shape<1, 1, 1, kT, kT>, Stride<1, 1, 1, kT, 1>>;
    Left at[2];
    Right bt[2];
    Acc acc;
    TASSIGN(at[0], 0);
    TASSIGN(at[1], Left::kBytes);
    TASSIGN(bt[0], 0);
    TASSIGN(bt[1], Right::kBytes);
    TASSIGN(acc, 0);
    int64_t step = 0;
    for (int64_t m = 0; m < m_blocks; ++m) {
        for (int64_t s = 0; s < kSteps; ++s, ++step) {
            const int buf = static_cast<int>(step % 2);
            if (step >= 2) wait_flag(PIPE_M, PIPE_MTE2, buf);  // the buffers are free again
            TLOAD(at[buf], Operand(apanels + m * kPanelElems + s * kTileElems));
            TLOAD(bt[buf], Operand(bpanel + s * kTileElems));
            set_flag(PIPE_MTE2, PIPE_M, EVENT_ID2);
            wait_flag(PIPE_MTE2, PIPE_M, EVENT_ID2);
            if (s == 0) {
                TMATMUL(acc, at[buf], bt[buf]);
            } else {
                TMATMUL_ACC(acc, acc, at[buf], bt[buf]);
            }
            set_flag(PIPE_M, PIPE_MTE2, buf);
        }
        set_flag(PIPE_M, PIPE_MTE3, EVENT_ID3);
        wait_flag(PIPE_M, PIPE_MTE3, EVENT_ID3);
        TSTORE(Out(reinterpret_cast<__gm__ float*>(c->buffer.addr) + (m * n_blocks + n) * kTileElems), acc);
        set_flag(PIPE_MTE3, PIPE_V, EVENT_ID4);  // acc is free once stored
        wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID4);
    }
    pipe_barrier(PIPE_ALL);
#endif
}
