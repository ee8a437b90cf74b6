// One simulated a2a3 die's memory path: GM, L2 and the SDMA engine, wired.
//
//   initiators ─► l2.cached ─────────► l2 ─► gm.data
//   initiators ─► l2.uncached ───────► l2 ─► gm.uncached   (coherent with L2)
//   initiators ─► sdma.mmio (doorbells)
//   sdma.memory ─► l2.uncached;  sdma.prefetch ─► l2.prefetch
#pragma once

#include <nlohmann/json.hpp>
#include <systemc>

#include "model/config/config.h"
#include "model/gm/gm.h"
#include "model/l2/l2_cache.h"
#include "model/sdma/sdma_engine.h"

namespace pfsim {

class Soc : public sc_core::sc_module {
public:
    Soc(sc_core::sc_module_name name, const Config& cfg);

    GlobalMemory gm;
    L2Cache l2;
    SdmaEngine sdma;

    // Counters of every block, for the JSON summary.
    nlohmann::json stats_json() const;
};

}  // namespace pfsim
