// One simulated a2a3 die's memory path: GM, L2 and the SDMA engine, wired.
//
//   initiators ─► l2.cached ─────────► l2 ─► gm.data
//   initiators ─► l2.uncached ───────► l2 ─► gm.uncached   (coherent with L2)
//   initiators ─► sdma.mmio (doorbells)
//   sdma.memory ─► l2.uncached;  sdma.prefetch ─► l2.prefetch
//   sdma.peers, initiators' peer accesses ─► link ─► peer dies' l2.uncached
//   (model/link/die_link.h; a one-die simulation connects no peer)
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "model/config/config.h"
#include "model/gm/gm.h"
#include "model/l2/l2_cache.h"
#include "model/link/die_link.h"
#include "model/sdma/sdma_engine.h"
#include "model/stats/stats.h"

namespace pfsim {

// How a die's blocks are built beyond what its configuration says.
struct SocOptions {
    // Signal dumps of the RTL blocks (.vcd or .fst): sdma.frontend = rtl,
    // l2.tags = rtl (std::invalid_argument without the block).
    std::string sdma_waves, l2_waves;
    // The SDMA engine's front-end instead of the one sdma.frontend names (tests).
    std::unique_ptr<SdmaFrontend> sdma_frontend;
};

class Soc : public sc_core::sc_module {
public:
    Soc(sc_core::sc_module_name name, const Config& cfg, SocOptions options = {});

    GlobalMemory gm;
    L2Cache l2;
    SdmaEngine sdma;
    DieLink link;

    // Every block's counters now; stats_delta(after, before) is what a run did.
    struct Stats {
        GmStats gm;
        L2Stats l2;
        SdmaStats sdma;
    };
    Stats stats() const;

    // `counters` as the JSON summary shows them: one object per block, and the
    // SDMA channels that completed a request or latched an error (their state
    // now).
    nlohmann::json stats_json(const Stats& counters) const;
    nlohmann::json stats_json() const { return stats_json(stats()); }

    // What stats_json shows, key by key: (block, stat).
    static std::vector<std::pair<std::string, StatInfo>> stat_reference();
};

Soc::Stats stats_delta(const Soc::Stats& after, const Soc::Stats& before);

}  // namespace pfsim
