// What a core tells a checker (insight/sanitizer.h) about the kernel it runs.
// Each call is made on the core's own thread, at the core's issue time
// (Core::now_ps), inside the kernel call it reports.
#pragma once

#include <cstdint>

#include "model/core/core_ops.h"

namespace pfsim {

class Core;

class CoreObserver {
public:
    virtual ~CoreObserver() = default;
    // TASSIGN gave a tile [offset, offset + bytes) of buffer b.
    virtual void tile_placed(Core& core, Buffer b, uint64_t offset, uint64_t bytes) = 0;
    // A raw `__gm__` store of [gm, gm + bytes), reported just before it happens.
    virtual void scalar_stored(Core& core, uint64_t gm, uint64_t bytes) = 0;
    // dcci of the line holding gm (entire: every line of the core's data cache).
    virtual void cache_flushed(Core& core, uint64_t gm, bool entire) = 0;
    // The kernel returned (or failed); its pipes are about to drain.
    virtual void kernel_returned(Core& core) = 0;
};

}  // namespace pfsim
