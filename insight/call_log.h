// The calls a checker keeps (a post, a wait, a tile placement): who made them,
// when, and their return addresses, turned into lines of the kernels' sources
// once, at the end (one symbolizer run per kernel object).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/common/tick.h"

namespace pfsim {
class Core;
}

namespace pfsim::insight {

// Where a kernel made a call, and which kernel it was.
struct Site {
    std::string where;   // "kernel.cpp:73"; "" when no frame of the kernel's source is known
    std::string core;    // "die.aiv3"
    std::string task;    // "task 2 (aiv, func 1) block 0", "block 0 subblock 1"
    double time_ns = 0;  // since the run began
    bool known() const { return !core.empty(); }
};

// The core the calling kernel runs on (inside a kernel only).
Core& calling_core();

class CallLog {
public:
    static constexpr size_t kNone = ~size_t{0};
    // The call the kernel running on `core` is making now; its index.
    size_t record(Core& core);
    Tick time(size_t call) const { return calls_[call].time; }
    size_t size() const { return calls_.size(); }
    // Every call's site, times counted from `start` (kNone: an empty Site).
    std::vector<Site> resolve(Tick start) const;

private:
    struct Call {
        std::vector<void*> stack;
        std::string core, task;
        Tick time = 0;
    };
    std::vector<Call> calls_;
};

}  // namespace pfsim::insight
