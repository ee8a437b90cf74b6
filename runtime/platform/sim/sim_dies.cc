#include "runtime/platform/sim/sim_dies.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "model/common/peer_window.h"

namespace pfsim {

SimDies::SimDies(const Config& cfg, uint32_t count, const std::string& prefix) : cfg_(cfg) {
    if (count == 0 || count > kMaxRanks) {
        throw std::invalid_argument("a simulation holds 1 to " + std::to_string(kMaxRanks) + " dies, not " +
                                    std::to_string(count));
    }
    if (count > 1 && cfg.choice("sdma.frontend") == "rtl") {
        throw std::invalid_argument("sdma.frontend = rtl: the RTL front-end checks request addresses against this die's "
                                    "GM and knows no peer window; several dies need sdma.frontend = tlm");
    }
    for (uint32_t r = 0; r < count; ++r) {
        dies_.push_back(std::make_unique<SimPlatform>((prefix + std::to_string(r)).c_str(), cfg_));
        gms_.push_back(dies_.back()->gm_view());
    }
    for (auto& die : dies_) {
        for (auto& rank : dies_) die->soc().link.connect(rank->soc().l2);
        die->set_peer_gms(&gms_);
    }
}

void SimDies::add_comm_window(uint32_t rank, uint64_t addr, uint64_t bytes) {
    auto& windows = gms_.at(rank).windows;
    windows.insert(std::upper_bound(windows.begin(), windows.end(), std::make_pair(addr, bytes)), {addr, bytes});
}

void SimDies::drop_comm_windows(uint32_t rank, uint64_t addr) {
    auto& windows = gms_.at(rank).windows;
    windows.erase(std::lower_bound(windows.begin(), windows.end(), std::make_pair(addr, uint64_t{0})), windows.end());
}

std::vector<rt::GraphResult> SimDies::end_graphs() {
    std::vector<bool> begun;
    for (auto& die : dies_) {
        begun.push_back(die->graph_begun());
        if (die->graph_begun()) die->close_submissions();
    }
    // Each scheduler, its submissions closed, runs its graph out without
    // handing the simulation back (it stops at its time limit at the latest).
    auto active = [&] {
        for (auto& die : dies_) {
            if (die->graph_active()) return true;
        }
        return false;
    };
    while (active()) {
        const uint64_t before = dies_.front()->now_ps();
        sc_core::sc_start();
        if (active() && dies_.front()->now_ps() == before && !sc_core::sc_pending_activity()) {
            throw std::logic_error("pfsim: the dies' graphs stopped with nothing left to simulate");
        }
    }
    std::vector<rt::GraphResult> results;
    for (size_t r = 0; r < dies_.size(); ++r) results.push_back(begun[r] ? dies_[r]->graph_result() : rt::GraphResult{});
    return results;
}

std::vector<rt::LaunchResult> SimDies::launch(const std::vector<Launch>& launches) {
    std::vector<SimPlatform::Launched> started;
    for (const Launch& l : launches) started.push_back(die(l.rank).start_launch(l.entries, l.spec, l.args_per_core));
    sc_core::sc_start();
    std::vector<rt::LaunchResult> results;
    for (size_t i = 0; i < launches.size(); ++i) results.push_back(die(launches[i].rank).finish_launch(started[i]));
    return results;
}

}  // namespace pfsim
