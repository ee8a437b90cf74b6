// Combine. args: 0 the expert outputs, 1 combine_sent (int32, written 1), 2
// CommContext. The SDMA engine copies the outputs back into the peer's window
// (TPUT_ASYNC on channel group 0, behind whatever was posted there before),
// then the peer's "combined" signal is raised.
#include "moe.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    moe::put_and_notify(args, moe::data<float>(args, 0), moe::context(args, 2), moe::kCombinedAt,
                        moe::kCombineSignalAt);  // moe: the combine
    *moe::data<int32_t>(args, 1) = 1;
}
