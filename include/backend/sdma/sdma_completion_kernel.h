// simpler's "backend/sdma/sdma_completion_kernel.h": an SDMA copy between
// ranks whose task completes when the copy has (deferred completion).
//
//   send_request_entry(async_ctx, SdmaTget(dst, src, scratch, workspace))
//
// builds an async session on the workspace (the calling core's channel group),
// posts the copy (pto::comm::TGET_ASYNC / TPUT_ASYNC: SDMA copy requests on the
// queue prefetches use, include/pto/pfsim_comm.hpp) and registers its post-done
// records as the task's completion conditions, so that the scheduler completes
// the task, and releases its consumers, once the bytes have landed. Outside a
// deferred task it waits for the copy inline. A session that cannot be built
// latches PTO2_ERROR_ASYNC_COMPLETION_INVALID (101) and returns false.
#pragma once

#include <cstdint>

#include <pto/pto-inst.hpp>

#include "pto_async_kernel_api.h"

// The scratch tile's size and alignment in UB.
inline constexpr uint32_t SDMA_SCRATCH_ALIGNMENT = 32;

enum class SdmaOp : uint8_t {
    TGET = 0,
    TPUT = 1,
};

// What send_request_entry is to do: built by SdmaTget / SdmaTput.
template <typename DstTensor, typename SrcTensor, typename ScratchTileT>
struct SdmaRequestDescriptor {
    SdmaOp op;
    DstTensor dst;
    SrcTensor src;
    ScratchTileT scratch;
    __gm__ uint8_t* workspace;
    uint32_t sync_id;
};

// dst (local) = src (a peer's window).
template <typename DstTensor, typename SrcTensor, typename ScratchTileT>
inline SdmaRequestDescriptor<DstTensor, SrcTensor, ScratchTileT> SdmaTget(const DstTensor& dst, const SrcTensor& src,
                                                                          const ScratchTileT& scratch,
                                                                          __gm__ uint8_t* workspace, uint32_t sync_id = 0) {
    return {SdmaOp::TGET, dst, src, scratch, workspace, sync_id};
}

// dst (a peer's window) = src (local).
template <typename DstTensor, typename SrcTensor, typename ScratchTileT>
inline SdmaRequestDescriptor<DstTensor, SrcTensor, ScratchTileT> SdmaTput(const DstTensor& dst, const SrcTensor& src,
                                                                          const ScratchTileT& scratch,
                                                                          __gm__ uint8_t* workspace, uint32_t sync_id = 0) {
    return {SdmaOp::TPUT, dst, src, scratch, workspace, sync_id};
}

template <typename DstTensor, typename SrcTensor, typename ScratchTileT>
inline bool send_request_entry(AsyncCtx& ctx, SdmaRequestDescriptor<DstTensor, SrcTensor, ScratchTileT> desc) {
    pto::comm::AsyncSession session;
    if (!pto::comm::BuildAsyncSession(desc.scratch, desc.workspace, session, desc.sync_id)) {
        pto2::detail::defer_error(ctx, pfsim::rt::PTO2_ERROR_ASYNC_COMPLETION_INVALID);
        pto2::detail::defer_flush(ctx);
        return false;
    }
    const pto::comm::AsyncEvent event = desc.op == SdmaOp::TGET ? pto::comm::TGET_ASYNC(desc.dst, desc.src, session)
                                                                : pto::comm::TPUT_ASYNC(desc.dst, desc.src, session);
    return pto2::detail::register_pto_async_event(ctx, event, session);
}
