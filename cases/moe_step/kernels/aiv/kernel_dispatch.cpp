// Dispatch. args: 0 tokens, 1 sent (int32, written 1), 2 CommContext. The
// SDMA engine copies this rank's tokens into the peer's window (TPUT_ASYNC,
// across the die link), then the peer's "dispatched" signal is raised.
#include "moe.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    moe::put_and_notify(args, moe::data<float>(args, 0), moe::context(args, 2), moe::kDispatchedAt,
                        moe::kDispatchSignalAt);
    *moe::data<int32_t>(args, 1) = 1;
}
