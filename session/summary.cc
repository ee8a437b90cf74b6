#include "session/summary.h"

#include "session/run.h"

namespace pfsim {

nlohmann::json series_json(const Sampler& sampler) {
    const Sampler::Series s = sampler.series(200);
    return {{"t_ns", s.t_ns},
            {"gm_read_gbps", s.gm_read_gbps},
            {"gm_write_gbps", s.gm_write_gbps},
            {"sdma_gbps", s.sdma_gbps},
            {"l2_hit_rate", s.l2_hit_rate}};
}

CoreStats core_stats_sum(const std::vector<const Core*>& cores) {
    CoreStats sum;
    for (const Core* c : cores) {
        for (const StatField<CoreStats>& f : CoreStats::fields()) {
            if (f.member) sum.*f.member += c->stats().*f.member;
        }
    }
    return sum;
}

nlohmann::json lanes_json(const CoreStats& cores) {
    nlohmann::json j = nlohmann::json::object();
    for (const StatField<CoreStats>& f : CoreStats::fields()) {
        if (f.member && f.info.unit == "ps") j[f.info.name + "_ns"] = static_cast<double>(cores.*f.member) / 1e3;
    }
    return j;
}

std::vector<SummaryStat> summary_stats() {
    std::vector<SummaryStat> out;
    for (const auto& [block, info] : Soc::stat_reference()) out.push_back({block + "." + info.name, info});
    for (const StatInfo& info : stat_infos<CoreStats>()) {
        StatInfo summed = info;
        summed.description += ", summed over the cores";
        out.push_back({"cores." + info.name, summed});
    }
    for (const StatInfo& info : stat_infos<CoreStats>()) {
        if (info.unit != "ps") continue;
        StatInfo lane = info;
        lane.name += "_ns";
        lane.unit = "ns";
        lane.description = "cores." + info.name + " in ns";
        out.push_back({"lanes." + lane.name, lane});
    }
    return out;
}

std::vector<std::string> counter_blocks() {
    std::vector<std::string> blocks;
    for (const SummaryStat& s : summary_stats()) {
        const std::string block = s.key.substr(0, s.key.find('.'));
        if (block != "lanes" && (blocks.empty() || blocks.back() != block)) blocks.push_back(block);
    }
    return blocks;
}

std::string summary_stats_markdown() {
    std::string md = "| key | unit | what it counts |\n|---|---|---|\n";
    for (const SummaryStat& s : summary_stats()) {
        std::string what = s.info.description;
        if (s.info.derived) what += " (derived)";
        md += "| `" + s.key + "` | " + s.info.unit + " | " + what + " |\n";
    }
    return md;
}

std::unique_ptr<TraceRecorder> open_trace(const std::string& path, const Config& cfg) {
    if (path.empty()) return nullptr;
    try {
        return std::make_unique<TraceRecorder>(path, cfg.bytes("trace.max_bytes"));
    } catch (const std::runtime_error& e) {
        throw api::BadInput(e.what());
    }
}

DieTraces::~DieTraces() {
    for (uint32_t r = 0; r < dies_.count(); ++r) dies_.die(r).attach_trace(nullptr);
}

void DieTraces::open(uint32_t rank, const std::string& path, const Config& cfg) {
    traces_.push_back(open_trace(path, cfg));
    if (traces_.back()) dies_.die(rank).attach_trace(traces_.back().get());
}

}  // namespace pfsim
