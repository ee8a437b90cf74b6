// Several simulated dies in one SystemC simulation: die r (SimPlatform "dieR")
// is rank r, with its own cores, L2, GM and SDMA engine. Each die's link
// (model/link/die_link.h) is connected to every rank's L2, and every core knows
// where each rank's GM is in host memory, so that a kernel's pointer into a
// peer's GM (a communication window's address) and an SDMA copy naming a peer
// window (model/common/peer_window.h) cross the link.
//
// A die is driven as a platform of its own (gm_alloc, launch, begin_graph...);
// graphs begun on several dies run together with end_graphs. Build the dies
// before the simulation starts (SystemC elaborates once per process).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/config/config.h"
#include "runtime/platform/sim/sim_platform.h"

namespace pfsim {

class SimDies {
public:
    // Throws std::invalid_argument when `count` is 0 or above kMaxRanks, or
    // for several dies with sdma.frontend = rtl (its checks know no peer window).
    // The dies are named PREFIX0, PREFIX1, ... (SystemC names are unique in a process).
    SimDies(const Config& cfg, uint32_t count, const std::string& prefix = "die");

    uint32_t count() const { return static_cast<uint32_t>(dies_.size()); }
    SimPlatform& die(uint32_t rank) { return *dies_.at(rank); }
    // The pointer rank `rank`'s kernels dereference to reach its GM address `addr`
    // (what a communication context's window holds; any rank's kernels may use it).
    uint64_t device_pointer(uint32_t rank, uint64_t addr) const { return dies_.at(rank)->device_pointer(addr); }
    // Rank `rank`'s communication windows: each [addr, addr + bytes) of its GM
    // (what a CommContext's windowsIn and winSize say). While the rank has any,
    // an instruction of another die's kernel on its GM (TPUT, TGET, TNOTIFY,
    // TWAIT, TGET_ASYNC, TPUT_ASYNC) that does not lie in one of them fails
    // naming the window; with none, only what the rank allocated bounds it.
    // (A raw pointer access is not checked.) Change them between runs only.
    void add_comm_window(uint32_t rank, uint64_t addr, uint64_t bytes);
    // Forgets the rank's windows that begin at or above `addr` (what freeing
    // GM `addr` gives back).
    void drop_comm_windows(uint32_t rank, uint64_t addr);
    // The rank's one window (bytes 0: none).
    void set_comm_window(uint32_t rank, uint64_t addr, uint64_t bytes) {
        drop_comm_windows(rank, 0);
        if (bytes) add_comm_window(rank, addr, bytes);
    }

    // Ends the graphs begun on the dies (begin_graph on each, tasks appended
    // to each launch) and runs them together until every one has ended or
    // reached its time limit: one result per die, by rank. A die with no graph
    // begun gets an empty result.
    std::vector<rt::GraphResult> end_graphs();

    // One launch per die at once (Platform::launch on each, run together):
    // the results by rank. A die with no entries in `launches` is not launched.
    struct Launch {
        uint32_t rank = 0;
        rt::KernelEntries entries;
        rt::LaunchSpec spec;
        std::vector<int64_t*> args_per_core;
    };
    std::vector<rt::LaunchResult> launch(const std::vector<Launch>& launches);

private:
    const Config cfg_;  // the dies keep a reference to it
    std::vector<std::unique_ptr<SimPlatform>> dies_;
    std::vector<Core::PeerGm> gms_;  // by rank
};

}  // namespace pfsim
