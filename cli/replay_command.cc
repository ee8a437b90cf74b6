// pfsim replay TRACE: parses the options into an api::ReplayRequest, replays it
// (session/replay_run.h), prints the summary.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "session/replay_run.h"
#include "session/session.h"

namespace pfsim {

int cmd_replay(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--verify", "--progress"}, {"--trace"});
    if (o.positional.size() != 1) throw UsageError("replay takes exactly one trace file");
    const Config cfg = resolve_config(o);
    api::ReplayRequest request;
    request.file = user_path(o.positional[0]);
    request.label = o.positional[0];
    refuse_overwriting_an_input(o, "--trace", value_of(o, "--trace", ""), {{"the replayed trace", request.file}});
    request.verify = has_flag(o, "--verify");
    request.progress = has_flag(o, "--progress") || isatty(STDERR_FILENO);
    request.trace = user_path(value_of(o, "--trace", ""));
    const nlohmann::json summary = api::Session(cfg).replay(request);
    return print_replay(summary, o.json);
}

int print_replay(const nlohmann::json& summary, bool json) {
    const bool verify = summary.contains("verify");
    const std::string error = summary.value("error", "");
    const uint64_t mismatches = verify ? summary["verify"]["mismatches"].get<uint64_t>() : 0;
    if (json) {
        std::cout << summary.dump(2) << "\n";
    } else {
        const auto& l2 = summary["l2"];
        const auto& gm = summary["gm"];
        std::printf("trace            %s (%llu accesses, %llu line accesses)\n", summary["trace"].get<std::string>().c_str(),
                    summary["accesses"].get<unsigned long long>(), summary["line_accesses"].get<unsigned long long>());
        std::printf("sim time         %.3f us\n", summary["sim_time_ns"].get<double>() / 1e3);
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
        if (verify) {
            const std::string first = summary["verify"]["first"].get<std::string>();
            std::printf("verify           %llu mismatching reads%s%s\n", static_cast<unsigned long long>(mismatches),
                        mismatches ? "; first: " : "", first.c_str());
        }
    }
    if (!error.empty()) std::cerr << "pfsim: " << error << "\n";
    return replay_status(summary);
}

int replay_status(const nlohmann::json& summary) {
    const bool mismatches = summary.contains("verify") && summary["verify"]["mismatches"].get<uint64_t>() > 0;
    return !summary.value("error", "").empty() || mismatches ? 1 : 0;
}

}  // namespace pfsim
