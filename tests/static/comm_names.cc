// The communication names a kernel of PTO-ISA's a2a3 comm instructions uses,
// as PyPTO's generated kernels spell them: they compile against pfsim's
// onboard headers. With -DPFSIM_UNKNOWN_NAME one name PTO-ISA does not have
// must not (the negative control).
#include <cstdint>

#include <pto/pto-inst.hpp>

#include "backend/sdma/sdma_completion_kernel.h"
#include "platform_comm/comm_context.h"

using namespace pto;

void comm_kernel(__gm__ float* remote, __gm__ float* local, __gm__ int32_t* signal, __gm__ CommContext* ctx) {
    comm::WaitCmp cmp = comm::WaitCmp::GE;
    comm::NotifyOp op = comm::NotifyOp::AtomicAdd;
    using Flat = GlobalTensor<float, Shape<1, 1, 1, 1, 256>, Stride<256, 256, 256, 256, 1>>;
    using Sig = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, Stride<1, 1, 1, 1, 2>, Layout::DN>;
    Tile<TileType::Vec, float, 1, 256, BLayout::RowMajor, -1, -1> staging(1, 256);
    TASSIGN(staging, 0x0);
    Flat dst(remote + ctx->windowsIn[ctx->rankId ^ 1] % 4), src(local);
    comm::TPUT(dst, src, staging);
    comm::TGET(src, dst, staging);
    Sig s(signal);
    comm::TNOTIFY(s, 1, op);
    comm::TNOTIFY(s, 0, comm::NotifyOp::Set);
    comm::TWAIT(s, static_cast<int32_t>(ctx->rankNum), cmp);
    for (comm::WaitCmp c : {comm::WaitCmp::EQ, comm::WaitCmp::NE, comm::WaitCmp::GT, comm::WaitCmp::LT, comm::WaitCmp::LE}) {
        comm::TWAIT(s, 0, c);
    }
    Tile<TileType::Vec, uint8_t, 1, SDMA_SCRATCH_ALIGNMENT> scratch;
    TASSIGN(scratch, 0x0);
    AsyncCtx async_ctx{};
    send_request_entry(async_ctx, SdmaTget(src, dst, scratch, reinterpret_cast<__gm__ uint8_t*>(ctx->workSpace)));
    send_request_entry(async_ctx, SdmaTput(dst, src, scratch, nullptr, 1));
    comm::AsyncSession session;
    if (comm::BuildAsyncSession(scratch, nullptr, session)) {
        comm::AsyncEvent e = comm::TPUT_ASYNC(dst, src, session);
        e = comm::TGET_ASYNC(src, dst, session);
        (void)e.Wait(session);
    }
#ifdef PFSIM_UNKNOWN_NAME
    comm::TWAIT(s, 0, comm::WaitCmp::ALWAYS);
#endif
}
