// The one place a request becomes a result on a die (session/die_run.h), seen
// from its two front-ends in one process: a Session's run (`pfsim run`, a fresh
// die per run) and a DeviceSession's (`pfsim device`, the Python Worker's die,
// which persists). The same request gives the same summary and trace, byte for
// byte, on a device's first run; a device call of the same work (the Python
// Worker's way in) gives the same tasks, times, counters and outputs. The
// control: the device's second run of the request is not a fresh die's (its L2
// and time carried over), and the comparison tells. The same holds for a
// level-3 case on several dies: a Session's run (fresh dies) and a
// RankSession's (`pfsim device --ranks`, whose dies persist) go through the
// N-die form of the one place (DieRun::run_on_dies).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "loader/shared_object.h"
#include "runtime/platform/sim/sim_context.h"
#include "session/case_file.h"
#include "session/device.h"
#include "session/device_ranks.h"
#include "session/run.h"
#include "session/run_ranks.h"
#include "session/session.h"
#include "tests/support/harness.h"
#include "tests/support/pfsim_cli.h"

namespace pfsim {
namespace {

api::RunRequest request_of(const std::string& target, bool prefetch, const std::string& trace) {
    api::RunRequest r;
    r.target = target;
    r.prefetch = prefetch;
    r.trace = trace;
    r.sanitize = prefetch;  // the insight's findings and markers go through the one place too
    r.advise = prefetch;
    return r;
}

struct RunOutput {
    nlohmann::json summary;
    std::string trace;
};

RunOutput session_run(const Config& cfg, const api::RunRequest& request) {
    api::Session session(cfg);
    const api::RunResult r = session.run(request);
    return {api::to_json(r, cfg), test::slurp(request.trace)};
}

// The work of `target` as the Python Worker gives it to its device: the
// case's callable registered, its tensors' initial values and its scalars.
api::DeviceCall call_of(api::DeviceSession& device, const std::string& target, bool prefetch) {
    const CaseSpec spec = read_case(api::resolve_target(target));
    KernelCompiler compiler;
    const CaseData data = case_data(spec, compiler);
    api::DeviceCall c;
    c.handle = device.register_callable(spec);
    c.prefetch = prefetch;
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        CallTensor t;
        t.dtype = spec.tensors[i].dtype;
        t.shape = spec.tensors[i].shape;
        t.data = data.initial[i];
        c.tensors.push_back(std::move(t));
        c.names.push_back(spec.tensors[i].name);
    }
    for (const ScalarSpec& s : spec.scalars) c.scalars.push_back(s.bits);
    return c;
}

// What a run simulated: its times, tasks and counters, and the hashes of the
// tensors named in `outputs` (a case run shows its outputs; a device call
// every tensor it was given), not how the request named its work.
nlohmann::json simulated(const nlohmann::json& summary, const nlohmann::json& outputs) {
    nlohmann::json s;
    for (const char* key : {"kernel_time_ns", "cycles", "tasks", "gm", "l2", "sdma", "cores", "lanes", "series",
                            "sim_time_total_ns", "warmup", "violations", "warnings"}) {
        s[key] = summary.value(key, nlohmann::json());
    }
    for (const nlohmann::json& named : outputs) {
        for (const nlohmann::json& o : summary.at("outputs")) {
            if (o.at("name") == named.at("name")) s["sha256"][o.at("name").get<std::string>()] = o.at("sha256");
        }
    }
    return s;
}

TEST(DieRun, ADevicesFirstRunIsAFreshDiesByteForByte) {
    const Config cfg = test::config_with({});
    for (const bool prefetch : {true, false}) {
        SCOPED_TRACE(prefetch ? "prefetch on" : "prefetch off");
        const RunOutput fresh = session_run(cfg, request_of("weight_warm", prefetch, test::tmp("fresh.json")));
        ASSERT_FALSE(fresh.summary.contains("error")) << fresh.summary.value("error", "");
        RunOutput first, second;
        fresh_simulation_context();
        {
            api::DeviceSession device(cfg, true);
            const api::RunRequest once = request_of("weight_warm", prefetch, test::tmp("device.json"));
            first = {api::to_json(device.run(once), cfg), test::slurp(once.trace)};
            const api::RunRequest again = request_of("weight_warm", prefetch, test::tmp("again.json"));
            second = {api::to_json(device.run(again), cfg), test::slurp(again.trace)};
        }
        unload_kernels();
        EXPECT_EQ(first.summary.dump(1), fresh.summary.dump(1));
        EXPECT_TRUE(first.trace == fresh.trace) << "the device's trace differs from the fresh die's";
        EXPECT_GT(fresh.trace.size(), 1000u);
        // The control: the die kept its L2 and its time.
        EXPECT_NE(second.summary.dump(1), fresh.summary.dump(1));
        EXPECT_GT(second.summary.at("sim_time_total_ns").get<double>(), fresh.summary.at("sim_time_total_ns").get<double>());
        EXPECT_FALSE(second.trace == fresh.trace);
    }
}

TEST(DieRun, ADeviceCallSimulatesWhatTheCaseRunSimulates) {
    const Config cfg = test::config_with({});
    api::RunRequest request;
    request.target = "weight_warm";
    const nlohmann::json case_run = api::to_json(api::Session(cfg).run(request), cfg);
    const nlohmann::json& outputs = case_run.at("outputs");
    const nlohmann::json fresh = simulated(case_run, outputs);
    ASSERT_EQ(fresh.at("sha256").size(), 2u);
    nlohmann::json first, second;
    fresh_simulation_context();
    {
        api::DeviceSession device(cfg, true);
        api::DeviceCall c = call_of(device, "weight_warm", true);
        first = simulated(api::to_json(device.run(c), cfg), outputs);
        api::DeviceCall again = call_of(device, "weight_warm", true);
        second = simulated(api::to_json(device.run(again), cfg), outputs);
    }
    unload_kernels();
    EXPECT_EQ(first.dump(1), fresh.dump(1));
    EXPECT_NE(second.dump(1), fresh.dump(1));  // the control: a die that is not fresh
}

// A run that keeps no task records (`pfsim run`'s text summary, #49) gives their count and
// everything else a run that keeps them gives; only the task list is empty. The control:
// the list is there, and differs, when they are kept. A level-3 case keeps them whatever
// the request says (its time is read from them).
TEST(DieRun, ARunWithoutTaskRecordsGivesTheirCountAndTheSameSummary) {
    const Config cfg = test::config_with({});
    for (const std::string target : {"moe_step", "cv_pipeline"}) {
        api::RunRequest request;
        request.target = target;
        const api::RunResult kept = api::Session(cfg).run(request);
        request.task_records = false;
        const api::RunResult counted = api::Session(cfg).run(request);
        ASSERT_TRUE(kept.error.empty()) << kept.error;
        ASSERT_GT(kept.tasks.size(), 2u) << target;
        EXPECT_EQ(kept.task_count, kept.tasks.size()) << target;
        EXPECT_EQ(counted.task_count, kept.tasks.size()) << target;
        nlohmann::json with = api::to_json(kept, cfg), without = api::to_json(counted, cfg);
        if (target == "moe_step") {
            EXPECT_EQ(without.dump(1), with.dump(1));
            continue;
        }
        EXPECT_TRUE(counted.tasks.empty());
        EXPECT_FALSE(without.contains("tasks"));
        EXPECT_EQ(without.at("task_count"), kept.tasks.size());
        EXPECT_FALSE(with.contains("task_count"));
        with.erase("tasks");
        without.erase("task_count");
        EXPECT_EQ(without.dump(1), with.dump(1));
        EXPECT_EQ(api::from_json(api::to_json(counted, cfg)).task_count, kept.tasks.size());  // back from the summary
    }
}

// A device call that asks for no task records (the Python harness's runs, #49) keeps none and
// sends their count in place of the list; all else, its trace and its advice included, is what
// the call that keeps them gives. The control: the call that keeps them lists them all.
TEST(DieRun, ADeviceCallWithoutTaskRecordsSendsTheirCountAndTheSameSummary) {
    const Config cfg = test::config_with({});
    for (const bool insight : {false, true}) {
        SCOPED_TRACE(insight ? "with a trace and the advisor" : "plain");
        RunOutput out[2];
        api::RunResult results[2];
        for (const bool records : {true, false}) {
            fresh_simulation_context();
            {
                api::DeviceSession device(cfg, true);
                api::DeviceCall c = call_of(device, "cv_pipeline", true);
                c.task_records = records;
                if (insight) {
                    c.trace = test::tmp(records ? "records.json" : "count.json");
                    c.advise = true;
                }
                results[records] = device.run(c);
                out[records] = {api::to_json(results[records], cfg), insight ? test::slurp(c.trace) : ""};
            }
            unload_kernels();
        }
        nlohmann::json& with = out[true].summary;
        nlohmann::json& without = out[false].summary;
        ASSERT_FALSE(with.contains("error")) << with.value("error", "");
        ASSERT_GT(with.at("tasks").size(), 2u);  // the control
        EXPECT_FALSE(without.contains("tasks"));
        EXPECT_TRUE(results[false].tasks.empty());
        EXPECT_EQ(without.at("task_count"), with.at("tasks").size());
        with.erase("tasks");
        without.erase("task_count");
        EXPECT_EQ(without.dump(1), with.dump(1));
        EXPECT_TRUE(out[false].trace == out[true].trace) << "the traces differ";
        if (insight) {
            EXPECT_GT(out[true].trace.size(), 1000u);
        }
    }
    fresh_simulation_context();
    api::DeviceSession device(cfg, true);
    api::DeviceCall c = call_of(device, "cv_pipeline", true);
    c.task_records = false;
    c.spans = true;
    try {
        device.run(c);
        FAIL() << "spans without task records ran";
    } catch (const api::BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("spans"), std::string::npos) << e.what();
    }
    unload_kernels();
}

// A level-3 case's run: its summary and each die's trace (rank_trace_file).
RunOutput with_rank_traces(const api::RunResult& r, const Config& cfg, const std::string& trace) {
    RunOutput out{api::to_json(r, cfg), ""};
    for (uint32_t rank = 0; rank < r.ranks; ++rank) out.trace += test::slurp(api::rank_trace_file(trace, rank)) + "\n--\n";
    return out;
}

api::RunRequest level3_request(bool prefetch, const std::string& trace) {
    api::RunRequest r;
    r.target = "moe_step";  // two dies: copies between them behind a warm's prefetches in one ring
    r.prefetch = prefetch;
    r.trace = trace;
    r.advise = prefetch;  // the communication advice goes through the one place too
    return r;
}

TEST(DieRun, ADeviceOfSeveralDiesFirstCaseRunIsFreshDiesByteForByte) {
    const Config cfg = test::config_with({});
    for (const bool prefetch : {true, false}) {
        SCOPED_TRACE(prefetch ? "prefetch on" : "prefetch off");
        const api::RunRequest request = level3_request(prefetch, test::tmp("fresh3.json"));
        const RunOutput fresh = with_rank_traces(api::Session(cfg).run(request), cfg, request.trace);
        ASSERT_FALSE(fresh.summary.contains("error")) << fresh.summary.value("error", "");
        ASSERT_EQ(fresh.summary.value("ranks", 0), 2);
        RunOutput first, second;
        fresh_simulation_context();
        {
            api::RankSession device(cfg, 2, true);
            const api::RunRequest once = level3_request(prefetch, test::tmp("device3.json"));
            first = with_rank_traces(device.run(once), cfg, once.trace);
            const api::RunRequest again = level3_request(prefetch, test::tmp("again3.json"));
            second = with_rank_traces(device.run(again), cfg, again.trace);
        }
        unload_kernels();
        EXPECT_EQ(first.summary.dump(1), fresh.summary.dump(1));
        EXPECT_TRUE(first.trace == fresh.trace) << "the device's traces differ from the fresh dies'";
        EXPECT_GT(fresh.trace.size(), 100000u);
        if (prefetch) {
            EXPECT_FALSE(fresh.summary.at("advisor").at("advice").empty());
        }
        // The control: the dies kept their L2 and their time.
        EXPECT_NE(second.summary.dump(1), fresh.summary.dump(1));
        EXPECT_GT(second.summary.at("sim_time_total_ns").get<double>(), fresh.summary.at("sim_time_total_ns").get<double>());
        EXPECT_FALSE(second.trace == fresh.trace);
    }
}

TEST(DieRun, WhatPersistentDiesCannotHonourIsRefusedByName) {
    const Config cfg = test::config_with({});
    fresh_simulation_context();
    api::RankSession device(cfg, 3, true);
    api::RunRequest request = level3_request(true, "");
    try {
        device.run(request);
        FAIL() << "a case of two ranks ran on three dies";
    } catch (const api::BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("ranks = 2 (the device has 3 dies)"), std::string::npos) << e.what();
    }
}

TEST(DieRun, WhatAPersistentDieCannotHonourIsRefusedByName) {
    const Config cfg = test::config_with({});
    fresh_simulation_context();
    api::DeviceSession device(cfg, true);
    api::RunRequest waves;
    waves.target = "weight_warm";
    waves.waves = test::tmp("w.vcd");
    try {
        device.run(waves);
        FAIL() << "--waves ran on a persistent die";
    } catch (const api::BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("--waves"), std::string::npos) << e.what();
    }
    api::RunRequest fault;
    fault.target = "weight_warm";
    fault.faults = {"core-fault"};
    try {
        device.run(fault);
        FAIL() << "core-fault ran on a persistent die";
    } catch (const api::BadInput& e) {
        EXPECT_NE(std::string(e.what()).find("core-fault"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace pfsim
