// The task graph an orchestration builds, with the dependencies simpler's
// TensorMap derives (shared/docs/simpler-compat.md §2.4):
//   - explicit dependencies (set_dependencies);
//   - a creator edge from any non-OUTPUT tensor to the task that allocated it;
//   - an INPUT or INOUT tensor waits for every registered producer whose bytes
//     it overlaps (outside manual scopes, unless the tensor is manual_dep);
//   - INOUT and OUTPUT_EXISTING tensors register the task as their producer
//     (an INOUT covering a producer's whole range retires that entry);
//   - manual scopes take explicit dependencies only.
// Overlap is decided on byte ranges of the same buffer: conservative for
// strided views (an overlap of ranges is a dependency), never missing one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/kernel_abi.h"
#include "runtime/orchestration/orchestration_api.h"
#include "runtime/platform/platform.h"

namespace pfsim::rt {

struct GraphTask {
    uint32_t index = 0;
    TaskShape shape = TaskShape::Dummy;
    // func_ids per slot (aic, aiv0, aiv1); INVALID_KERNEL_ID where unused.
    int32_t kernel[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
    uint32_t block_num = 1;
    // launch_spec.set_require_sync_start on a task of 2 blocks or more: all its
    // blocks start together (a cohort).
    bool sync_start = false;
    std::vector<const ChipTensor*> tensors;  // the kernel's args[0..]
    std::vector<TensorArgType> tensor_types;
    std::vector<uint64_t> scalars;
    std::vector<uint32_t> deps;  // earlier tasks, sorted, unique
    uint32_t scope_depth = 0;
    std::string name() const;  // "task 3 (aiv, func 0)"
};

// An orchestration misused the API; the run fails with this message (exit 2).
class OrchestrationError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class TaskGraph {
public:
    // `allocate(bytes)` returns the GM address of a fresh output buffer (the
    // heap ring); `device_pointer` maps it to what kernels dereference;
    // `fill(gm, bytes, pattern, pattern_bytes)` writes an initial value.
    struct Memory {
        std::function<uint64_t(uint64_t)> allocate;
        std::function<uint64_t(uint64_t)> device_pointer;
        std::function<void(uint64_t, uint64_t, uint64_t, uint64_t)> fill;
    };
    TaskGraph(Memory memory, uint32_t clusters) : memory_(std::move(memory)), clusters_(clusters) {}

    // While alive, the orchestration API records into `graph` (one at a time).
    class Recording {
    public:
        explicit Recording(TaskGraph& graph);
        ~Recording();
        Recording(const Recording&) = delete;
        Recording& operator=(const Recording&) = delete;
    };

    // The heap ring of each scope depth (simpler's runtime_env.ring_heap: ring r
    // serves the outputs allocated in scopes at depth r + 1, the last ring all
    // deeper ones). The outputs of a scope that has ended are given back (the
    // orchestrator waits for their tasks; that wait is not timed). An output
    // that does not fit beside those of the open scopes of its ring can never
    // be allocated: PTO2_ERROR_HEAP_RING_DEADLOCK, naming the task. Empty (the
    // default): no bound per ring.
    void set_ring_heap(std::vector<uint64_t> bytes) { ring_heap_ = std::move(bytes); }
    static constexpr uint32_t kRings = 4;  // PTO2_MAX_RING_DEPTH

    TaskOutputTensors submit(TaskShape shape, const int32_t kernel[3], const CoreTaskArgs& args);
    void scope_begin(PTO2ScopeMode mode);
    void scope_end();
    void log(PTO2LogLevel level, const std::string& line);
    void report_fatal(int code, const std::string& message);

    // A stable descriptor owned by the graph (arguments, outputs).
    const ChipTensor* keep(const ChipTensor& t);

    const std::vector<GraphTask>& tasks() const { return tasks_; }
    const std::vector<std::string>& log_lines() const { return log_; }
    int fatal_code() const { return fatal_code_; }
    uint32_t clusters() const { return clusters_; }

private:
    struct Producer {
        uint64_t base, begin, end;  // buffer address, byte range
        uint32_t task;
    };
    static void byte_range(const ChipTensor& t, uint64_t* begin, uint64_t* end);

    Memory memory_;
    uint32_t clusters_;
    std::vector<GraphTask> tasks_;
    std::deque<ChipTensor> tensors_;
    std::vector<Producer> producers_;
    std::vector<PTO2ScopeMode> scopes_;
    std::vector<uint64_t> scope_heap_bytes_;  // per open scope: its outputs' bytes in its ring
    std::vector<uint64_t> ring_heap_;
    uint64_t ring_live_[kRings] = {};  // bytes the open scopes of each ring hold
    uint32_t ring_of_scope() const { return std::min<uint32_t>(static_cast<uint32_t>(scopes_.size()), kRings) - 1; }
    std::vector<std::string> log_;
    int fatal_code_ = 0;
};

}  // namespace pfsim::rt
