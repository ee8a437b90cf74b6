// Hits on one L2 line from different initiators are served one at a time
// (a2a3-hardware.md: same-address access from many cores is serialised).
//
// Contract: each line is a port with one service slot per `interval` of
// simulated time (slot k covers [k * interval, (k + 1) * interval)). A hit at
// time t takes the first free slot from t's on and is served at the later of t
// and that slot's start; its initiator then holds the line, and its own further
// hits while it holds it (in the same or the next slot) cost nothing and take no
// slot, so one core reading a line piece by piece is not serialised against
// itself. Slots are kept per time, not as one "next free" time, so a hit that
// arrives late in simulation but early in simulated time (cores run up to a
// quantum apart) takes the free slot at its own time instead of queueing behind
// hits made for later times: the result does not depend on the order in which
// the cores' quanta run. A line remembers the last kWindow slots before its
// latest one; a hit older than that is served at its own time (no contention is
// remembered for it). interval 0: no limit.
// A line slot's port belongs to the line last hit there: another line's first
// hit finds it empty (nothing of the line before is kept). A fill touches none
// of it, so a line refilled into the slot it left, before another line was hit
// there, finds its own recent slots still taken.
#pragma once

#include <cstdint>
#include <vector>

#include "base/zero_buffer.h"
#include "model/common/tick.h"

namespace pfsim {

class SameLinePorts {
public:
    static constexpr uint64_t kWindow = 64;  // slots remembered per line

    // `line_slots`: the L2's sets x ways.
    SameLinePorts(uint64_t line_slots, Tick interval) : interval_(interval), ports_(interval ? line_slots : 0) {}

    // Initiator `who` hits `line` (a GM line number below 2^32 - 1), held in
    // `line_slot`, at `t`: when it is served.
    Tick serve(uint64_t line_slot, uint64_t line, int who, Tick t) {
        if (!interval_) return t;
        Port& l = ports_[line_slot];
        const auto owner = static_cast<uint32_t>(line + 1);
        if (l.owner != owner) l = Port{0, 0, 0, 0, owner};
        uint64_t k = t / interval_;
        if (l.holder == who + 1 && k <= l.held + 1) return t;
        if (l.used == 0) l.base = k >= kWindow ? k - (kWindow - 1) : 0;
        if (k < l.base) return t;  // older than anything remembered
        for (;; ++k) {
            if (k >= l.base + kWindow) slide(l, k - (kWindow - 1));
            const uint64_t bit = uint64_t{1} << (k - l.base);
            if (!(l.used & bit)) {
                l.used |= bit;
                break;
            }
        }
        l.holder = who + 1;
        l.held = k;
        return std::max(t, k * interval_);
    }

    // A hint: `line_slot` is likely hit soon (a line just filled there, read
    // piece by piece); the host may start loading its port into its cache.
    // Changes nothing. (Through data(), unconditionally: GCC 12 at -O2 dropped
    // the prefetch written as `if (interval_) __builtin_prefetch(&ports_[line_slot])`.)
    void warm_host_cache(uint64_t line_slot) const { __builtin_prefetch(ports_.data() + (interval_ ? line_slot : 0), 1); }

private:
    struct Port {  // all zero bytes: no line's, empty
        uint64_t base;    // the slot of the mask's bit 0
        uint64_t used;    // bit i: slot base + i is taken
        uint64_t held;    // the holder's latest slot
        int32_t holder;   // the holder's initiator + 1; 0: none
        uint32_t owner;   // the line whose port this is, + 1; 0: none
    };

    static void slide(Port& l, uint64_t base) {
        const uint64_t shift = base - l.base;
        l.used = shift >= kWindow ? 0 : l.used >> shift;
        l.base = base;
    }

    Tick interval_;
    ZeroArray<Port> ports_;
};

}  // namespace pfsim
