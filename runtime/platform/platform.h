// What the runtime's host side needs from a platform: GM, SDMA queues, launches.
// The other side of the platform seam (see device.h).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/platform/channel_groups.h"
#include "runtime/platform/task_window.h"

namespace pfsim::rt {

struct KernelSide;  // runtime/prefetch.h

using KernelEntry = void (*)(int64_t* args);

// What a launch runs: one entry for its vector cores, one for its cube cores
// (a kernel source is built once per core type).
struct KernelEntries {
    KernelEntry aiv = nullptr;
    KernelEntry aic = nullptr;
};

// One SDMA submission queue, as the driver creates it ("a STARS stream").
struct SdmaQueue {
    uint64_t ring_base = 0;      // GM address of the ring
    uint64_t doorbell_base = 0;  // MMIO address of the queue's register block
    uint32_t depth = 0;
    uint32_t sq_id = 0;
    uint32_t stream_id = 0;
};

// Which cores a launch runs on: `block_dim` clusters; in each, the cube core
// and/or `vector_per_block` (1 or 2) vector cores.
struct LaunchSpec {
    uint32_t block_dim = 1;
    uint32_t vector_per_block = 1;
    bool cube = false;
};

// Where the i-th core of a launch sits: clusters in order; in each, the cube
// core first (when the launch has one), then its vector cores.
struct CorePlace {
    bool vector;
    uint32_t block_idx;
    uint32_t subblock;
};
std::vector<CorePlace> core_places(const LaunchSpec& spec);

struct CoreTiming {
    uint32_t core_id = 0;
    bool vector = true;
    uint32_t block_idx = 0;
    uint32_t subblock = 0;
    uint64_t entered_ps = 0;
    uint64_t returned_ps = 0;
    std::string error;  // what the kernel raised on this core, if anything
    std::vector<std::string> violations;  // protocol-checker findings on this core
};

// A task graph as the platform runs it (the AICPU scheduler's view): each
// task's blocks go to free cores of its shape -- a vector core, a cube core,
// or a whole cluster for a mixed task -- once its dependencies completed.
enum class TaskShape { Aiv, Aic, Mix, Dummy };
const char* task_shape_name(TaskShape shape);

struct DispatchTask {
    std::string name;
    TaskShape shape = TaskShape::Dummy;
    KernelEntry entry[3] = {nullptr, nullptr, nullptr};  // slots: aic, aiv0, aiv1
    const std::string* source[3] = {nullptr, nullptr, nullptr};  // their source files, for messages (GraphLaunch::sources)
    uint32_t blocks = 1;
    bool sync_start = false;      // every block starts at once, when enough cores are free
    // set_allow_early_resolve: once all its blocks are dispatched, its consumers
    // may be staged early on idle cores and busy cores' pending slots
    // (GraphLaunch::doorbell_ps).
    bool early_resolve = false;
    std::vector<uint32_t> deps;   // indices of earlier tasks
    std::vector<int64_t*> args;   // [block * 3 + slot], null for a slot without a kernel; slot 49 is set at dispatch
    // What `args` point at (the argument arrays and what they point at), owned
    // here.
    std::shared_ptr<void> args_storage;
    std::vector<uint64_t> slabs;  // per block: GM address of its completion slab (0: none)
    // Per tensor argument: its index in args and its buffer (device pointer,
    // bytes): what the task was given, for checkers (the sanitizer's bounds).
    struct TensorBuffer {
        uint32_t arg = 0;
        uint64_t pointer = 0, bytes = 0;
    };
    std::vector<TensorBuffer> tensor_buffers;
    uint64_t release_ps = 0;      // when the orchestrator's submission reaches the scheduler, from the graph's start
    // A predicate checked when the task is ready (op 0: none): the element of
    // `elem_size` bytes at GM address `gm`, sign-extended, compared with
    // `target` (op: PredicateOp's values). False retires the task without a core.
    uint8_t predicate_op = 0;
    uint32_t predicate_elem_size = 0;
    uint64_t predicate_gm = 0;
    int64_t predicate_target = 0;
};

// A graph's tasks may be appended while it runs (between the platform's
// graph calls, in submission order) until `submissions_done`.
struct GraphLaunch {
    // Each submitted task's record, dropped (null) by the platform once the task completed,
    // and its place too once every task before it completed: a graph holds the records of
    // the tasks it still runs (#49).
    TaskWindow<std::unique_ptr<DispatchTask>> tasks;
    std::set<std::string> sources;  // the tasks' source files, each once (DispatchTask::source)
    bool submissions_done = false;
    std::vector<int64_t> global_context;  // per core id: what args[49] points at
    uint64_t dispatch_ps = 0;    // ready -> the core starts
    uint64_t completion_ps = 0;  // the core finishes -> the task counts as completed
    uint64_t doorbell_ps = 0;    // an early-staged block's last producer completes -> its gated core starts
    uint64_t time_limit_ps = 0;  // simulated time after which a graph that has not finished stops
    uint64_t poll_ps = 0;        // period of the scheduler's polls of deferred-completion conditions
    // The AICPU's scheduler threads: thread t owns the clusters c with
    // c % scheduler_threads == t (each cluster's cube core and its two vector
    // cores). A sync-start cohort that fits one thread's free cores starts there;
    // a wider one goes through the global drain (TaskRun::drained).
    uint32_t scheduler_threads = 1;
    // When set, called in simulated time as a task's first block is dispatched
    // (completed false; its kernels have not started) and as a task that ran
    // on cores completes (true): what it reads of GM is what they see or left.
    std::function<void(uint32_t task, bool completed)> observe;
    // Each task's TaskRun is kept in the result to the graph's end; false: dropped
    // once it and every task before it completed (GraphResult::tasks holds the
    // rest), for a run that reads no task's record (#49).
    bool task_records = true;
};

struct TaskRun {
    bool ran = false;
    bool skipped = false;                // its predicate was false: retired without a core
    uint64_t start_ps = 0, end_ps = 0;   // first block dispatched, last block completed
    std::vector<uint32_t> cores;         // core ids, per block and slot
    // Each block on each of its cores: when the scheduler dispatched it, the
    // kernel started and ended, and the scheduler took the block's completion
    // (0 while not yet); in `cores` order.
    // `slot` says which of the task's kernels ran (0 aic, 1 aiv0, 2 aiv1); `busy_ps`, how
    // long each of the core's pipes was busy while it ran (kPipes order).
    static constexpr const char* kPipes[5] = {"scalar", "mte2", "mte3", "vector", "cube"};
    struct CoreSpan {
        uint32_t core = 0, block = 0, slot = 0;
        uint64_t dispatch_ps = 0, start_ps = 0, end_ps = 0, finish_ps = 0;
        uint64_t busy_ps[5] = {};
    };
    std::vector<CoreSpan> spans;
    // A sync-start cohort that, once ready, found too few free cores in any one
    // scheduler thread's clusters: when it entered the global drain (nothing else
    // is dispatched until it goes out, at once when the die has enough free cores).
    bool drained = false;
    uint64_t drain_ps = 0;
    // Staged early (its producers all early-resolve and dispatched, the ready
    // queue empty): when the blocks whose span dispatch_ps equals it were sent
    // to idle cores or busy cores' pending slots, held there until the doorbell;
    // 0 (with `early` false): never.
    bool early = false;
    uint64_t early_ps = 0;
    std::string error;                   // the first error of its blocks
};

struct GraphResult {
    // By task; those dropped (GraphLaunch::task_records false) are before tasks.first().
    TaskWindow<TaskRun> tasks;
    std::string dropped_error;   // the first error of the tasks dropped
    uint64_t start_ps = 0;       // the simulated time the graph began: what GraphTask's orchestrator times count from
    uint64_t graph_time_ps = 0;  // first dispatch to last completion
    std::vector<std::string> warnings;
    std::vector<std::string> violations;
    std::string stuck;           // why the graph stopped before its end, naming the tasks
    int32_t error_code = 0;      // a latched scheduler error (101..103), 0 when none
    std::string error;           // its name and the task
    bool user_fault = false;     // a kernel faulted, ran past the host-time limit or called exit (base/user_code.h)
    bool ok() const;
    std::string first_error() const;
};

struct LaunchResult {
    std::vector<CoreTiming> cores;
    uint64_t kernel_time_ps = 0;  // first core entering to last core returning
    std::vector<std::string> warnings;
    bool ok() const;
    std::string first_error() const;
};

class Platform {
public:
    virtual ~Platform() = default;
    virtual std::string platform_name() const = 0;

    // GM for the host: allocation and copies (host <-> device memcpy).
    virtual uint64_t gm_alloc(uint64_t bytes) = 0;  // throws std::runtime_error when GM is full
    // Frees the allocation at `addr` and every allocation made after it (GM is
    // a stack: a call frees what it allocated, last first).
    virtual void gm_free(uint64_t addr) = 0;
    // Whether [addr, addr + bytes) lies within what gm_alloc handed out.
    virtual bool gm_allocated(uint64_t addr, uint64_t bytes) const = 0;
    virtual void gm_write(uint64_t addr, const void* src, uint64_t bytes) = 0;
    virtual void gm_read(uint64_t addr, void* dst, uint64_t bytes) = 0;
    // gm_write of `bytes` zeros, without the host memory of bytes that are zero already.
    virtual void gm_zero(uint64_t addr, uint64_t bytes) = 0;
    // The pointer a kernel dereferences to reach GM address `addr` (what goes
    // into ChipTensor.buffer.addr and the contexts).
    virtual uint64_t device_pointer(uint64_t addr) const = 0;
    // How far above GM its uncached alias lies (rtGetL2CacheOffset); 0: none.
    virtual uint64_t l2_cache_offset() const = 0;

    // The async-DMA workspace provider: supported kinds (bit mask), channel count,
    // and the queues themselves. A platform without a provider supports mask 0.
    virtual uint32_t dma_workspace_supported_mask() const = 0;
    virtual uint32_t dma_channel_count() const = 0;
    virtual uint32_t doorbell_tail_offset() const = 0;
    // Who posted on this die's channel groups since the worker last cleared it.
    virtual ChannelGroups& channel_groups() = 0;
    // The kernel side's state of this die (runtime/prefetch.h): its worker
    // arms it, its checkers observe through it, its what-ifs count in it.
    virtual KernelSide& kernel_side() = 0;
    virtual SdmaQueue create_sdma_queue(uint32_t index) = 0;
    virtual void destroy_sdma_queue(uint32_t index) = 0;
    virtual uint32_t live_sdma_queues() const = 0;

    // Runs `entries` on the cores of `spec`, core i with args_per_core[i] (in
    // the order clusters, then cube before vector cores), and waits for all of
    // them. Throws std::runtime_error when an entry the cores need is missing.
    virtual LaunchResult launch(const KernelEntries& entries, const LaunchSpec& spec,
                                const std::vector<int64_t*>& args_per_core) = 0;
    // The die's cores by id: how many, and where each sits.
    virtual uint32_t core_count() const = 0;
    virtual CorePlace core_place(uint32_t core_id) const = 0;
    // Runs a task graph alongside its orchestration: begin_graph starts it
    // (`launch` must outlive end_graph; tasks may be appended to it between
    // calls); run_graph_until runs the simulation until task `task` completed
    // (returning true and its end, from the graph's start) or the graph cannot
    // progress without more submissions or has stopped (false); with `task` ~0, until
    // `until_ps` after the graph's start. end_graph sets submissions_done and
    // runs the graph to its end (or to its time limit).
    virtual void begin_graph(GraphLaunch& launch) = 0;
    virtual bool run_graph_until(uint32_t task, uint64_t until_ps, uint64_t* end_ps) = 0;
    virtual GraphResult end_graph() = 0;
    // end_graph without running the graph out: no more submissions; a
    // simulation of several dies runs the graphs together later
    // (SimDies::end_graphs), and gives the results.
    virtual void close_graph() = 0;
    // All at once: begin_graph, then end_graph.
    GraphResult run_graph(GraphLaunch& launch) {
        begin_graph(launch);
        return end_graph();
    }
    virtual uint64_t now_ps() const = 0;
};

}  // namespace pfsim::rt
