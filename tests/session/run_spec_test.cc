// A run as data (session/run_spec.h) and the one verdict on a pair of runs
// (session/verdict.h): no die is built here.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "session/run_spec.h"
#include "session/verdict.h"

namespace pfsim::api {
namespace {

RunSpec every_field_set() {
    RunSpec s;
    s.config = {"a2a3", {"/tmp/my.toml"}, {"l2.size=48MiB", "l2.demand=ideal"}};
    RunRequest& r = s.run;
    r.target = "/cases/vector_chain/case.toml";
    r.kernel_args = {"n=4096"};
    r.prefetch = false;
    r.enable_sdma = false;
    r.warmup = false;
    r.faults = {"sdma-error:3"};
    r.trace = "/tmp/t.json";
    r.waves = "/tmp/w.vcd";
    r.outputs_dir = "/tmp/out";
    r.sanitize = true;
    r.suppressions = "/tmp/supp";
    r.advise = true;
    r.dropped_sites = {"k.cpp:10"};
    r.free_sites = {"k.cpp:11"};
    r.warm_load_sites = {"k.cpp:12"};
    r.around_load_sites = {"k.cpp:13"};
    r.progress_ms = 0;
    r.task_records = false;
    return s;
}

TEST(RunSpec, EveryFieldSurvivesJson) {
    const RunSpec s = every_field_set();
    const RunSpec back = run_spec_from_json(nlohmann::json::parse(to_json(s).dump()));
    EXPECT_EQ(to_json(back), to_json(s));
    EXPECT_TRUE(back == s);
    RunSpec other = s;  // the control: one field changed is another spec
    other.run.around_load_sites.clear();
    EXPECT_FALSE(other == s);
    other = s;
    other.run.task_records = true;
    EXPECT_FALSE(other == s);

    RunSpec replay;
    replay.is_replay = true;
    replay.replay = {"/tmp/ws.trace", "ws.trace", true, false, ""};
    const RunSpec replay_back = run_spec_from_json(to_json(replay));
    EXPECT_TRUE(replay_back.is_replay);
    EXPECT_EQ(replay_back.replay.label, "ws.trace");
    EXPECT_TRUE(replay_back.replay.verify);
}

TEST(RunSpec, DescribesItselfAsACommandLineWould) {
    const std::string d = every_field_set().describe();
    EXPECT_EQ(d.rfind("run /cases/vector_chain/case.toml --prefetch off --arg n=4096 --no-sdma", 0), 0u) << d;
    EXPECT_NE(d.find("--set l2.demand=ideal"), std::string::npos) << d;
    EXPECT_NE(d.find("--bypass-loads k.cpp:13"), std::string::npos) << d;
}

TEST(RunSpec, ABadSpecNamesTheField) {
    auto error_of = [](const nlohmann::json& j) -> std::string {
        try {
            run_spec_from_json(j);
        } catch (const BadInput& e) {
            return e.what();
        }
        return "";
    };
    nlohmann::json j = to_json(every_field_set());
    EXPECT_EQ(error_of(j), "");
    // Worded as base/json_field.h words the device's requests.
    j["run"]["prefetch"] = "yes";
    EXPECT_EQ(error_of(j), "run spec: run.prefetch: expected a boolean, got a string");
    j = to_json(every_field_set());
    j["run"]["progress_ms"] = 2.5;
    EXPECT_EQ(error_of(j), "run spec: run.progress_ms: expected an integer of 64 bits, got 2.5");
    j = to_json(every_field_set());
    j["run"]["faults"] = {"skip-wait", 3};
    EXPECT_EQ(error_of(j), "run spec: run.faults[1]: expected a string, got a number");
    j = to_json(every_field_set());
    j["config"]["sets"] = "l2.size=48MiB";
    EXPECT_EQ(error_of(j), "run spec: config.sets: expected an array, got a string");
    j = to_json(every_field_set());
    j["run"].erase("target");
    EXPECT_EQ(error_of(j), "run spec: run.target: missing");
    j = to_json(every_field_set());
    j["replay"] = j["run"];
    EXPECT_NE(error_of(j).find("exactly one of run and replay"), std::string::npos) << error_of(j);
    j = to_json(every_field_set());
    j["run"]["prefetchh"] = false;  // a misspelt field is not left at its default in silence
    EXPECT_NE(error_of(j).find("run.prefetchh: unknown field"), std::string::npos) << error_of(j);
    EXPECT_EQ(error_of(nlohmann::json::array()), "run spec: spec: expected an object, got an array");
    EXPECT_EQ(error_of({{"run", 1}}), "run spec: run: expected an object, got a number");
    const nlohmann::json bare = {{"run", {{"target", "no_gain"}}}};  // every other field at its default
    EXPECT_EQ(error_of(bare), "");
    EXPECT_EQ(to_json(run_spec_from_json(bare)), to_json([] {
                  RunSpec s;
                  s.run.target = "no_gain";
                  return s;
              }()));
}

RunResult ran(double ns, const std::string& sha = "abc") {
    RunResult r;
    r.ran = true;
    r.kernel_time_ns = ns;
    r.outputs.push_back({"y", 64, sha, true});
    return r;
}

TEST(Judge, AnEquivalentPairHasItsGainAndTheExpectationDecides) {
    const Verdict v = judge(ran(100), ran(80), {10, 30});
    EXPECT_TRUE(v.equivalent()) << v.failure;
    EXPECT_DOUBLE_EQ(v.gain_pct, 20);
    EXPECT_TRUE(v.gain_met);
    EXPECT_FALSE(judge(ran(100), ran(80), {25, 30}).gain_met);  // below the expected range
    EXPECT_FALSE(judge(ran(100), ran(120), {0, 30}).gain_met);  // a loss
    EXPECT_DOUBLE_EQ(judge(ran(0), ran(0)).gain_pct, 0);       // no time off: no gain, no division
}

TEST(Judge, EveryWayAPairFailsIsNamed) {
    EXPECT_EQ(judge(ran(100), ran(80, "def")).failure, "output y differs between prefetch off and on");
    RunResult on = ran(80);
    on.reference_equal = false;
    EXPECT_EQ(judge(ran(100), on).failure, "prefetch on: output differs from the reference");
    on = ran(80);
    on.error = "kernel trapped";
    EXPECT_EQ(judge(ran(100), on).failure, "prefetch on: kernel trapped");
    RunResult off = ran(100);
    off.violations = {"wait before post"};
    EXPECT_EQ(judge(off, ran(80)).failure, "prefetch off: protocol violation: wait before post");
    on = ran(80);
    on.outputs.push_back({"z", 64, "abc", true});
    EXPECT_EQ(judge(ran(100), on).failure, "the runs produced different outputs");
    // Outputs hashed by digest (base/digest.h) instead: a differing digest fails as a SHA-256 does.
    RunResult digest_off = ran(100, ""), digest_on = ran(80, "");
    digest_off.outputs[0].digest = digest_on.outputs[0].digest = "d1";
    EXPECT_TRUE(judge(digest_off, digest_on).equivalent());
    digest_on.outputs[0].digest = "d2";
    EXPECT_EQ(judge(digest_off, digest_on).failure, "output y differs between prefetch off and on");
    const Verdict failed = judge(ran(100), ran(80, "def"), {0, 100});
    EXPECT_FALSE(failed.gain_met);  // a failed pair meets no expectation
    EXPECT_DOUBLE_EQ(failed.gain_pct, 0);
}

}  // namespace
}  // namespace pfsim::api
