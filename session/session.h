// A session: runs and replays one after another in this process, each on a
// fresh die, each as a process of its own would run it. What a simulation
// leaves behind in a process -- SystemC's context, which elaborates a design
// only once, and the users' kernels, whose statics would carry over -- is the
// session's: each run gets a new simulation context
// (runtime/platform/sim/sim_context.h), and the kernels a run loaded are
// unloaded when it ends (loader/shared_object.h). The kernel side's options,
// site counts and observers, and the cores' load-site counts, are the die's
// (rt::KernelSide, Core): each die's run sets its own.
//
// Contract: one session at a time per process, one run at a time (not
// thread-safe); not while a DeviceSession lives (its die and kernels must
// persist). run() and replay() are api::run's and api::replay's contracts:
// bad input throws BadInput (TraceError for replay) and leaves the session
// usable. The first run of a process is built exactly as api::run builds it.
#pragma once

#include <utility>

#include <nlohmann/json.hpp>

#include "model/config/config.h"
#include "session/request.h"
#include "session/run.h"

namespace pfsim::api {

class Session {
public:
    explicit Session(Config cfg) : cfg_(std::move(cfg)) {}
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    RunResult run(const RunRequest& request);
    nlohmann::json replay(const ReplayRequest& request);
    const Config& config() const { return cfg_; }

private:
    Config cfg_;
};

}  // namespace pfsim::api
