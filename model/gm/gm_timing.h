// Timing of global memory: address-interleaved channels, each a Calendar of its
// capacity over time. Requests from every requester share the channels, which
// is how contention arises. No clock is ticked.
#pragma once

#include <cstdint>
#include <vector>

#include "model/common/calendar.h"
#include "model/config/config.h"

namespace pfsim {

class GmTiming {
public:
    explicit GmTiming(const Config& cfg);

    // A request of `len` bytes at `addr`, issued at `issue`: the time its last
    // byte is read (or written). Each channel it touches is occupied for
    // gm.request_overhead plus its share of bytes at the channel's bandwidth, per
    // gm.interleave-sized piece; the access latency is added once at the end.
    Tick schedule(bool write, uint64_t addr, uint64_t len, Tick issue);


private:
    unsigned interleave_shift_;  // gm.interleave is a power of two
    uint64_t channels_;
    uint64_t channel_mask_;  // channels_ - 1 where channels_ is a power of two (above one), else 0: a mask, not a division
    bool xor_map_;  // gm.channel_map = xor
    double ps_per_byte_;
    Tick read_latency_;
    Tick write_latency_;
    Tick overhead_;
    std::vector<Calendar> channel_;
};

}  // namespace pfsim
