#include "model/gm/gm_timing.h"

#include <algorithm>


namespace pfsim {

GmTiming::GmTiming(const Config& cfg)
    : interleave_shift_(static_cast<unsigned>(__builtin_ctzll(cfg.bytes("gm.interleave")))),
      channels_(cfg.count("gm.channels")),
      channel_mask_((channels_ & (channels_ - 1)) == 0 ? channels_ - 1 : 0),
      xor_map_(cfg.choice("gm.channel_map") == "xor"),
      ps_per_byte_(1e12 * static_cast<double>(channels_) / cfg.bandwidth("gm.bandwidth")),  // per channel
      read_latency_(cfg.time("gm.read_latency")),
      write_latency_(cfg.time("gm.write_latency")),
      overhead_(cfg.time("gm.request_overhead")),
      channel_(cfg.count("gm.channels")) {}

Tick GmTiming::schedule(bool write, uint64_t addr, uint64_t len, Tick issue) {
    Tick last = issue;
    const uint64_t end = addr + len;
    while (addr < end) {
        const uint64_t piece = addr >> interleave_shift_;
        const uint64_t piece_end = std::min(end, (piece + 1) << interleave_shift_);
        const Tick work = overhead_ + static_cast<Tick>(static_cast<double>(piece_end - addr) * ps_per_byte_ + 0.5);
        const uint64_t key = xor_map_ ? piece ^ (piece >> 5) ^ (piece >> 10) ^ (piece >> 15) : piece;
        last = std::max(last, channel_[channel_mask_ ? key & channel_mask_ : key % channels_].reserve(issue, work));
        addr = piece_end;
    }
    return last + (write ? write_latency_ : read_latency_);
}

}  // namespace pfsim
