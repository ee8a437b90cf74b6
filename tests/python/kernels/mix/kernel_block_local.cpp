// [[block_local]] storage as PyPTO's generated mixed kernels use it: each
// vector core keeps its lane in a per-core static, then waits for the cube
// (so that both vector cores have set theirs before either reads it back),
// and writes what it reads into Y[lane]. Built for both core types; the
// tpipe_orch.cpp task layout (A, B unused; Y; FIFO unused; two scalars).
#include <cstdint>

#include "intrinsic.h"

[[block_local]] static int32_t lane;
#define get_subblockid() lane

#include <pto/pto-inst.hpp>
#include "tensor.h"

using namespace pto;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    if (pfsim::current_core().core_kind() == pfsim::CoreKind::Aic) {
        ffts_cross_core_sync(PIPE_S, 0x1 | (CV_CORES_SYNC << 4) | (3 << 8));
        return;
    }
    lane = get_sub_block_id(args);
    wait_flag_dev(3);
    __gm__ float* y = reinterpret_cast<__gm__ float*>(reinterpret_cast<__gm__ ChipTensor*>(args[2])->buffer.addr);
    y[get_sub_block_id(args)] = static_cast<float>(get_subblockid());
    dcci(y, SINGLE_CACHE_LINE);
}
