// Faults injected into the SDMA path (pfsim run --inject, session/faults.h): each
// ends in a report naming the channel, the request or doorbell and the post,
// deterministically, and never hangs.
#include <string>
#include <utility>

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
    const auto j = run_json("cases/weight_warm/case_waited.toml --arg iters=10 --inject sdma-error:1", 0);
    EXPECT_TRUE(j["reference_equal"].get<bool>());
    for (const auto& o : j["outputs"]) EXPECT_TRUE(o["equal_reference"].get<bool>()) << o;
    EXPECT_EQ(j["faults"][0]["kind"], "sdma-error");
    EXPECT_TRUE(has_warning(j, "prefetch waits returned false")) << j["warnings"];
}

// A core trap: the run fails naming the task, block and core; the worker is
// closed as after a fatal device error (protocol §3.6, §5 item 23).
TEST(Faults, ACoreFaultFailsTheRunAndTheOtherCoresKeepTheirOutputs) {
    const auto j = run_json("cases/weight_warm/case.toml --inject core-fault:aiv3", 1);
    const std::string error = j["error"];
    EXPECT_NE(error.find("task 2 (aiv, func 2) block 3 on die.aiv3"), std::string::npos) << error;
    EXPECT_NE(error.find("kernel_rowsum.cpp:"), std::string::npos) << error;
    EXPECT_NE(error.find("stopped: core trap (--inject core-fault)"), std::string::npos) << error;
    EXPECT_EQ(j["faults"][0]["kind"], "core-fault");
    EXPECT_EQ(j["faults"][0]["core"], "die.aiv3");
    // C (the cube's task) and the other seven blocks' rows of Y are untouched by
    // the trap; block 3's 64 rows are not written (zeros).
    EXPECT_TRUE(j["outputs"][0]["equal_reference"].get<bool>());
    EXPECT_EQ(j["outputs"][1]["mismatches"], 64);
    EXPECT_EQ(j["outputs"][1]["first_mismatch"], 3 * 64);
}

TEST(Faults, AFatalCloseWithSdmaWaitsTheHandOffAndResetsOnce) {
    const auto j = run_json("cases/weight_warm/case.toml --inject core-fault", 1);
    const auto& t = j["teardown"];
    EXPECT_TRUE(t["fatal"].get<bool>());
    EXPECT_TRUE(t["sdma"].get<bool>());
    ASSERT_EQ(t["steps"].size(), 3u) << t;
    EXPECT_EQ(t["steps"][0]["ns"], 50e9);  // max(10 s, 45 s + 5 s)
    EXPECT_NE(t["steps"][0]["step"].get<std::string>().find("hand-off wait"), std::string::npos);
    EXPECT_EQ(t["steps"][1]["step"], "force reset, attempt 1 of 1: confirmed");
    EXPECT_NE(t["steps"][2]["step"].get<std::string>().find("forgot 48 SDMA queues"), std::string::npos);
    EXPECT_EQ(t["reset_attempts"], 1);
    EXPECT_EQ(t["time_ns"], 50.3e9);
    // At the floor: an op timeout of 5 s or less waits 10 s; 6 s waits 11 s.
    for (const auto& [timeout, wait] : {std::pair{"1s", 10e9}, {"5s", 10e9}, {"6s", 11e9}}) {
        const auto k = run_json(std::string("cases/weight_warm/case.toml --inject core-fault --set "
                                            "teardown.op_timeout=") + timeout, 1);
        EXPECT_EQ(k["teardown"]["steps"][0]["ns"], wait) << timeout;
    }
    // Its one attempt failing: the handles are quarantined; there is no second attempt.
    const auto q = run_json("cases/weight_warm/case.toml --inject core-fault --inject reset-fail", 1);
    EXPECT_FALSE(q["teardown"]["reset_confirmed"].get<bool>());
    EXPECT_EQ(q["teardown"]["reset_attempts"], 1);
    EXPECT_NE(q["teardown"]["steps"].back()["step"].get<std::string>().find("quarantined"), std::string::npos);
}

TEST(Faults, AFatalCloseWithoutSdmaTriesUpToThreeResetsAndDoesNotWait) {
    const std::string run = "cases/vector_chain/case.toml --no-sdma --inject core-fault";
    const auto two = run_json(run + " --inject reset-fail:2", 1);
    const auto& t = two["teardown"];
    EXPECT_FALSE(t["sdma"].get<bool>());
    EXPECT_TRUE(t["reset_confirmed"].get<bool>());
    EXPECT_EQ(t["reset_attempts"], 3);
    EXPECT_EQ(t["reset_attempts_allowed"], 3);
    ASSERT_EQ(t["steps"].size(), 3u) << t;  // three resets, no hand-off wait, nothing to forget
    EXPECT_EQ(t["steps"][2]["step"], "force reset, attempt 3 of 3: confirmed");
    EXPECT_EQ(t["time_ns"], 0.9e9);
    const auto three = run_json(run + " --inject reset-fail:3", 1);  // the limit: no fourth attempt
    EXPECT_FALSE(three["teardown"]["reset_confirmed"].get<bool>());
    EXPECT_EQ(three["teardown"]["reset_attempts"], 3);
    const auto more = run_json(run + " --inject reset-fail:2 --set teardown.reset_attempts=2", 1);
    EXPECT_FALSE(more["teardown"]["reset_confirmed"].get<bool>());
}

TEST(Faults, AHealthyRunHasNoTeardownAndAnUnusedTrapIsAWarning) {
    const auto healthy = run_json("cases/vector_chain/case.toml", 0);
    EXPECT_FALSE(healthy.contains("teardown"));
    const auto unused = run_json("cases/vector_chain/case.toml --inject core-fault:aic5", 0);
    EXPECT_FALSE(unused.contains("teardown"));
    EXPECT_FALSE(unused["faults"][0]["trapped"].get<bool>());
    EXPECT_TRUE(has_warning(unused, "--inject core-fault: no kernel started on aic5")) << unused["warnings"];
    EXPECT_TRUE(unused["reference_equal"].get<bool>());
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
        {"--inject sdma-stall:3", "--inject sdma-stall:3: only sdma-error, doorbell-lost and reset-fail take :K"},
        {"--inject core-fault:aiv48", "--inject core-fault:aiv48: no such core (the die has aiv0..aiv47 and aic0..aic23)"},
        {"--inject core-fault:", "--inject core-fault: name a core after the colon"},
        {"--inject reset-fail", "--inject reset-fail: only with core-fault"},
        {"--inject core-fault --inject reset-fail:0", "K counts requests or doorbells from 1, not '0'"},
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
