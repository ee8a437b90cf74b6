// args: 0 input (ChipTensor), 1 CommContext. TPUT the input into the peer's
// window, then add 1 to the peer's signal.
#include "scene.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    auto* ctx = reinterpret_cast<__gm__ CommContext*>(args[1]);
    const uint32_t peer = 1 - ctx->rankId;
    scene::Flat src(scene::data_of(reinterpret_cast<__gm__ ChipTensor*>(args[0])));
    scene::Flat dst(reinterpret_cast<__gm__ float*>(scene::window_of(ctx, peer)));
    Tile<TileType::Vec, float, 1, 256> staging;
    TASSIGN(staging, 0x0);
    comm::TPUT(dst, src, staging);
    scene::Signal signal(reinterpret_cast<__gm__ int32_t*>(scene::window_of(ctx, peer) + scene::kSignalOffset));
    comm::TNOTIFY(signal, 1, comm::NotifyOp::AtomicAdd);
}
