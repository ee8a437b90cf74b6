// args: 0 fetched (ChipTensor), 1 CommContext. The die's SDMA engine fetches
// the peer's window into `fetched`; the task completes when the copy has.
#include "scene.h"

#include "backend/sdma/sdma_completion_kernel.h"
#include "intrinsic.h"
#include "pto_async_kernel_api.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    auto* ctx = reinterpret_cast<__gm__ CommContext*>(args[1]);
    const uint32_t peer = 1 - ctx->rankId;
    scene::Flat dst(scene::data_of(reinterpret_cast<__gm__ ChipTensor*>(args[0])));
    scene::Flat src(reinterpret_cast<__gm__ float*>(scene::window_of(ctx, peer)));
    Tile<TileType::Vec, uint8_t, 1, SDMA_SCRATCH_ALIGNMENT> scratch;
    TASSIGN(scratch, 0x0);
    AsyncCtx async_ctx = get_async_ctx(args);
    send_request_entry(async_ctx, SdmaTget(dst, src, scratch, get_dma_workspace(args, DMA_WORKSPACE_SDMA)));
}
