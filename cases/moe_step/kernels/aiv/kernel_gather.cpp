// The step's end. args: 0 combine_sent (orders it after this rank's
// combine), 1 combined (out), 2 CommContext. Waits for the peer's combine
// into this rank's window and copies it out.
#include "moe.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ CommContext* ctx = moe::context(args, 2);
    __gm__ uint8_t* window = moe::window(ctx, ctx->rankId);
    moe::Signal combined = moe::signal(window, moe::kCombineSignalAt);
    comm::TWAIT(combined, 1, comm::WaitCmp::GE);
    __gm__ float* from = reinterpret_cast<__gm__ float*>(window + moe::kCombinedAt);
    __gm__ float* to = moe::data<float>(args, 1);
    moe::Vec t;
    TASSIGN(t, 0x0);
    for (int i = 0; i < moe::kTokenTiles; ++i) {
        TLOAD(t, moe::Piece(from + static_cast<uint64_t>(i) * moe::kTile));
        set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
        TSTORE(moe::Piece(to + static_cast<uint64_t>(i) * moe::kTile), t);
        set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
        wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
    }
}
