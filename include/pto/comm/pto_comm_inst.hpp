// pfsim's <pto/comm/pto_comm_inst.hpp>: PTO-ISA's communication names.
//
// The async names prefetch kernels use (AsyncEvent, AsyncSession,
// PrefetchAsyncContext), and the signal types of the instructions between
// ranks: NotifyOp (TNOTIFY) and WaitCmp (TWAIT, with PTO-ISA's values). The
// instructions themselves (TPUT, TGET, TNOTIFY, TWAIT) are in
// pto/pfsim_comm.hpp, after the tile instructions they use.
#pragma once

#include <cstdint>

#include "runtime/prefetch.h"
#include "runtime/sdma_workspace.h"

namespace pto {
using PrefetchAsyncContext = pfsim::rt::PrefetchAsyncContext;
namespace comm {
using AsyncEvent = pfsim::rt::AsyncEvent;
using AsyncSession = pfsim::rt::AsyncSession;

// How TNOTIFY changes a signal.
enum class NotifyOp : uint8_t {
    AtomicAdd = 0,
    Set = 1,
};

// What TWAIT waits for: signal CMP value.
enum class WaitCmp : uint8_t {
    EQ = 0,
    NE = 1,
    GT = 2,
    GE = 3,
    LT = 4,
    LE = 5,
};
}  // namespace comm
}  // namespace pto
