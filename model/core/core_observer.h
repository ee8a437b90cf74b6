// What a core tells a checker (insight/sanitizer.h) about the kernel it runs.
// Each call is made on the core's own thread, at the core's issue time
// (Core::now_ps), inside the kernel call it reports. Every method does nothing
// unless overridden: an observer overrides what it watches.
#pragma once

#include <cstdint>

#include "model/common/tick.h"
#include "pfsim_kernel_abi.h"

namespace pfsim {

class Core;

class CoreObserver {
public:
    virtual ~CoreObserver() = default;
    // TASSIGN gave a tile [offset, offset + bytes) of buffer b.
    virtual void tile_placed(Core&, Buffer /*b*/, uint64_t /*offset*/, uint64_t /*bytes*/) {}
    // A raw `__gm__` store of [gm, gm + bytes), reported just before it happens.
    virtual void scalar_stored(Core&, uint64_t /*gm*/, uint64_t /*bytes*/) {}
    // A raw `__gm__` load of [gm, gm + bytes), reported just before it happens.
    virtual void scalar_loaded(Core&, uint64_t /*gm*/, uint64_t /*bytes*/) {}
    // dcci of the line holding gm (entire: every line of the core's data cache).
    virtual void cache_flushed(Core&, uint64_t /*gm*/, bool /*entire*/) {}
    // The kernel returned (or failed); its pipes are about to drain.
    virtual void kernel_returned(Core&) {}
    // A TLOAD (MTE2) or TSTORE (MTE3) of [gm, gm + bytes) begins: its line
    // accesses reach L2 between this call and transfer_ended, which says how
    // long its data came later than the engine's bandwidth alone would bring it
    // (the core's l2_stall).
    virtual void transfer_started(Core&, bool /*write*/, uint64_t /*gm*/, uint64_t /*bytes*/) {}
    virtual void transfer_ended(Core&, bool /*write*/, uint64_t /*gm*/, uint64_t /*bytes*/, Tick /*stall_ps*/) {}
};

}  // namespace pfsim
