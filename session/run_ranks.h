// A level-3 case's run (a case file with ranks > 1): api::run hands it here
// once the case is read. Each rank runs the case on its own die of one
// simulation (SimDies), with a communication window and a CommContext.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "insight/comm_rings.h"
#include "session/case_file.h"
#include "session/run.h"

namespace pfsim::api {

// As api::run for `spec` (read from request.target). The result: every
// rank's tasks ("rank R: task ..."), outputs ("rankR.NAME"), the counters of
// every die summed; the time from the first rank's first dispatch to the last
// rank's last completion. With request.advise, the advisor's communication
// advice (insight::Advice "delays_comm"). `warn_unused_sites` adds the
// what-if site options' warnings. Throws BadInput for what it cannot run,
// naming it: the sanitizer, injected faults, --outputs (not yet on several
// dies); waves asked for are warned about, not written. request.trace: one
// Chrome trace per die, at rank_trace_file(request.trace, R).
RunResult run_ranks(const Config& cfg, const RunRequest& request, const CaseSpec& spec, RunResult result,
                    const std::function<void(const std::vector<SimPlatform*>& dies, RunResult&)>& warn_unused_sites);

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
