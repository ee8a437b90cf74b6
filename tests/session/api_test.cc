// The typed run API in-process: a run's typed result, the serializer's round
// trip, and bad input refused before a die is built.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "session/run.h"
#include "session/summary.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

// The keys of a summary's counter blocks and lanes that `pfsim stats` does not
// declare, and the declared ones the summary lacks.
std::vector<std::string> undeclared(const nlohmann::json& summary) {
    std::set<std::string> declared, shown;
    for (const SummaryStat& s : summary_stats()) declared.insert(s.key);
    for (const std::string& block : counter_blocks()) {
        for (const auto& [k, v] : summary.at(block).items()) shown.insert(block + "." + k);
    }
    for (const auto& [k, v] : summary.at("lanes").items()) shown.insert("lanes." + k);
    std::vector<std::string> out;
    for (const std::string& k : shown) {
        if (!declared.count(k)) out.push_back("shown, not declared: " + k);
    }
    for (const std::string& k : declared) {
        if (!shown.count(k)) out.push_back("declared, not shown: " + k);
    }
    return out;
}

// SystemC elaborates once per process: this is the one run of this binary.
TEST(Api, ARunGivesATypedResultThatSurvivesTheSerializer) {
    const Config cfg = test::config_with({});
    api::RunRequest request;
    request.target = "prefetch_demo";
    const api::RunResult r = api::run(cfg, request);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.ran);
    EXPECT_EQ(r.exit_status(), 0);
    EXPECT_EQ(r.name, "prefetch_demo");
    EXPECT_GT(r.kernel_time_ns, 1000.0);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_TRUE(r.outputs[0].equal_reference);
    EXPECT_EQ(r.outputs[0].bytes, 512u);
    EXPECT_EQ(r.counters["sdma"]["prefetch_requests"], 1);
    EXPECT_TRUE(r.graph);  // a shipped case, by its name
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].cores.size(), 1u);
    const nlohmann::json j = api::to_json(r, cfg);
    const api::RunResult back = api::from_json(j);
    EXPECT_EQ(api::to_json(back, cfg), j);
    EXPECT_EQ(back.outputs[0].sha256, r.outputs[0].sha256);
    EXPECT_DOUBLE_EQ(back.l2_hit_rate(), r.l2_hit_rate());

    // Every number the summary shows is declared once by its block, and the
    // other way round; a stray key is caught.
    EXPECT_EQ(undeclared(j), std::vector<std::string>{});
    nlohmann::json stray = j;
    stray["l2"]["made_up"] = 1;
    stray["lanes"].erase("mte2_ns");
    EXPECT_EQ(undeclared(stray),
              (std::vector<std::string>{"shown, not declared: l2.made_up", "declared, not shown: lanes.mte2_ns"}));
    EXPECT_EQ(j["l2"]["hit_rate"], j["l2"]["hits"].get<double>() /
                                       (j["l2"]["hits"].get<double>() + j["l2"]["misses"].get<double>()));
}

TEST(Api, BadInputIsRefusedBeforeADieIsBuilt) {
    const Config cfg = test::config_with({});
    api::RunRequest unknown;
    unknown.target = "no_such_kernel";
    EXPECT_THROW(api::run(cfg, unknown), api::BadInput);
    api::RunRequest arg;
    arg.target = "prefetch_wait";
    arg.kernel_args = {"bytes=banana"};
    EXPECT_THROW(api::run(cfg, arg), api::BadInput);
    api::RunRequest missing;
    missing.target = "/nonexistent/case.toml";
    try {
        api::run(cfg, missing);
        FAIL() << "ran";
    } catch (const api::BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/case.toml: cannot read the case file"), std::string::npos);
    }
}

TEST(Api, TheSerializerRefusesWhatIsNotARunSummary) {
    EXPECT_THROW(api::from_json(nlohmann::json::parse(R"({"schema":"pfsim.check/1"})")), api::BadInput);
    EXPECT_THROW(api::from_json(nlohmann::json::parse(
                     R"({"schema":"pfsim.summary/1","command":"run","kernel":"k","prefetch":"on","args":{},
                         "sim_time_total_ns":1,"kernel_time_ns":"abc"})")),
                 api::BadInput);
    EXPECT_THROW(api::from_json(nlohmann::json()), api::BadInput);
}

}  // namespace
}  // namespace pfsim
