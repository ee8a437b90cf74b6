// Faults a run can be made to show (`pfsim run --inject FAULT`, the Python
// Worker's run(inject=[...])), and the report of what each did.
//
//   prefetch-corrupt   one byte of the first line a prefetch fills is flipped
//   skip-wait          every prefetch wait returns true without polling
//   sdma-error[:K]     the channel taking up the K-th request (default 1) stops
//                      with SdmaError::InjectedFault; the waits on it run out of polls
//   sdma-stall         the SDMA engine fetches nothing; waits run out of polls
//   doorbell-lost[:K]  the K-th doorbell write (default 1) is dropped; its
//                      channel resumes at the next doorbell
//   core-fault[:CORE]  the first kernel to start on CORE (aiv0..., aic0...;
//                      default any core) traps at its first call into the
//                      core: the run fails, and the worker is closed as after
//                      a fatal device error (the summary's `teardown`)
//   reset-fail[:K]     with core-fault: the first K force resets of that
//                      teardown do not confirm
//
// A fault of the SDMA engine is reported with the channel, the request or
// doorbell, and the post it belonged to, in the summary's `faults`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/sdma/sdma_engine.h"
#include "runtime/prefetch.h"

namespace pfsim {
class SimPlatform;
}

namespace pfsim::api {

struct FaultPlan {
    bool prefetch_corrupt = false;
    bool skip_wait = false;
    SdmaFaults sdma;
    bool core_fault = false;
    std::string core_fault_core;  // empty: the first kernel to start anywhere
    uint32_t failing_resets = 0;
};

// Throws BadInput naming the fault at fault (unknown, a bad ordinal, repeated).
FaultPlan parse_faults(const std::vector<std::string>& names);

// Sets the plan's SDMA faults on the platform's engine while it lives, records
// each post the kernels make, and at the end tells which post each SDMA fault
// hit. One per run; at most one at a time.
class FaultReport : public rt::PrefetchObserver {
public:
    FaultReport(SimPlatform& platform, const FaultPlan& plan);
    ~FaultReport() override;
    FaultReport(const FaultReport&) = delete;
    FaultReport& operator=(const FaultReport&) = delete;

    // The faults that happened: [{kind, channel, ... , post: {core, group, id, gm, bytes}}].
    nlohmann::json finish() const;
    // One warning per injected fault that never fired ("--inject sdma-error:99:
    // did not fire: ..."): a run must not look as if it survived a fault it never met.
    std::vector<std::string> unfired() const;
    // One line per fault, for the terminal.
    static std::vector<std::string> text(const nlohmann::json& faults);

    void posted(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                uint64_t since_ps) override;

private:
    struct Trap {
        bool fired = false;
        std::string core;
        double at_ns = 0;
    };
    struct Post {
        uint32_t core, group;
        uint64_t id, gm, bytes, ring_base;
        uint32_t first_slot, slots, depth;  // its requests' slots in the ring
        uint64_t posted_ps;
    };
    SimPlatform& platform_;
    FaultPlan plan_;
    std::shared_ptr<Trap> trap_;
    std::vector<Post> posts_;
};

}  // namespace pfsim::api
