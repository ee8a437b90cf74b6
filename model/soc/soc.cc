#include "model/soc/soc.h"

namespace pfsim {

Soc::Soc(sc_core::sc_module_name name, const Config& cfg)
    : sc_module(name), gm("gm", cfg), l2("l2", cfg), sdma("sdma", cfg) {
    l2.gm_data.bind(gm.data);
    l2.gm_uncached.bind(gm.uncached);
    l2.attach_direct(&gm);
    sdma.memory.bind(l2.uncached);
    sdma.prefetch.bind(l2.prefetch);
}

nlohmann::json Soc::stats_json() const {
    const L2Stats& l = l2.stats();
    const GmStats& g = gm.stats();
    const SdmaStats& s = sdma.stats();
    nlohmann::json channels = nlohmann::json::array();
    for (unsigned c = 0; c < sdma.channels(); ++c) {
        const SdmaChannelState& ch = sdma.channel(c);
        if (ch.completed == 0 && ch.error == SdmaError::None) continue;
        channels.push_back({{"channel", c},
                            {"completed", ch.completed},
                            {"error", sdma_error_name(ch.error)},
                            {"error_code", static_cast<uint32_t>(ch.error)}});
    }
    const uint64_t accesses = l.hits + l.misses;
    return {
        {"l2",
         {{"hits", l.hits},
          {"misses", l.misses},
          {"hit_rate", accesses ? static_cast<double>(l.hits) / static_cast<double>(accesses) : 0.0},
          {"writebacks", l.writebacks},
          {"prefetch_lines", l.prefetch_lines},
          {"prefetch_resident", l.prefetch_resident},
          {"read_bytes", l.read_bytes},
          {"write_bytes", l.write_bytes},
          {"uncached_read_bytes", l.uncached_read_bytes},
          {"uncached_write_bytes", l.uncached_write_bytes}}},
        {"gm",
         {{"read_bytes", g.read_bytes},
          {"write_bytes", g.write_bytes},
          {"uncached_read_bytes", g.uncached_read_bytes},
          {"uncached_write_bytes", g.uncached_write_bytes},
          {"touched_bytes", gm.store().touched_bytes()}}},
        {"sdma",
         {{"requests", s.requests},
          {"prefetch_requests", s.prefetch_requests},
          {"copy_requests", s.copy_requests},
          {"prefetch_bytes", s.prefetch_bytes},
          {"copy_bytes", s.copy_bytes},
          {"request_fetch_bytes", s.request_fetch_bytes},
          {"doorbells", s.doorbells},
          {"cold_starts", s.cold_starts},
          {"channel_errors", s.channel_errors},
          {"channels", channels}}},
    };
}

}  // namespace pfsim
