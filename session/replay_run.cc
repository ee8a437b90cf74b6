#include "session/replay_run.h"

#include <memory>

#include <systemc>

#include "model/soc/soc.h"
#include "model/trace/recorder.h"
#include "replay/replay.h"
#include "replay/trace.h"
#include "session/summary.h"

namespace pfsim::api {

nlohmann::json replay(const Config& cfg, const ReplayRequest& request) {
    const uint64_t limit = Replay::ring_base(cfg);
    // Read while the replay runs: a bad line stops the replay when it reaches
    // it, and nothing is printed but the error.
    TraceReader trace(request.file, limit, "the replay's GM range (GM less the top pages, which hold its SDMA ring)");
    ReplayOptions ro;
    ro.verify = request.verify;
    ro.progress = request.progress;
    const std::unique_ptr<TraceRecorder> recorder = open_trace(request.trace, cfg);
    ro.trace = recorder.get();
    ro.sample_interval = cfg.time("trace.sample_interval");
    Soc soc("soc", cfg);
    Replay replay("replay", cfg, soc, trace, ro);
    sc_core::sc_start();
    const ReplayResult& r = replay.result();
    if (!r.trace_error.empty()) throw TraceError(r.trace_error);
    if (recorder) {
        try {
            recorder->close();
        } catch (const std::runtime_error& e) {
            throw TraceError(e.what());
        }
    }
    nlohmann::json summary = {
        {"schema", kSummarySchema},
        {"command", "replay"},
        {"trace", request.label},
        {"sim_time_ns", static_cast<double>(r.sim_time) / 1e3},
        {"accesses", r.accesses},
        {"line_accesses", r.line_accesses},
    };
    summary.update(soc.stats_json());
    summary["series"] = series_json(replay.sampler());
    if (ro.verify) summary["verify"] = {{"mismatches", r.mismatches}, {"first", r.first_mismatch}};
    if (!r.error.empty()) summary["error"] = r.error;
    summary["config"] = cfg.to_json();
    return summary;
}

}  // namespace pfsim::api
