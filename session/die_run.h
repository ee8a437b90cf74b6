// One request's run on a die that exists: the one place a request becomes a
// RunResult on a die, whether the die was built for the run (api::run, which
// a Session calls with a fresh simulation context) or persists across runs
// (DeviceSession, `pfsim device`). The same request on a fresh die of either
// gives the same summary and trace, byte for byte (tests/session:die_run_test).
//
// A run sets the die up for the request (prefetch on or off, the what-if
// sites, the injected faults), observes it as asked (trace, sanitizer,
// advisor), runs the work -- a case file's or a device call's -- with users'
// code guarded (its stdout kept apart, its host time bounded), and finishes
// the result: tasks, outputs, the counters since the run began, what each
// fault did, the sanitizer's findings, the advice.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "insight/sanitizer.h"
#include "loader/compiler.h"
#include "model/config/config.h"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"
#include "session/case_file.h"
#include "session/case_runner.h"
#include "session/faults.h"
#include "session/graph_result.h"
#include "session/request.h"
#include "session/run.h"

namespace pfsim::api {

// The die a run runs on.
struct RunDie {
    SimPlatform& platform;
    rt::Worker& worker;
    // Null: a die of this run alone, whose worker closes after a run's fatal
    // error (the summary's `teardown`, protocol §3.6). Set: a die kept across
    // runs, which stays open; the sanitized posts in flight at a run's end, for
    // the next sanitized run on the die to watch land.
    std::vector<insight::CarriedPost>* carried = nullptr;
};

// The work of a run while users' code runs: the call on the die, and its
// outputs into `result.outputs` (and `result.reference_equal`). Throws what
// report_refusal translates.
using RunWork = std::function<CallResult(const RunDie& die, RunResult& result)>;

// One die of a run on several dies of one simulation (SimDies): rank `rank`,
// its worker, the callable its call runs (naming its kernels' sources), and
// the Chrome trace of its die for the run (empty: none).
struct RankDie {
    uint32_t rank = 0;
    rt::Worker* worker = nullptr;
    const CallableSpec* callable = nullptr;
    std::string trace;
};

// The work of a run on several dies while users' code runs: a call on each
// die, in the run's order (call_ranks, with `run_graphs` running their graphs
// together to their ends, one result per die in that order), their outputs
// into results[i].outputs (and reference_equal). Throws what report_refusal
// translates.
using RanksWork = std::function<std::vector<CallResult>(
    const std::function<std::vector<rt::GraphResult>()>& run_graphs, std::vector<RunResult>& results)>;

// What a run on several dies leaves, die by die in the run's order: each
// result (as the caller set it, and the die's tasks, log, violations,
// warnings, first error, outputs, with request.advise the run's
// communication advice), each call, and each die's counters when the run
// began. Its caller counts: a result per die (finish) or one of every die.
struct DiesRun {
    std::vector<RunResult> results;
    std::vector<CallResult> calls;
    std::vector<PlatformStats> before;
};

class DieRun {
public:
    // Checks what `request` (which must outlive this) asks beyond its work:
    // the injected faults, the sanitizer's suppressions, the what-if sites.
    // BadInput naming the option at fault.
    explicit DieRun(const RunRequest& request);

    const FaultPlan& faults() const { return faults_; }

    // Runs `work` on `die` as the request asks and finishes `result` (whose
    // name, case, params, prefetch and warm-up the caller set); `callable`
    // names the sources of the tasks' kernels. Throws BadInput (a trace that
    // cannot be written), or what `work` throws, leaving `result` as far as it
    // got (report_refusal).
    void run(const Config& cfg, const RunDie& die, const CallableSpec& callable, const RunWork& work,
             RunResult& result) const;

    // The N-die form of run(): runs `work` on the dies `ranks` of `dies` (each
    // at most once) as the request asks -- prefetch on or off, the what-if
    // sites, a trace per die, the communication advice (session/run_ranks.h
    // advise_comm) -- with users' code guarded, what it prints kept in
    // `user_stdout` (also when it throws); `run.results` holds a result per
    // die, as far as the caller set it. Throws BadInput for what several
    // dies do not model yet (the sanitizer, injected faults: callers refuse
    // them first, naming the run) or a trace that cannot be written, or what
    // `work` throws.
    void run_on_dies(const Config& cfg, SimDies& dies, const std::vector<RankDie>& ranks, const RanksWork& work,
                     DiesRun& run, std::string& user_stdout) const;

    // A warning for each what-if site the run did not use on any of `dies`
    // (each counts its uses since the run set its sites).
    void warn_unused_sites(const std::vector<SimPlatform*>& dies, RunResult& result) const;

private:
    // Sets a die's cores and worker as the request asks: the load-site and
    // prefetch what-ifs, prefetch on or off, an injected skip-wait, and whether
    // the graph keeps each task's records (rt::Worker::set_task_records).
    void arm(SimPlatform& platform, rt::Worker& worker, bool task_records) const;

    const RunRequest& request_;
    FaultPlan faults_;
    std::vector<insight::Suppression> suppressions_;
};

// The case `request` names, read with its arguments; the result's prefetch,
// name, case and params set. BadInput for a case at fault, or for a --trace or --outputs
// path that is one of the case's inputs (an output never overwrites an input).
CaseSpec read_request_case(const RunRequest& request, RunResult& result);

// A case file's work (one die: spec.ranks == 1): run_case with `compiler`,
// each output compared with its golden; with request.outputs_dir, the outputs
// written there as .npy.
RunWork case_work(const CaseSpec& spec, const RunRequest& request, KernelCompiler& compiler, uint64_t heap_bytes);

}  // namespace pfsim::api
