#include "api/summary.h"

#include "api/run.h"

namespace pfsim {

nlohmann::json series_json(const Sampler& sampler) {
    const Sampler::Series s = sampler.series(200);
    return {{"t_ns", s.t_ns},
            {"gm_read_gbps", s.gm_read_gbps},
            {"gm_write_gbps", s.gm_write_gbps},
            {"sdma_gbps", s.sdma_gbps},
            {"l2_hit_rate", s.l2_hit_rate}};
}

nlohmann::json lanes_json(const std::vector<const Core*>& cores) {
    const char* names[] = {"scalar_ns", "mte2_ns", "mte3_ns", "vector_ns", "cube_ns"};
    std::vector<Tick> busy(5, 0);
    Tick wait = 0, stall = 0;
    for (const Core* c : cores) {
        for (size_t i = 0; i < 5; ++i) busy[i] += c->stats().busy[i];
        wait += c->stats().prefetch_wait;
        stall += c->stats().l2_stall;
    }
    nlohmann::json j = nlohmann::json::object();
    for (size_t i = 0; i < 5; ++i) j[names[i]] = static_cast<double>(busy[i]) / 1e3;
    j["prefetch_wait_ns"] = static_cast<double>(wait) / 1e3;
    j["l2_stall_ns"] = static_cast<double>(stall) / 1e3;
    return j;
}

std::unique_ptr<TraceRecorder> open_trace(const std::string& path, const Config& cfg) {
    if (path.empty()) return nullptr;
    try {
        return std::make_unique<TraceRecorder>(path, cfg.bytes("trace.max_bytes"));
    } catch (const std::runtime_error& e) {
        throw api::BadInput(e.what());
    }
}

}  // namespace pfsim
