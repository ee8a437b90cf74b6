// A direct call path for a core's scalar reads of its own die's GM through the
// L2 (Core -> L2Cache; MemoryTarget's idea for a kernel's pointer loads, the
// hottest path of a host-C++ kernel): the effects of the same read through the
// cached socket, without the payload, the socket and the copy of the bytes.
#pragma once

#include <cstdint>

#include "model/common/tick.h"

namespace pfsim {

class ScalarReadTarget {
public:
    virtual ~ScalarReadTarget() = default;
    // A read of the `len` bytes at GM address `addr`, all in one line, issued
    // at `issue` by the initiator the cached socket numbers `initiator`: the
    // same cache state, statistics, observer calls and completion time (the
    // return value) as that read through the cached socket, but no bytes moved.
    // The caller reads them in place: they live in GM's host mapping, where
    // the socket's read would have copied them from. The caller has checked
    // that the range is in GM.
    virtual Tick read_in_place(int initiator, uint64_t addr, uint64_t len, Tick issue) = 0;
};

}  // namespace pfsim
