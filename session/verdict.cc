#include "session/verdict.h"

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
        if (off.outputs[i].sha256 != on.outputs[i].sha256) {
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

nlohmann::json to_json(const Verdict& v) {
    return {{"failure", v.failure},       {"equivalent", v.equivalent()}, {"time_off_ns", v.time_off_ns},
            {"time_on_ns", v.time_on_ns}, {"gain_pct", v.gain_pct},       {"gain_met", v.gain_met}};
}

}  // namespace pfsim::api
