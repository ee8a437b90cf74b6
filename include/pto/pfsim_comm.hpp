// The instructions between ranks (pto::comm), on pfsim's dies. Included by
// <pto/pto-inst.hpp> after the tile instructions.
//
// A global tensor that points into another rank's GM (an address a
// communication context's window gives, platform_comm/comm_context.h) is that
// rank's: the core's loads and stores to it cross the die-to-die link
// (model/link/die_link.h). So:
//   TPUT(dst, src, staging)  local GM -> the staging tile in UB -> dst (a peer's
//                            GM, or this die's), one staging tile at a time;
//   TGET(dst, src, staging)  the same from src (a peer's GM) to local dst;
//   TNOTIFY(signal, v, op)   sets or atomically adds v to an int32 signal;
//   TWAIT(signal, v, cmp)    polls a signal until `signal cmp v` holds.
//   TGET_ASYNC / TPUT_ASYNC(dst, src, session)  one SDMA copy post on the
//                            session's queue (the ring, doorbell and post-done
//                            record prefetches use), an AsyncEvent to Wait or
//                            Test on; BuildAsyncSession builds the session.
// The others are synchronous: each returns with its data moved (pipes drained). A
// transfer or signal outside what its rank allocated (beyond the window), or in
// no rank's GM, fails the kernel naming the instruction; a wait never
// satisfied stops at the graph's time limit naming the signal, its value and
// its last writer (CoreOps::signal_wait).
#pragma once

#include <algorithm>
#include <cstdint>

namespace pto::comm {

namespace detail {

// Every element of `global` lies in runs along dimension 4: calls
// run(row, first_element_pointer, elements) for each row, in order.
template <typename GlobalT, typename Run>
void for_each_row(const char* instruction, const GlobalT& global, Run run) {
    if (global.GetStride(4) != 1) pto::detail::fail(instruction, "the global tensor's last dimension is not contiguous");
    int64_t rows = 1;
    for (int k = 0; k < 4; ++k) rows *= global.GetShape(k);
    for (int64_t r = 0; r < rows; ++r) {
        int64_t offset = 0, rest = r;
        for (int k = 3; k >= 0; --k) {
            offset += (rest % global.GetShape(k)) * global.GetStride(k);
            rest /= global.GetShape(k);
        }
        run(r, global.data() + offset, global.GetShape(4));
    }
}

// src -> staging tile -> dst, a staging tile's bytes at a time, row by row
// (both tensors the same shape).
template <typename GlobalDst, typename GlobalSrc, typename TileT>
void copy_through(const char* instruction, const GlobalDst& dst, const GlobalSrc& src, TileT& staging) {
    using T = typename GlobalSrc::DType;
    static_assert(sizeof(T) == sizeof(typename GlobalDst::DType), "the two global tensors' element sizes differ");
    static_assert(TileT::type == TileType::Vec, "the staging tile lives in UB (TileType::Vec)");
    for (int k = 0; k < 5; ++k) {
        if (dst.GetShape(k) != src.GetShape(k)) pto::detail::fail(instruction, "the two global tensors' shapes differ");
    }
    auto& core = pfsim::current_core();
    const uint64_t capacity = static_cast<uint64_t>(TileT::rows) * TileT::cols * sizeof(typename TileT::DType);
    auto* ub = reinterpret_cast<uint8_t*>(staging.data());
    // Row r's destination: the same row of dst.
    auto dst_row = [&](int64_t r) {
        int64_t offset = 0, rest = r;
        for (int k = 3; k >= 0; --k) {
            offset += (rest % dst.GetShape(k)) * dst.GetStride(k);
            rest /= dst.GetShape(k);
        }
        return dst.data() + offset;
    };
    if (dst.GetStride(4) != 1) pto::detail::fail(instruction, "the destination's last dimension is not contiguous");
    for_each_row(instruction, src, [&](int64_t r, const auto* from, int64_t elements) {
        const uint64_t bytes = static_cast<uint64_t>(elements) * sizeof(T);
        const uint64_t src_gm = core.allocated_gm(instruction, "source", from, bytes);
        const uint64_t dst_gm = core.allocated_gm(instruction, "destination", dst_row(r), bytes);
        for (uint64_t off = 0; off < bytes; off += capacity) {
            const uint64_t n = std::min(capacity, bytes - off);
            core.load(src_gm + off, ub, n);
            core.barrier();  // the store reads what the load brought
            core.store(dst_gm + off, ub, n);
            core.barrier();  // the next load overwrites the staging tile
        }
    });
}

}  // namespace detail

// dst (usually a peer's GM) = src (local GM), through `staging` in UB.
template <typename GlobalDst, typename GlobalSrc, typename TileT>
void TPUT(GlobalDst& dst, GlobalSrc& src, TileT& staging) {
    detail::copy_through("TPUT", dst, src, staging);
}

// dst (local GM) = src (usually a peer's GM), through `staging` in UB.
template <typename GlobalDst, typename GlobalSrc, typename TileT>
void TGET(GlobalDst& dst, GlobalSrc& src, TileT& staging) {
    detail::copy_through("TGET", dst, src, staging);
}

// The int32 signal (element 0 of `signal`, usually in a peer's GM) set to, or
// atomically increased by, `value`.
template <typename GlobalSignal>
void TNOTIFY(GlobalSignal& signal, int32_t value, NotifyOp op) {
    static_assert(sizeof(typename GlobalSignal::DType) == 4, "TNOTIFY: a signal is an int32_t");
    pfsim::current_core().signal_notify(reinterpret_cast<const volatile int32_t*>(signal.data()), value,
                                        op == NotifyOp::AtomicAdd);
}

// Waits until the int32 signal (element 0 of `signal`, usually local) compares
// `cmp` against `value`.
template <typename GlobalSignal>
void TWAIT(GlobalSignal& signal, int32_t value, WaitCmp cmp) {
    static_assert(sizeof(typename GlobalSignal::DType) == 4, "TWAIT: a signal is an int32_t");
    pfsim::current_core().signal_wait(reinterpret_cast<const volatile int32_t*>(signal.data()), value,
                                      static_cast<int>(cmp));
}

// The session TGET_ASYNC / TPUT_ASYNC post on: the calling core's channel
// group of the async-DMA workspace. False (an invalid session) without a
// workspace or ring. The scratch tile is PTO-ISA's staging of the request
// fields; pfsim builds requests in its own memory and only checks it is in UB.
template <typename ScratchTile>
bool BuildAsyncSession(ScratchTile& scratch, __gm__ uint8_t* workspace, AsyncSession& session, uint32_t sync_id = 0) {
    static_assert(ScratchTile::type == TileType::Vec, "BuildAsyncSession: the scratch tile lives in UB");
    (void)scratch.data();  // assigned (TASSIGN) and inside UB
    if (!pfsim::rt::build_async_session(workspace, session)) return false;
    session.sync_id = sync_id;
    return true;
}

namespace detail {
// One contiguous run of `global`: its GM address, checked against what its rank allocated.
template <typename GlobalT>
uint64_t flat_run(const char* instruction, const char* what, const GlobalT& global) {
    int64_t expect = 1;
    for (int k = 4; k >= 0; --k) {
        if (global.GetShape(k) > 1 && global.GetStride(k) != expect) {
            pto::detail::fail(instruction, "an async copy moves one contiguous region (a packed global tensor)");
        }
        expect *= global.GetShape(k);
    }
    return pfsim::current_core().allocated_gm(instruction, what, global.data(),
                                              static_cast<uint64_t>(global.elements()) * sizeof(typename GlobalT::DType));
}

template <typename GlobalDst, typename GlobalSrc>
AsyncEvent copy_async(const char* instruction, const GlobalDst& dst, const GlobalSrc& src, AsyncSession& session) {
    const uint64_t bytes = static_cast<uint64_t>(src.elements()) * sizeof(typename GlobalSrc::DType);
    if (static_cast<uint64_t>(dst.elements()) * sizeof(typename GlobalDst::DType) != bytes) {
        pto::detail::fail(instruction, "the two global tensors' sizes differ");
    }
    return pfsim::rt::copy_async(instruction, flat_run(instruction, "destination", dst),
                                 flat_run(instruction, "source", src), bytes, session);
}
}  // namespace detail

// dst (local GM) = src (usually a peer's GM), by the die's SDMA engine.
template <typename GlobalDst, typename GlobalSrc>
AsyncEvent TGET_ASYNC(GlobalDst& dst, GlobalSrc& src, AsyncSession& session) {
    return detail::copy_async("TGET_ASYNC", dst, src, session);
}

// dst (usually a peer's GM) = src (local GM), by the die's SDMA engine.
template <typename GlobalDst, typename GlobalSrc>
AsyncEvent TPUT_ASYNC(GlobalDst& dst, GlobalSrc& src, AsyncSession& session) {
    return detail::copy_async("TPUT_ASYNC", dst, src, session);
}

}  // namespace pto::comm
