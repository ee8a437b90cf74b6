// How a run on the simulated die becomes a RunResult: shared by api::run (one
// run per process) and the device session (many runs on one die).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/run.h"
#include "session/case_runner.h"
#include "model/trace/recorder.h"
#include "runtime/platform/sim/sim_platform.h"

namespace pfsim::api {

// The worker's options from the configuration (prefetch.*, orch.*).
rt::WorkerOptions worker_options(const Config& cfg, bool enable_sdma, bool prefetch, bool warmup, bool skip_wait);
// The fatal teardown's constants (teardown.*).
rt::TeardownOptions teardown_options(const Config& cfg, uint32_t failing_resets);
// A close's steps for the summary's `teardown`.
nlohmann::json teardown_json(const rt::TeardownReport& report);

// A call's tasks (kernels, cores, start, end, dependencies), its log, its
// violations, warnings and first error into `result`. `callable` names each
// func_id's source. With `release`, each task's records are dropped from `call`
// once read (its `tasks` and `graph.tasks` end empty): the summary's records
// replace them rather than add to them (#49). A call that kept no task records
// (CallResult::task_records) gives their count alone.
void add_graph(CallResult& call, const CallableSpec& callable, const SimPlatform& platform, RunResult& result,
               bool release = false);

// A call's tasks in the trace: a "tasks" process with a lane per core, a
// slice per task on each core it ran on, and a flow arrow per dependency.
void trace_tasks(TraceRecorder& trace, const CallResult& call, const SimPlatform& platform);

// A case's output as the summary shows it, under `name`: its size and hash,
// and how it compared with its golden.
OutputResult output_result(const CaseOutput& out, const std::string& name);

// Inside a catch block around a run of a case: a launch the runtime refused
// (rt::RuntimeError) becomes the result's error; what the case or this machine
// refused (std::invalid_argument: a case that does not fit; any other
// std::runtime_error: a source that does not build or load, an orchestration
// error, the compiler or the compile cache unusable, GM full) is rethrown as
// BadInput; anything else is rethrown as it is.
void report_refusal(RunResult& result);

// Runs users' code (a case's golden, orchestration and kernels: `run`) with
// what it prints kept apart in `user_stdout` (also when it throws) and its host
// time bounded by orch.host_time_limit (past it the running kernel is stopped
// and named).
void run_users_code(const Config& cfg, std::string& user_stdout, const std::function<void()>& run);

// The graph's tasks as the advisor weighs them (none for a single launch).
std::vector<insight::TaskSpan> task_spans(const RunResult& result);

// Every block's counters now: the SoC's, and its cores' summed.
struct PlatformStats {
    Soc::Stats soc;
    CoreStats cores;
};
PlatformStats platform_stats(const SimPlatform& platform);

// The run's counters and lanes (what happened since `before`), time, cycles
// and series; sets `ran`.
void finish(RunResult& result, SimPlatform& platform, const PlatformStats& before, uint64_t time_ps,
            const Config& cfg);

}  // namespace pfsim::api
