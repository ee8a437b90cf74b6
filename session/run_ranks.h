// A level-3 case's run (a case file with ranks > 1): api::run hands it here
// once the case is read, and RankSession (`pfsim device --ranks`) runs one on
// its dies. Each rank runs the case on its own die of one simulation
// (SimDies), with a communication window and a CommContext, through the N-die
// form of the one place a request becomes a result (DieRun::run_on_dies).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "insight/comm_rings.h"
#include "loader/compiler.h"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/worker.h"
#include "session/case_file.h"
#include "session/die_run.h"
#include "session/run.h"

namespace pfsim::api {

// As api::run for `spec` (read from request.target) on dies built for it.
// The result: every rank's tasks ("rank R: task ..."), outputs
// ("rankR.NAME"), the counters of every die summed; the time from the first
// rank's first dispatch to the last rank's last completion. With
// request.advise, the advisor's communication advice (insight::Advice
// "delays_comm"). The what-if site options' warnings from `die_run`. Throws
// BadInput for what it cannot run, naming it: the sanitizer, injected faults,
// --outputs (not yet on several dies); waves asked for are warned about, not
// written. request.trace: one Chrome trace per die, at
// rank_trace_file(request.trace, R).
RunResult run_ranks(const Config& cfg, const RunRequest& request, const CaseSpec& spec, RunResult result,
                    const DieRun& die_run);

// What run_ranks does before it builds the dies: `result`'s rank count, a
// warning for --waves, BadInput for what several dies do not run yet.
void begin_ranks_result(const RunRequest& request, const CaseSpec& spec, RunResult& result);

// The level-3 case `spec` on dies that exist (spec.ranks of them; rank r's
// worker workers[r]), whether built for the run (run_ranks) or a device's
// (RankSession): each rank's window (zeroed) and CommContext in its own GM,
// given back after the run; `result` as run_ranks gives it but for
// sim_time_total_ns (the caller set its name, case, params, prefetch, warm-up
// and begin_ranks_result). Throws what report_refusal translates.
void run_case_on_dies(const Config& cfg, const DieRun& die_run, const RunRequest& request, const CaseSpec& spec,
                      SimDies& dies, const std::vector<rt::Worker*>& workers, KernelCompiler& compiler,
                      RunResult& result);

// `path` with ".rankR" before its extension (trace.json -> trace.rank1.json).
std::string rank_trace_file(const std::string& path, uint32_t r);

// The advisor's communication advice into `result` (a report of `ranks`
// dies): when the run's copies between dies waited behind prefetches in their
// rings (`wait_ns`, sdma.comm_prefetch_wait over the dies), an advice
// "delays_comm" per prefetch site with copies posted behind it in a ring
// (CommRingLog), naming its tasks and those copies with their kernels
// (`callable`'s sources). Not estimated: the CLI's what-if without the site
// measures it.
void advise_comm(RunResult& result, const std::vector<insight::CommRingLog::PrefetchSite>& sites,
                 const CallableSpec& callable, double wait_ns, uint32_t ranks);

}  // namespace pfsim::api
