#include "model/core/cross_core_flags.h"

#include "pfsim_kernel_abi.h"

namespace pfsim {

CrossCoreFlags::CrossCoreFlags(uint32_t clusters, uint32_t limit)
    : clusters_(clusters), limit_(limit), counters_(3 * clusters * kFlags), unpaired_(2 * clusters * kFlags) {
    for (uint32_t c = 0; c < 3 * clusters; ++c) arrived_.push_back(std::make_unique<sc_core::sc_event>());
}

std::string CrossCoreFlags::core_name(uint32_t core) const {
    if (core < clusters_) return "AIC " + std::to_string(core);
    return "AIV " + std::to_string(core) + " (cluster " + std::to_string((core - clusters_) / 2) + ", sub " +
           std::to_string((core - clusters_) % 2) + ")";
}

void CrossCoreFlags::add(uint32_t core, int flag, Tick arrival) {
    std::multiset<Tick>& c = counter(core, flag);
    if (c.size() >= limit_) {
        throw KernelError("cross-core flag " + std::to_string(flag) + " of " + core_name(core) + " overflows: " +
                          std::to_string(limit_) + " sets not yet waited (core.cross_core_flag_limit)");
    }
    c.insert(arrival);
    arrived_[core]->notify(sc_core::SC_ZERO_TIME);
}

void CrossCoreFlags::set(uint32_t from, int mode, int flag, Tick arrival) {
    if (mode != kClusterMode) {
        throw KernelError("ffts_cross_core_sync: mode " + std::to_string(mode) +
                          " is not modelled (only 2, between the cube and vector cores of a cluster)");
    }
    if (flag < 0 || flag >= kFlags) {
        throw KernelError("ffts_cross_core_sync: flag " + std::to_string(flag) + " is outside 0..15");
    }
    if (from < clusters_) {  // a cube core: both vector cores of its cluster
        add(clusters_ + 2 * from, flag, arrival);
        add(clusters_ + 2 * from + 1, flag, arrival);
        return;
    }
    const uint32_t cluster = (from - clusters_) / 2, sub = (from - clusters_) % 2;
    std::multiset<Tick>& mine = unpaired_[(cluster * kFlags + flag) * 2 + sub];
    std::multiset<Tick>& partner = unpaired_[(cluster * kFlags + flag) * 2 + (1 - sub)];
    if (partner.empty()) {
        mine.insert(arrival);
        return;
    }
    const Tick paired = std::max(arrival, *partner.begin());
    partner.erase(partner.begin());
    add(cluster, flag, paired);
}

std::optional<Tick> CrossCoreFlags::earliest(uint32_t core, int flag) const {
    const std::multiset<Tick>& c = counters_[core * kFlags + flag];
    if (c.empty()) return std::nullopt;
    return *c.begin();
}

void CrossCoreFlags::consume(uint32_t core, int flag) {
    std::multiset<Tick>& c = counter(core, flag);
    c.erase(c.begin());
}

std::vector<std::string> CrossCoreFlags::drain() {
    std::vector<std::string> left;
    for (uint32_t core = 0; core < 3 * clusters_; ++core) {
        for (int flag = 0; flag < kFlags; ++flag) {
            std::multiset<Tick>& c = counter(core, flag);
            if (!c.empty()) {
                left.push_back("cross-core flag " + std::to_string(flag) + " of " + core_name(core) + " was set " +
                               std::to_string(c.size()) + " time(s) more than it was waited");
            }
            c.clear();
        }
    }
    for (uint32_t i = 0; i < unpaired_.size(); ++i) {
        if (!unpaired_[i].empty()) {
            const uint32_t cluster = i / 2 / kFlags, flag = i / 2 % kFlags, sub = i % 2;
            left.push_back("cross-core flag " + std::to_string(flag) + " set by " +
                           core_name(clusters_ + 2 * cluster + sub) + " " + std::to_string(unpaired_[i].size()) +
                           " time(s) without its partner vector core (the cube core never saw it)");
        }
        unpaired_[i].clear();
    }
    return left;
}

}  // namespace pfsim
