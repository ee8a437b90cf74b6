#include "session/verdict.h"

#include <algorithm>

#include "base/json_integer.h"

namespace pfsim::api {

namespace {

// Why a pair of runs fails the equivalence check ("" when it passes).
std::string equivalence_failure(const RunResult& off, const RunResult& on) {
    for (const RunResult* r : {&off, &on}) {
        const char* mode = r == &off ? "prefetch off" : "prefetch on";
        if (!r->error.empty()) return std::string(mode) + ": " + r->error;
        if (!r->violations.empty()) return std::string(mode) + ": protocol violation: " + r->violations[0];
    }
    if (off.outputs.size() != on.outputs.size()) return "the runs produced different outputs";
    for (size_t i = 0; i < off.outputs.size(); ++i) {
        if (off.outputs[i].sha256 != on.outputs[i].sha256 || off.outputs[i].digest != on.outputs[i].digest) {
            return "output " + off.outputs[i].name + " differs between prefetch off and on";
        }
    }
    for (const RunResult* r : {&off, &on}) {
        if (!r->reference_equal) {
            return std::string(r == &off ? "prefetch off" : "prefetch on") + ": output differs from the reference";
        }
    }
    return "";
}

}  // namespace

Verdict judge(const RunResult& off, const RunResult& on, const Expectation& expected) {
    Verdict v;
    v.failure = equivalence_failure(off, on);
    if (!v.equivalent()) return v;
    v.time_off_ns = off.kernel_time_ns;
    v.time_on_ns = on.kernel_time_ns;
    v.gain_pct = v.time_off_ns > 0 ? (v.time_off_ns - v.time_on_ns) / v.time_off_ns * 100 : 0;
    v.gain_met = v.gain_pct >= expected.min_gain_pct && v.gain_pct <= expected.max_gain_pct;
    return v;
}

RunResult waves_run(const std::vector<std::vector<RankRun>>& waves, const std::vector<OutputResult>& host) {
    RunResult run;
    run.ran = true;
    for (size_t w = 0; w < waves.size(); ++w) {
        double longest = 0;
        for (const RankRun& call : waves[w]) {
            const RunResult& r = call.result;
            const std::string rank = std::to_string(call.rank), where = "wave " + std::to_string(w) + ", rank " + rank + ": ";
            if (run.error.empty() && !r.error.empty()) run.error = where + r.error;
            for (const std::string& v : r.violations) run.violations.push_back(where + v);
            for (OutputResult out : r.outputs) {
                out.name = "wave" + std::to_string(w) + ".rank" + rank + "." + out.name;
                run.outputs.push_back(std::move(out));
            }
            run.reference_equal &= r.reference_equal;
            longest = std::max(longest, r.kernel_time_ns);
        }
        run.kernel_time_ns += longest;
    }
    for (OutputResult out : host) {
        out.name = "host." + out.name;
        run.outputs.push_back(std::move(out));
    }
    return run;
}

RunResult judged_run(const nlohmann::json& side) {
    if (!side.is_object() || !side.contains("waves")) return from_json(side);
    std::vector<std::vector<RankRun>> waves;
    std::vector<OutputResult> host;
    try {
        for (const nlohmann::json& t : side.value("host", nlohmann::json::array())) {
            OutputResult out;
            out.name = t.at("name").get<std::string>();
            out.sha256 = t.at("sha256").get<std::string>();
            host.push_back(std::move(out));
        }
        for (const nlohmann::json& wave : side.at("waves")) {
            waves.emplace_back();
            for (const nlohmann::json& call : wave) {
                waves.back().push_back({json_integer<uint32_t>(call.at("rank")), from_json(call.at("result"))});
            }
        }
    } catch (const nlohmann::json::exception& e) {
        throw BadInput(std::string("judge: a level-3 run is {\"waves\": [[{\"rank\", \"result\"}, ...], ...], "
                                   "\"host\": [{\"name\", \"sha256\"}, ...]}: ") + e.what());
    }
    return waves_run(waves, host);
}

nlohmann::json to_json(const Verdict& v) {
    return {{"failure", v.failure},       {"equivalent", v.equivalent()}, {"time_off_ns", v.time_off_ns},
            {"time_on_ns", v.time_on_ns}, {"gain_pct", v.gain_pct},       {"gain_met", v.gain_met}};
}

}  // namespace pfsim::api
