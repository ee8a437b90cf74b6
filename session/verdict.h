// The one verdict on a pair of runs of the same work, prefetch off and on:
// both ran cleanly (no error, no protocol violation), their outputs are
// bit-identical to each other and equal to the reference or golden, and what
// the prefetch gained. `check`, `check --uncertainty` and `sweep` judge with it,
// and the Python harness through the device (`pfsim device`'s "judge"), at
// level 2 a pair of device runs, at level 3 a pair of level-3 runs (waves_run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "session/run.h"

namespace pfsim::api {

// The gain a case expects, in % of the prefetch-off time (case.toml's
// expected_gain_pct); +-1e9 is a side without bound.
struct Expectation {
    double min_gain_pct = -1e9, max_gain_pct = 1e9;
};

struct Verdict {
    // Why the pair is not equivalent or not golden-equal ("prefetch on: output
    // differs from the reference"); empty when it is, and only then are the
    // times and the gain set.
    std::string failure;
    double time_off_ns = 0, time_on_ns = 0;
    double gain_pct = 0;    // (off - on) / off, in %; 0 when off took no time
    bool gain_met = false;  // equivalent, and the gain within the expectation
    bool equivalent() const { return failure.empty(); }
};

Verdict judge(const RunResult& off, const RunResult& on, const Expectation& expected = {});

// A level-3 run of the Python harness (pfsim.level3: waves, each the calls of
// several ranks run together) as one run to judge: every call's outputs, as
// "waveW.rankR.NAME", then the host's tensors after the run (`host`: their
// names and hashes), as "host.NAME"; its first error and its protocol
// violations, after "wave W, rank R: "; golden-equal when every call is; its
// time each wave's longest call's, summed (a wave's ranks start together).
struct RankRun {
    uint32_t rank = 0;
    RunResult result;
};
RunResult waves_run(const std::vector<std::vector<RankRun>>& waves, const std::vector<OutputResult>& host = {});

// One side of a "judge" request: a run summary (to_json's), or a level-3 run,
// {"waves": [[{"rank": R, "result": SUMMARY}, ...], ...], "host": [{"name",
// "sha256"}, ...]} (waves_run; "host" optional). Throws BadInput naming what
// is missing or mistyped.
RunResult judged_run(const nlohmann::json& side);

// {"failure", "equivalent", "time_off_ns", "time_on_ns", "gain_pct", "gain_met"}: the
// verdict as `pfsim device` answers a "judge" request (the Python harness's).
nlohmann::json to_json(const Verdict& v);

}  // namespace pfsim::api
