// A shared resource's capacity over time, in buckets. Work reserved at time t
// fills the free capacity of t's bucket and spills into later ones, so requests
// that arrive out of time order (cores run ahead of each other by up to a
// quantum) do not queue behind reservations made for a later time, as they
// would with a single "busy until" time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/config/units.h"

namespace pfsim {

class Calendar {
public:
    // `servers` units of work can proceed at once (1 for a channel or port, N for
    // a pool of N miss-status registers). `window` buckets are remembered.
    explicit Calendar(Tick bucket = 64000, uint64_t servers = 1, size_t window = 4096)
        : bucket_(bucket), servers_(servers), capacity_(bucket * servers), used_(window, 0) {}

    // Reserves `work` (resource-picoseconds) from time `t`; returns when it is done.
    Tick reserve(Tick t, Tick work) {
        uint64_t b = t / bucket_;
        if (b < base_) {
            b = base_;  // older than anything remembered: as early as possible
            t = b * bucket_;
        }
        Tick remaining = work;
        Tick done = t + work;  // one unit of work runs on one server
        for (bool first = true; remaining > 0; first = false, ++b) {
            Tick& used = slot(b);
            Tick avail = capacity_ - std::min(used, capacity_);
            if (first) avail = std::min<Tick>(avail, (b * bucket_ + bucket_ - t) * servers_);
            const Tick take = std::min(avail, remaining);
            used += take;
            remaining -= take;
            if (remaining == 0) done = std::max(done, b * bucket_ + used / servers_);
        }
        return done;
    }

private:
    Tick& slot(uint64_t b) {
        while (b >= base_ + used_.size()) {  // slide the window forward
            used_[base_ % used_.size()] = 0;
            ++base_;
        }
        return used_[b % used_.size()];
    }

    Tick bucket_;
    uint64_t servers_;
    Tick capacity_;
    std::vector<Tick> used_;
    uint64_t base_ = 0;
};

}  // namespace pfsim
