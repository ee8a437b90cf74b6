// What L2 tells a checker (insight/advisor.h) about its lines. Lines are line
// indices (address / l2.line_bytes). Each call is made inside the access it
// reports, with that access's simulated times.
#pragma once

#include <cstdint>

#include "model/common/tick.h"

namespace pfsim {

class L2Observer {
public:
    virtual ~L2Observer() = default;
    // A prefetch found `line` resident (filled = false), or brought it in:
    // issued at `issue`, its data in L2 from `ready`.
    virtual void prefetched(uint64_t line, bool filled, Tick issue, Tick ready) = 0;
    // A core's access to `line` from `start`: a hit (the line's data in L2 from
    // `ready`, which may be later) or a miss. first_touch: a hit on a line a
    // prefetch filled and no core has touched since. around: a read around the
    // L2 (through GM's uncached alias), whose miss allocates nothing.
    virtual void demand(uint64_t line, bool write, bool hit, bool first_touch, Tick start, Tick ready, bool around) = 0;
    // `victim` left L2 to make room for `line`, a prefetch fill (by_prefetch)
    // or a demand miss; untouched: a prefetch filled it and no core touched it.
    virtual void evicted(uint64_t victim, bool untouched, bool by_prefetch, uint64_t line) = 0;
};

}  // namespace pfsim
