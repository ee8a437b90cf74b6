// A direct call path for a core's tile moves (TLOAD, TSTORE) through the L2,
// line by line (Core -> L2Cache; MemoryTarget's idea for the busiest path of a
// tile kernel): the effects of a plain read or write through the cached socket,
// one with no extension on its payload (not around the L2, not an atomic add,
// not a what-if's resident range), without the payload and the socket.
#pragma once

#include <cstdint>

#include "model/common/tick.h"

namespace pfsim {

class TileMoveTarget {
public:
    virtual ~TileMoveTarget() = default;
    // Reads the `len` bytes at GM address `addr` into `buf`, or writes them from
    // it, issued at `issue` by the initiator the cached socket numbers
    // `initiator`: the same bytes moved, cache state, statistics, observer calls
    // and completion time (`done`) as that access through the cached socket.
    // False, with nothing done, where the socket answers an address error (an
    // empty range, or one not in GM).
    virtual bool move_line(int initiator, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue,
                           Tick& done) = 0;
    // The bytes alone of [addr, addr + len), within GM: reads them into `buf` or
    // writes them from it, as move_line would, with no time and nothing counted.
    // Lines timed by move_line with a null `buf` take their bytes here: one copy
    // for a run of lines, where nothing else reads or writes them in between.
    virtual void move_values(bool write, uint64_t addr, uint8_t* buf, uint64_t len) = 0;
};

}  // namespace pfsim
