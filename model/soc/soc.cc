#include "model/soc/soc.h"

namespace pfsim {

Soc::Soc(sc_core::sc_module_name name, const Config& cfg, SocOptions options)
    : sc_module(name),
      gm("gm", cfg),
      l2("l2", cfg, options.l2_waves),
      sdma("sdma", cfg,
           options.sdma_frontend ? std::move(options.sdma_frontend) : make_sdma_frontend(cfg, options.sdma_waves)),
      link("link", cfg) {
    l2.gm_data.bind(gm.data);
    l2.gm_uncached.bind(gm.uncached);
    l2.attach_direct(&gm);
    sdma.memory.bind(l2.uncached);
    sdma.prefetch.bind(l2.prefetch);
    sdma.peers.bind(link.in);
    sdma.set_peer_reach([this](uint64_t addr, uint64_t len) { return link.reaches(addr, len); });
}

Soc::Stats Soc::stats() const { return {gm.stats(), l2.stats(), sdma.stats()}; }

Soc::Stats stats_delta(const Soc::Stats& after, const Soc::Stats& before) {
    return {stats_delta(after.gm, before.gm), stats_delta(after.l2, before.l2), stats_delta(after.sdma, before.sdma)};
}

nlohmann::json Soc::stats_json(const Stats& counters) const {
    nlohmann::json channels = nlohmann::json::array();
    for (unsigned c = 0; c < sdma.channels(); ++c) {
        const SdmaChannelState& ch = sdma.channel(c);
        if (ch.completed == 0 && ch.error == SdmaError::None) continue;
        channels.push_back({{"channel", c},
                            {"completed", ch.completed},
                            {"error", sdma_error_name(ch.error)},
                            {"error_code", static_cast<uint32_t>(ch.error)}});
    }
    nlohmann::json j = {{"l2", pfsim::stats_json(counters.l2)},
                        {"gm", pfsim::stats_json(counters.gm)},
                        {"sdma", pfsim::stats_json(counters.sdma)}};
    j["sdma"]["channels"] = channels;
    return j;
}

std::vector<std::pair<std::string, StatInfo>> Soc::stat_reference() {
    std::vector<std::pair<std::string, StatInfo>> out;
    for (const StatInfo& i : stat_infos<GmStats>()) out.emplace_back("gm", i);
    for (const StatInfo& i : stat_infos<L2Stats>()) out.emplace_back("l2", i);
    for (const StatInfo& i : stat_infos<SdmaStats>()) out.emplace_back("sdma", i);
    out.emplace_back("sdma", StatInfo{"channels", "list",
                                      "each channel that completed a request or latched an error: channel, completed "
                                      "(requests, since the channel's ring was set), error, error_code (its state at "
                                      "the end)",
                                      true});
    return out;
}

}  // namespace pfsim
