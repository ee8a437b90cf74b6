// A direct call path to a memory target, for hot paths between blocks that are
// wired once (the TLM-2.0 idea of a direct memory interface, with timing): the
// same functional and timing effects as the target's b_transport, without the
// payload and socket overhead.
#pragma once

#include <cstdint>

#include "model/common/tick.h"

namespace pfsim {

class MemoryTarget {
public:
    virtual ~MemoryTarget() = default;
    // Moves `len` bytes at `addr` (reads into or writes from `buf`; a null `buf`
    // asks for timing only), issued at `issue`; returns the completion time. `cached` selects the
    // data path rather than the uncached one (they are counted apart). The caller
    // has checked the range.
    virtual Tick access(bool cached, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue) = 0;
    // The bytes alone, as the target's transport_dbg moves them: reads `len`
    // bytes at `addr` into `buf`, or writes them from it; no time, nothing
    // counted. False, with nothing moved, where the range is not the target's.
    virtual bool copy(bool write, uint64_t addr, uint8_t* buf, uint64_t len) = 0;
};

}  // namespace pfsim
