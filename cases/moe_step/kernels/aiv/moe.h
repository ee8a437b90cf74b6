// What the MoE step's kernels share: the sizes, the communication window's
// layout and the tensor types. Two ranks: each sends its tokens to the other
// (dispatch), runs the expert FFN on the tokens it received, and returns the
// results to their sender (combine).
#pragma once

#include <cstdint>

#include <pto/pto-inst.hpp>

#include "backend/sdma/sdma_completion_kernel.h"
#include "intrinsic.h"
#include "platform_comm/comm_context.h"
#include "tensor.h"

namespace moe {
constexpr int kTile = 4096;                                   // floats: 16 KiB
constexpr int kTokenTiles = 32;                               // 512 KiB of tokens
constexpr uint64_t kTokenBytes = uint64_t{kTokenTiles} * kTile * 4;
constexpr int kFfnBlocks = 4;
// A rank's window: the tokens its peer dispatched to it, the expert outputs
// its peer combined back into it, then two int32 signals (dispatched,
// combined), 64 bytes apart. The case's window_bytes is kWindowBytes.
constexpr uint64_t kDispatchedAt = 0;
constexpr uint64_t kCombinedAt = kTokenBytes;
constexpr uint64_t kDispatchSignalAt = 2 * kTokenBytes;
constexpr uint64_t kCombineSignalAt = 2 * kTokenBytes + 64;
constexpr uint64_t kWindowBytes = 2 * kTokenBytes + 128;

using Tokens = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 1, kTokenTiles * kTile>, pto::Stride<1, 1, 1, 1, 1>>;
using Piece = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 1, kTile>, pto::Stride<1, 1, 1, 1, 1>>;
using Signal = pto::GlobalTensor<int32_t, pto::Shape<1, 1, 1, 1, 1>, pto::Stride<1, 1, 1, 1, 1>>;
using Vec = pto::Tile<pto::TileType::Vec, float, 1, kTile>;
using Scratch = pto::Tile<pto::TileType::Vec, uint8_t, 1, SDMA_SCRATCH_ALIGNMENT>;

inline __gm__ CommContext* context(__gm__ int64_t* args, int i) { return reinterpret_cast<__gm__ CommContext*>(args[i]); }
inline __gm__ uint8_t* window(__gm__ CommContext* ctx, uint32_t rank) {
    return reinterpret_cast<__gm__ uint8_t*>(ctx->windowsIn[rank]);
}
inline uint32_t peer(__gm__ CommContext* ctx) { return 1 - ctx->rankId; }
template <typename T>
__gm__ T* data(__gm__ int64_t* args, int i) {
    __gm__ ChipTensor* t = reinterpret_cast<__gm__ ChipTensor*>(args[i]);
    return reinterpret_cast<__gm__ T*>(t->buffer.addr) + t->start_offset;
}
inline Signal signal(__gm__ uint8_t* window, uint64_t at) { return Signal(reinterpret_cast<__gm__ int32_t*>(window + at)); }

// One copy to the peer's window on this core's SDMA channel group (the
// session built now: after any prefetch posted on the group before), waited;
// then the peer's signal raised.
inline void put_and_notify(__gm__ int64_t* args, __gm__ float* src, __gm__ CommContext* ctx, uint64_t at,
                           uint64_t signal_at) {
    using namespace pto;
    Scratch scratch;
    TASSIGN(scratch, 0x0);
    comm::AsyncSession session;
    comm::BuildAsyncSession(scratch, get_dma_workspace(args, DMA_WORKSPACE_SDMA), session);
    Tokens from(src), to(reinterpret_cast<__gm__ float*>(window(ctx, peer(ctx)) + at));
    comm::TPUT_ASYNC(to, from, session).Wait(session);
    Signal raised = signal(window(ctx, peer(ctx)), signal_at);
    comm::TNOTIFY(raised, 1, comm::NotifyOp::AtomicAdd);
}
}  // namespace moe
