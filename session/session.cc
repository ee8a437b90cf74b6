#include "session/session.h"

#include "loader/shared_object.h"
#include "runtime/platform/sim/sim_context.h"
#include "session/replay_run.h"

namespace pfsim::api {

namespace {

// Unloads the run's kernels when it ends, however it ends (its die is gone by then).
struct KernelsOfOneRun {
    KernelsOfOneRun() { fresh_simulation_context(); }
    ~KernelsOfOneRun() { unload_kernels(); }
};

}  // namespace

RunResult Session::run(const RunRequest& request) {
    KernelsOfOneRun scope;
    return api::run(cfg_, request);
}

nlohmann::json Session::replay(const ReplayRequest& request) {
    fresh_simulation_context();
    return api::replay(cfg_, request);
}

}  // namespace pfsim::api
