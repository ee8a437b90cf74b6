// A level-3 case's run (a case file with ranks > 1): api::run hands it here
// once the case is read. Each rank runs the case on its own die of one
// simulation (SimDies), with a communication window and a CommContext.
#pragma once

#include <functional>

#include "session/case_file.h"
#include "session/run.h"

namespace pfsim::api {

// As api::run for `spec` (read from request.target). The result: every
// rank's tasks ("rank R: task ..."), outputs ("rankR.NAME"), the counters of
// every die summed; the time from the first rank's first dispatch to the last
// rank's last completion. With request.advise, the advisor's communication
// advice (insight::Advice "delays_comm"). `warn_unused_sites` adds the
// what-if site options' warnings. Throws BadInput for what it cannot run,
// naming it: a trace, waves, the sanitizer, injected faults, --outputs
// (not yet on several dies).
RunResult run_ranks(const Config& cfg, const RunRequest& request, const CaseSpec& spec, RunResult result,
                    const std::function<void(RunResult&)>& warn_unused_sites);

}  // namespace pfsim::api
