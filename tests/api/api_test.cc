// The typed run API in-process: a run's typed result, the serializer's round
// trip, and bad input refused before a die is built.
#include <gtest/gtest.h>

#include "api/run.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

// SystemC elaborates once per process: this is the one run of this binary.
TEST(Api, ARunGivesATypedResultThatSurvivesTheSerializer) {
    const Config cfg = test::config_with({});
    api::RunRequest request;
    request.target = "prefetch_copy";
    const api::RunResult r = api::run(cfg, request);
    ASSERT_TRUE(r.error.empty()) << r.error;
    EXPECT_TRUE(r.ran);
    EXPECT_EQ(r.exit_status(), 0);
    EXPECT_EQ(r.name, "prefetch_copy");
    EXPECT_GT(r.kernel_time_ns, 1000.0);
    ASSERT_EQ(r.outputs.size(), 1u);
    EXPECT_TRUE(r.outputs[0].equal_reference);
    EXPECT_EQ(r.outputs[0].bytes, 512u);
    EXPECT_EQ(r.counters["sdma"]["prefetch_requests"], 1);
    EXPECT_EQ(r.cores_launched, 1u);
    const nlohmann::json j = api::to_json(r, cfg);
    const api::RunResult back = api::from_json(j);
    EXPECT_EQ(api::to_json(back, cfg), j);
    EXPECT_EQ(back.outputs[0].sha256, r.outputs[0].sha256);
    EXPECT_DOUBLE_EQ(back.l2_hit_rate(), r.l2_hit_rate());
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
