// args: 0 output (ChipTensor), 1 CommContext. Waits for this rank's signal,
// then output = this rank's window + 1.
#include "scene.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    auto* ctx = reinterpret_cast<__gm__ CommContext*>(args[1]);
    __gm__ uint8_t* window = scene::window_of(ctx, ctx->rankId);
    scene::Signal signal(reinterpret_cast<__gm__ int32_t*>(window + scene::kSignalOffset));
    comm::TWAIT(signal, 1, comm::WaitCmp::GE);
    scene::add_one(reinterpret_cast<__gm__ float*>(window), scene::data_of(reinterpret_cast<__gm__ ChipTensor*>(args[0])));
}
