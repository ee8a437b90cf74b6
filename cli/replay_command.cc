#include <unistd.h>

#include <cstdio>
#include <memory>
#include <iostream>

#include <nlohmann/json.hpp>
#include <systemc>

#include "cli/commands.h"
#include "cli/options.h"
#include "session/summary.h"
#include "model/soc/soc.h"
#include "model/trace/recorder.h"
#include "replay/replay.h"
#include "replay/trace.h"

namespace pfsim {

int cmd_replay(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--verify", "--progress"}, {"--trace"});
    if (o.positional.size() != 1) throw UsageError("replay takes exactly one trace file");
    const Config cfg = resolve_config(o);
    const std::string path = user_path(o.positional[0]);
    refuse_overwriting_an_input(o, "--trace", value_of(o, "--trace", ""), {{"the replayed trace", path}});
    const uint64_t limit = Replay::ring_base(cfg);
    // Read while the replay runs: a bad line stops the replay when it reaches
    // it, and nothing is printed but the error.
    TraceReader trace(path, limit, "the replay's GM range (GM less the top pages, which hold its SDMA ring)");

    ReplayOptions ro;
    ro.verify = has_flag(o, "--verify");
    ro.progress = has_flag(o, "--progress") || isatty(STDERR_FILENO);
    const std::unique_ptr<TraceRecorder> recorder = open_trace(user_path(value_of(o, "--trace", "")), cfg);
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
        {"trace", o.positional[0]},
        {"sim_time_ns", static_cast<double>(r.sim_time) / 1e3},
        {"accesses", r.accesses},
        {"line_accesses", r.line_accesses},
    };
    summary.update(soc.stats_json());
    summary["series"] = series_json(replay.sampler());
    if (ro.verify) summary["verify"] = {{"mismatches", r.mismatches}, {"first", r.first_mismatch}};
    if (!r.error.empty()) summary["error"] = r.error;
    summary["config"] = cfg.to_json();

    if (o.json) {
        std::cout << summary.dump(2) << "\n";
    } else {
        const auto& l2 = summary["l2"];
        const auto& gm = summary["gm"];
        std::printf("trace            %s (%llu accesses, %llu line accesses)\n", o.positional[0].c_str(),
                    static_cast<unsigned long long>(r.accesses),
                    static_cast<unsigned long long>(r.line_accesses));
        std::printf("sim time         %.3f us\n", static_cast<double>(r.sim_time) / 1e6);
        std::printf("l2               %llu hits, %llu misses (hit rate %.1f %%), %llu writebacks, "
                    "%llu prefetched lines\n",
                    l2["hits"].get<unsigned long long>(), l2["misses"].get<unsigned long long>(),
                    100.0 * l2["hit_rate"].get<double>(), l2["writebacks"].get<unsigned long long>(),
                    l2["prefetch_lines"].get<unsigned long long>());
        std::printf("gm               %llu B read, %llu B written (uncached: %llu B read, %llu B written)\n",
                    gm["read_bytes"].get<unsigned long long>(), gm["write_bytes"].get<unsigned long long>(),
                    gm["uncached_read_bytes"].get<unsigned long long>(),
                    gm["uncached_write_bytes"].get<unsigned long long>());
        std::printf("sdma             %llu requests (%llu prefetch, %llu B prefetched)\n",
                    summary["sdma"]["requests"].get<unsigned long long>(),
                    summary["sdma"]["prefetch_requests"].get<unsigned long long>(),
                    summary["sdma"]["prefetch_bytes"].get<unsigned long long>());
        if (ro.verify) {
            std::printf("verify           %llu mismatching reads%s%s\n",
                        static_cast<unsigned long long>(r.mismatches), r.mismatches ? "; first: " : "",
                        r.first_mismatch.c_str());
        }
    }
    if (!r.error.empty()) {
        std::cerr << "pfsim: " << r.error << "\n";
        return 1;
    }
    return r.mismatches ? 1 : 0;
}

}  // namespace pfsim
