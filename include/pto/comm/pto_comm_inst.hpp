// pfsim's <pto/comm/pto_comm_inst.hpp>: the async names prefetch kernels use
// (pto::comm::AsyncEvent, AsyncSession, PrefetchAsyncContext). The multi-card
// communication instructions (TNOTIFY, TWAIT, TPUT, TGET) are not modelled.
#pragma once

#include "runtime/prefetch.h"
#include "runtime/sdma_workspace.h"

namespace pto {
using PrefetchAsyncContext = pfsim::rt::PrefetchAsyncContext;
namespace comm {
using AsyncEvent = pfsim::rt::AsyncEvent;
using AsyncSession = pfsim::rt::AsyncSession;
}  // namespace comm
}  // namespace pto
