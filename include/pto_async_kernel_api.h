// pfsim's "pto_async_kernel_api.h": deferred completion (protocol §3.5). A
// kernel registers completion conditions in its task's slab and returns; the
// scheduler completes the task -- and starts its consumers -- only once every
// condition is met. Needs <pto/pto-inst.hpp> and "intrinsic.h" first.
#pragma once

#include <cstdint>
#include <vector>

#include "intrinsic.h"
#include "runtime/kernel_abi.h"
#include "runtime/prefetch.h"

using pfsim::rt::COMPLETION_ENGINE_SDMA;
using pfsim::rt::COMPLETION_TYPE_COUNTER;
using pfsim::rt::COMPLETION_TYPE_SDMA_EVENT_RECORD;
using pfsim::rt::CompletionToken;
using pfsim::rt::PTO2_ERROR_ASYNC_COMPLETION_INVALID;
using pfsim::rt::PTO2_ERROR_ASYNC_REGISTRATION_FAILED;
using pfsim::rt::PTO2_ERROR_ASYNC_WAIT_OVERFLOW;
using pfsim::rt::SIMPLER_ERROR_ASYNC_COMPLETION_INVALID;
using pfsim::rt::SIMPLER_ERROR_ASYNC_REGISTRATION_FAILED;
using pfsim::rt::SIMPLER_ERROR_ASYNC_WAIT_OVERFLOW;

// The task's completion context (a copy of its LocalContext's), its slab line
// invalidated first.
static __aicore__ inline AsyncCtx get_async_ctx(__gm__ int64_t* args) {
    AsyncCtx ctx = pfsim_intrinsic::local_context(args)->async_ctx;
    if (ctx.completion_count) dcci(ctx.completion_count, SINGLE_CACHE_LINE);
    return ctx;
}

static __aicore__ inline bool async_ctx_is_deferred(const AsyncCtx& ctx) { return ctx.task_token.is_valid(); }

namespace pto2::detail {
inline void defer_error(AsyncCtx& ctx, int32_t code) {
    if (ctx.completion_error_code) *ctx.completion_error_code = code;
}
// The slab's lines out to GM, then a barrier: the scheduler reads GM.
inline void defer_flush(AsyncCtx& ctx) {
    if (ctx.completion_count) dcci(ctx.completion_count, ENTIRE_DATA_CACHE, CACHELINE_OUT);
    dsb(DSB_DDR);
    pipe_barrier(PIPE_ALL);
}
}  // namespace pto2::detail

// Appends one condition; on the 65th it latches 102 and returns false.
static __aicore__ inline bool register_completion_condition(AsyncCtx& ctx, const CompletionToken& token) {
    if (!async_ctx_is_deferred(ctx) || !ctx.completion_count) return false;
    const uint32_t n = *ctx.completion_count;
    if (n >= ctx.completion_capacity) {
        pto2::detail::defer_error(ctx, pfsim::rt::PTO2_ERROR_ASYNC_WAIT_OVERFLOW);
        return false;
    }
    volatile DeferredCompletionEntry* e = ctx.completion_entries + n;
    e->addr = token.addr;
    e->backend_cookie = token.backend_cookie;
    e->expected_value = token.expected_value;
    e->engine = token.engine;
    e->completion_type = token.completion_type;
    *ctx.completion_count = n + 1;
    return true;
}

// The task completes once *counter >= expected.
static __aicore__ inline bool save_expected_notification_counter(AsyncCtx& ctx, volatile __gm__ uint32_t* counter,
                                                                 uint32_t expected) {
    const CompletionToken token{reinterpret_cast<uint64_t>(counter), expected, COMPLETION_ENGINE_SDMA,
                                COMPLETION_TYPE_COUNTER, 0};
    const bool ok = register_completion_condition(ctx, token);
    pto2::detail::defer_flush(ctx);
    return ok;
}

namespace pto2::detail {
// An SDMA event for deferred completion: one SDMA_EVENT_RECORD condition per
// queue of its post. Not deferred: waited inline. Handle 0: nothing. An event
// that cannot be decoded: 101.
inline bool register_pto_async_event(AsyncCtx& ctx, const pto::comm::AsyncEvent& event, pto::comm::AsyncSession& session) {
    if (!async_ctx_is_deferred(ctx)) return event.Wait(session);
    std::vector<std::pair<uint64_t, uint64_t>> records;
    if (!pfsim::rt::event_completion_records(event, session, &records)) {
        defer_error(ctx, pfsim::rt::PTO2_ERROR_ASYNC_COMPLETION_INVALID);
        defer_flush(ctx);
        return false;
    }
    bool ok = true;
    for (const auto& [gm, post_id] : records) {
        const CompletionToken token{pfsim::current_core().device_pointer(gm), 0, COMPLETION_ENGINE_SDMA,
                                    COMPLETION_TYPE_SDMA_EVENT_RECORD, post_id};
        ok = register_completion_condition(ctx, token) && ok;
    }
    defer_flush(ctx);
    return ok;
}
}  // namespace pto2::detail
