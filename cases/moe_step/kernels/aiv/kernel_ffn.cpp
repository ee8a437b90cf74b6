// The expert FFN, four blocks. args: 0 sent (orders it after this rank's
// dispatch), 1 this step's expert weights (kFfnBlocks x 128 tiles), 2 the
// expert outputs, 3 CommContext. Waits for the peer's tokens in this rank's
// window; block k sums its quarter of the weights tile by tile (streamed
// through UB: what the warm speeds up), then for its eight token tiles writes
// (token + sum) x (this rank + 1).
#include "moe.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ CommContext* ctx = moe::context(args, 3);
    const int k = static_cast<int>(get_block_idx(args));
    __gm__ uint8_t* window = moe::window(ctx, ctx->rankId);
    moe::Signal dispatched = moe::signal(window, moe::kDispatchSignalAt);
    comm::TWAIT(dispatched, 1, comm::WaitCmp::GE);
    moe::Vec acc, w;
    TASSIGN(acc, 0x0);
    TASSIGN(w, moe::kTile * 4);
    TEXPANDS(acc, 0.0f);
    __gm__ float* weights = moe::data<float>(args, 1);
    constexpr int kTilesPerBlock = 128;
    for (int i = k * kTilesPerBlock; i < (k + 1) * kTilesPerBlock; ++i) {
        TLOAD(w, moe::Piece(weights + static_cast<uint64_t>(i) * moe::kTile));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TADD(acc, acc, w);
        set_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
    }
    const float scale = static_cast<float>(ctx->rankId + 1);
    __gm__ float* tokens = reinterpret_cast<__gm__ float*>(window + moe::kDispatchedAt);
    __gm__ float* out = moe::data<float>(args, 2);
    constexpr int kTokenTilesPerBlock = moe::kTokenTiles / moe::kFfnBlocks;
    for (int t = k * kTokenTilesPerBlock; t < (k + 1) * kTokenTilesPerBlock; ++t) {
        TLOAD(w, moe::Piece(tokens + static_cast<uint64_t>(t) * moe::kTile));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TADD(w, w, acc);
        TMULS(w, w, scale);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(moe::Piece(out + static_cast<uint64_t>(t) * moe::kTile), w);
        set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
        wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
    }
}
