// Pieces of the JSON summary shared by the commands that write one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/schema.h"
#include "model/core/core.h"
#include "model/config/config.h"
#include "model/soc/sampler.h"
#include "model/soc/soc.h"
#include "model/stats/stats.h"
#include "model/trace/recorder.h"
#include "runtime/platform/sim/sim_dies.h"

namespace pfsim {

// Counters over time (at most 200 points): t_ns, gm_read_gbps, gm_write_gbps, sdma_gbps, l2_hit_rate.
nlohmann::json series_json(const Sampler& sampler);
// The counters of `cores`, summed (the summary's `cores`).
CoreStats core_stats_sum(const std::vector<const Core*>& cores);
// Where the time went: each time counter of `cores` (busy time per pipe,
// prefetch and cross-core waits, L2 stalls) in ns, as NAME_ns.
nlohmann::json lanes_json(const CoreStats& cores);

// One number the summary shows, with its key path (l2.hits, cores.mte2, lanes.mte2_ns, ...).
struct SummaryStat {
    std::string key;
    StatInfo info;
};
// Every counter and lane of a run's summary, as the blocks declare them.
std::vector<SummaryStat> summary_stats();
// The blocks whose counters the summary shows (gm, l2, sdma, cores).
std::vector<std::string> counter_blocks();
// The same as a markdown table (`pfsim stats --markdown`, docs/stats.md).
std::string summary_stats_markdown();

// The recorder for `--trace PATH` (null when `path` is empty); an unwritable
// path is bad input (api::BadInput).
std::unique_ptr<TraceRecorder> open_trace(const std::string& path, const Config& cfg);

// The traces of a run on several dies, each die recording into a file of its
// own. Every die's trace is detached when this ends (also on a throw), before
// the files close.
class DieTraces {
public:
    explicit DieTraces(SimDies& dies) : dies_(dies) {}
    ~DieTraces();
    DieTraces(const DieTraces&) = delete;
    DieTraces& operator=(const DieTraces&) = delete;

    // Opens `path` (empty: no trace) as open_trace does and attaches it to die
    // `rank`; the n-th call's recorder is at(n - 1).
    void open(uint32_t rank, const std::string& path, const Config& cfg);
    TraceRecorder* at(size_t i) const { return traces_.at(i).get(); }

private:
    SimDies& dies_;
    std::vector<std::unique_ptr<TraceRecorder>> traces_;
};

}  // namespace pfsim
