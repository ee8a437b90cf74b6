// The cross-core flags of the a2a3 FFTS block: 16 counting flags per core,
// set by ffts_cross_core_sync on one core and consumed by wait_flag_dev on
// another. TPUSH/TPOP's cube<->vector handshake is built on them.
//
// Within a cluster (mode 2, CV_CORES_SYNC): a cube core's set counts once on
// each of its two vector cores; a vector core's set counts on the cube core
// only once both vector cores of the cluster have set that flag (the hardware
// pairs them, which is why a TILE_NO_SPLIT pipe still needs both vector cores
// to take part). The other modes (whole task, vector pair) are not modelled
// and fail the kernel with a message.
//
// Each set arrives at a simulated time (when its pipe finished, plus
// core.cross_core_latency); a counter holds the arrival times not yet
// consumed, at most core.cross_core_flag_limit of them (the counter's width):
// one more set fails the kernel that made it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <systemc>

#include "model/common/time.h"

namespace pfsim {

class CrossCoreFlags {
public:
    static constexpr int kFlags = 16;
    static constexpr int kClusterMode = 2;

    // Core ids as the die numbers them: cube core c is id c, vector core v of
    // cluster c is id clusters + 2c + v.
    CrossCoreFlags(uint32_t clusters, uint32_t limit);

    // Core `from` sets `flag` in `mode`, arriving at `arrival`. Throws
    // KernelError for a mode other than 2, a flag outside 0..15 or a counter
    // already at its limit.
    void set(uint32_t from, int mode, int flag, Tick arrival);
    // The earliest arrival of `flag` on core `core` not yet consumed.
    std::optional<Tick> earliest(uint32_t core, int flag) const;
    // Consumes that arrival (earliest() must have returned one).
    void consume(uint32_t core, int flag);
    // Notified whenever a set reaches `core` (SystemC event).
    const sc_core::sc_event& arrived(uint32_t core) const { return *arrived_[core]; }
    // Sets not consumed when a run ends, one line per (core, flag), and then
    // forgets them: each run starts with clear flags.
    std::vector<std::string> drain();

private:
    // Arrival times not yet consumed.
    std::multiset<Tick>& counter(uint32_t core, int flag) { return counters_[core * kFlags + flag]; }
    void add(uint32_t core, int flag, Tick arrival);
    std::string core_name(uint32_t core) const;

    const uint32_t clusters_, limit_;
    std::vector<std::multiset<Tick>> counters_;  // [core * kFlags + flag]
    // Vector sets waiting for their partner: [(cluster * kFlags + flag) * 2 + subblock].
    std::vector<std::multiset<Tick>> unpaired_;
    std::vector<std::unique_ptr<sc_core::sc_event>> arrived_;
};

}  // namespace pfsim
