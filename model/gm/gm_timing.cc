#include "model/gm/gm_timing.h"

#include <algorithm>

#include "model/common/time.h"

namespace pfsim {

GmTiming::GmTiming(const Config& cfg)
    : interleave_(cfg.bytes("gm.interleave")),
      channel_bandwidth_(cfg.bandwidth("gm.bandwidth") / static_cast<double>(cfg.count("gm.channels"))),
      read_latency_(cfg.time("gm.read_latency")),
      write_latency_(cfg.time("gm.write_latency")),
      overhead_(cfg.time("gm.request_overhead")),
      busy_until_(cfg.count("gm.channels"), 0) {}

Tick GmTiming::schedule(bool write, uint64_t addr, uint64_t len, Tick issue) {
    Tick last = issue;
    const uint64_t end = addr + len;
    while (addr < end) {
        const uint64_t piece_end = std::min(end, (addr / interleave_ + 1) * interleave_);
        Tick& busy = busy_until_[(addr / interleave_) % busy_until_.size()];
        busy = std::max(issue, busy) + overhead_ + transfer_time(piece_end - addr, channel_bandwidth_);
        last = std::max(last, busy);
        addr = piece_end;
    }
    return last + (write ? write_latency_ : read_latency_);
}

}  // namespace pfsim
