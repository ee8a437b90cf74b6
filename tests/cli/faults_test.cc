// Faults injected into the SDMA path (pfsim run --inject, api/faults.h): each
// ends in a report naming the channel, the request or doorbell and the post,
// deterministically, and never hangs.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

using pfsim::test::pfsim;
using pfsim::test::Result;

nlohmann::json run_json(const std::string& args, int expected_status) {
    const Result r = pfsim("run " + args + " --json");
    EXPECT_EQ(r.status, expected_status) << args << "\n" << r.err;
    return nlohmann::json::parse(r.out);
}

bool has_warning(const nlohmann::json& j, const std::string& text) {
    for (const auto& w : j["warnings"]) {
        if (w.get<std::string>().find(text) != std::string::npos) return true;
    }
    return false;
}

TEST(Faults, AnSdmaErrorStopsOneChannelAndNamesTheRequestAndThePost) {
    // Two cores, each on its own channel group; the engine's first request fails.
    const auto j = run_json("prefetch_wait --arg cores=2 --arg bytes=2MiB --inject sdma-error:1", 1);
    ASSERT_EQ(j["faults"].size(), 1u) << j["faults"];
    const auto& f = j["faults"][0];
    EXPECT_EQ(f["kind"], "sdma-error");
    EXPECT_EQ(f["request"], 1);
    EXPECT_EQ(f["error"], "injected_fault");
    EXPECT_EQ(f["error_code"], 10);
    EXPECT_EQ(f["opcode"], 6);  // the post's data request (cache prefetch)
    ASSERT_TRUE(f.contains("post")) << f;
    EXPECT_EQ(f["post"]["id"], 1);
    EXPECT_EQ(f["post"]["bytes"], 1 << 20);
    // The failed channel's wait ran out its budget; the other core's did not.
    EXPECT_EQ(j["cores"]["prefetch_wait_timeouts"], 1);
    EXPECT_EQ(j["cores"]["prefetch_waits"], 2);
    EXPECT_GE(j["cores"]["prefetch_polls"].get<uint64_t>(), 100000u);
    EXPECT_TRUE(has_warning(j, "1 prefetch waits returned false after prefetch.poll_limit = 100000 polls")) << j["warnings"];
    unsigned stopped = 0;
    for (const auto& ch : j["sdma"]["channels"]) {
        if (ch["error"] == "injected_fault") {
            ++stopped;
            EXPECT_EQ(ch["channel"], f["channel"]);
        }
    }
    EXPECT_EQ(stopped, 1u);
    // The kernel writes whether its waits returned true: its status output shows it.
    EXPECT_FALSE(j["reference_equal"].get<bool>());
    // Text: one line with channel, request and post.
    const Result text = pfsim("run prefetch_wait --arg cores=2 --arg bytes=2MiB --inject sdma-error:1");
    EXPECT_NE(text.out.find("fault            sdma-error: SDMA channel " + std::to_string(f["channel"].get<int>()) +
                            " stopped with injected_fault (code 10) taking up request 1"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("; post 1 of core "), std::string::npos) << text.out;
}

TEST(Faults, AStalledEngineMakesEveryWaitPollItsWholeBudget) {
    const auto j = run_json("prefetch_wait --arg cores=2 --arg bytes=2MiB --arg rounds=2 --inject sdma-stall", 1);
    EXPECT_EQ(j["cores"]["prefetch_wait_timeouts"], 4);
    EXPECT_EQ(j["cores"]["prefetch_waits"], 4);
    EXPECT_EQ(j["cores"]["prefetch_polls"], 4 * 100000);  // exactly prefetch.poll_limit each
    EXPECT_EQ(j["sdma"]["requests"], 0);
    ASSERT_EQ(j["faults"].size(), 2u);  // one per channel that was rung
    for (const auto& f : j["faults"]) {
        EXPECT_EQ(f["kind"], "sdma-stall");
        EXPECT_EQ(f["unfetched"], 4);  // two posts of a data request and a flag copy
    }
    // The budget is a parameter: a smaller one gives up sooner, in fewer polls.
    const auto small = run_json("prefetch_wait --arg cores=2 --arg bytes=2MiB --arg rounds=2 --inject sdma-stall "
                                "--set prefetch.poll_limit=1000",
                                1);
    EXPECT_EQ(small["cores"]["prefetch_polls"], 4 * 1000);
    EXPECT_LT(small["kernel_time_ns"].get<double>(), j["kernel_time_ns"].get<double>());
}

TEST(Faults, ALostDoorbellDelaysItsRequestsUntilTheNextDoorbell) {
    // One core, two rounds of one post: doorbell 2 is round 1's flag doorbell.
    const auto lost = run_json("prefetch_wait --arg rounds=2 --inject doorbell-lost:2", 1);
    ASSERT_EQ(lost["faults"].size(), 1u);
    EXPECT_EQ(lost["faults"][0]["kind"], "doorbell-lost");
    EXPECT_EQ(lost["faults"][0]["doorbell"], 2);
    EXPECT_EQ(lost["faults"][0]["post"]["id"], 1);
    EXPECT_EQ(lost["cores"]["prefetch_wait_timeouts"], 1);  // round 1's wait only
    EXPECT_EQ(lost["sdma"]["requests"], 4);                 // round 2's doorbell covered the lost one
    EXPECT_EQ(lost["sdma"]["channels"][0]["error"], "none");
    // Losing a post's first doorbell costs nothing: its second covers the data requests.
    const auto first = run_json("prefetch_wait --arg rounds=2 --inject doorbell-lost:1", 0);
    EXPECT_EQ(first["cores"]["prefetch_wait_timeouts"], 0);
    EXPECT_EQ(first["faults"][0]["post"]["id"], 1);
}

TEST(Faults, TasksTheFaultDidNotTouchKeepTheirOutputs) {
    // weight_warm: the warm task's wait fails; the prefetch changes no value,
    // so every output still matches its golden, and the run says what failed.
    const auto j = run_json("kernels/cases/weight_warm/case_waited.toml --arg iters=10 --inject sdma-error:1", 0);
    EXPECT_TRUE(j["reference_equal"].get<bool>());
    for (const auto& o : j["outputs"]) EXPECT_TRUE(o["equal_reference"].get<bool>()) << o;
    EXPECT_EQ(j["faults"][0]["kind"], "sdma-error");
    EXPECT_TRUE(has_warning(j, "prefetch waits returned false")) << j["warnings"];
}

TEST(Faults, TheSameFaultGivesTheSameReport) {
    const Result a = pfsim("run prefetch_wait --arg cores=2 --arg bytes=2MiB --inject sdma-error:2 --json");
    const Result b = pfsim("run prefetch_wait --arg cores=2 --arg bytes=2MiB --inject sdma-error:2 --json");
    EXPECT_EQ(a.out, b.out);
    EXPECT_FALSE(a.out.empty());
}

TEST(Faults, BadFaultsAreRefusedBeforeAnythingRuns) {
    const struct {
        const char* args;
        const char* message;
    } cases[] = {
        {"--inject sdma-error:0", "--inject sdma-error:0: K counts requests or doorbells from 1, not '0'"},
        {"--inject doorbell-lost:x", "K counts requests or doorbells from 1, not 'x'"},
        {"--inject sdma-stall:3", "--inject sdma-stall:3: only sdma-error and doorbell-lost take :K"},
        {"--inject sdma-error --inject sdma-error:2", "--inject sdma-error is given twice"},
        {"--inject core-melt", "unknown fault 'core-melt' for --inject (known: prefetch-corrupt, skip-wait, sdma-error[:K]"},
        {"--inject sdma-stall --set sdma.frontend=rtl", "--inject: SDMA faults are injected into the TLM front-end"},
    };
    for (const auto& c : cases) {
        const Result r = pfsim(std::string("run prefetch_wait --json ") + c.args);
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
        EXPECT_TRUE(r.out.empty()) << c.args;
    }
}

}  // namespace
