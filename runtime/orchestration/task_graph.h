// The task graph an orchestration builds, with the dependencies simpler's
// TensorMap derives (shared/docs/simpler-compat.md §2.4):
//   - explicit dependencies (set_dependencies);
//   - a creator edge from any non-OUTPUT tensor to the task that allocated it;
//   - an INPUT or INOUT tensor waits for every registered producer whose bytes
//     it overlaps (outside manual scopes, unless the tensor is manual_dep);
//   - INOUT and OUTPUT_EXISTING tensors register the task as their producer
//     (an INOUT covering a producer's whole range retires that entry);
//   - manual scopes take explicit dependencies only.
// The orchestration runs alongside the simulation (Live): every submission
// reaches the scheduler at the orchestrator's clock, and get_tensor_data /
// set_tensor_data wait, in simulated time, for the producers of the element.
// Overlap is decided on byte ranges of the same buffer: conservative for
// strided views (an overlap of ranges is a dependency), never missing one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/kernel_abi.h"
#include "runtime/orchestration/orchestration_api.h"
#include "runtime/platform/platform.h"

namespace pfsim::rt {

// Tensor descriptors at addresses that never move, in chunks of kChunk: a few
// large allocations for a graph's many descriptors, not an over-aligned small
// one per few (which glibc serves and frees slowly in a heap fragmented by a
// large graph's records, #49).
class TensorStore {
public:
    // Move-only, declared: a vector of unique_ptrs claims to be copyable, and the
    // containers of CallResults would then copy.
    TensorStore() = default;
    TensorStore(TensorStore&&) = default;
    TensorStore& operator=(TensorStore&&) = default;
    const ChipTensor* push_back(const ChipTensor& t) {
        if (size_ % kChunk == 0) chunks_.emplace_back(new ChipTensor[kChunk]);
        ChipTensor* at = &chunks_.back()[size_ % kChunk];
        *at = t;
        ++size_;
        return at;
    }

private:
    static constexpr size_t kChunk = 1024;
    std::vector<std::unique_ptr<ChipTensor[]>> chunks_;
    size_t size_ = 0;
};

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
    std::vector<DataType> scalar_dtypes;  // the type each scalar was added as
    // CoreTaskArgs::dump's marks (bit i: argument i, tensors then scalars).
    uint64_t dump_mask = 0, dump_ambiguous = 0;
    // The id simpler's runtime gives it: its ring (scope depth) << 32 | its place in that ring.
    uint64_t ring_id = 0;
    std::vector<uint32_t> deps;  // earlier tasks, sorted, unique
    // Where each dependency came from, as simpler's dep-gen records it (deps.json): an
    // edge per explicit dependency, then per tensor argument its creator and the
    // TensorMap's producers it overlaps. A producer can appear on several edges.
    struct Edge {
        enum class Source : uint8_t { Explicit, Creator, TensorMap };
        uint32_t pred = 0;   // the producer's index
        int32_t arg = -1;    // the tensor argument it binds (-1: explicit)
        Source source = Source::Explicit;
        DepFlags flags = DEP_WAIT;
        bool covered = false;                  // TensorMap: the argument spans the producer's whole range
        const ChipTensor* producer = nullptr;  // TensorMap: the tensor the producer wrote
    };
    std::vector<Edge> edges;
    bool manual_scope = false;   // submitted in a manual scope
    bool early_resolve = false;  // set_allow_early_resolve
    uint32_t scope_depth = 0;
    uint64_t submit_ps = 0;   // when the orchestrator began the submission (its clock), from the graph's start
    uint64_t release_ps = 0;  // when the submission reaches the scheduler, from the graph's start
    std::string site;         // "orch.cpp:42": where it was submitted
    // A dispatch predicate (op NONE: always dispatch): the element of
    // `elem_size` bytes at GM address `gm`, sign-extended, OP `target`.
    struct Predicate {
        PredicateOp op = PredicateOp::NONE;
        uint64_t gm = 0;
        uint32_t elem_size = 0;
        int64_t target = 0;
    } predicate;
    std::string name() const;  // "task 3 (aiv, func 0)"
};

// An orchestration misused the API; the run fails with this message (exit 2).
class OrchestrationError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};
// The orchestrator waits for a task that can never complete: the graph stopped
// (a cycle, a fault, the time limit). The run fails with this message (exit 1).
class OrchestrationStalled : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class TaskGraph {
public:
    // `allocate(bytes)` returns the GM address of a fresh output buffer (the
    // heap ring), throwing OrchestrationError when it is full; `device_pointer`
    // maps it to what kernels dereference and `gm_of(pointer, bytes)` back (or
    // ~0 when the bytes are not all in GM); `fill(gm, bytes, pattern,
    // pattern_bytes)` writes an initial value; `read` and `write` are the
    // orchestrator's GM accesses.
    struct Memory {
        std::function<uint64_t(uint64_t)> allocate;
        std::function<uint64_t(uint64_t)> device_pointer;
        std::function<uint64_t(uint64_t, uint64_t)> gm_of;
        std::function<void(uint64_t, uint64_t, uint64_t, uint64_t)> fill;
        std::function<void(uint64_t, void*, uint64_t)> read;
        std::function<void(uint64_t, const void*, uint64_t)> write;
    };
    // The simulation the orchestration runs alongside. `begin` starts it;
    // `submitted` hands it a task; `wait_task(t, &end_ps)` runs it until task
    // t completed (false: it never will; the graph stopped); `run_until(ps)`
    // runs it until `ps` after the graph's start (false: the graph stopped). Times count from the graph's
    // start. The graph starts the simulation lazily, at the orchestration's
    // first wait (or hand_over): until then it only records, so the buffers
    // of a graph that never waits are laid out as if it were recorded whole.
    struct Live {
        std::function<void()> begin;
        std::function<void(const GraphTask&)> submitted;
        std::function<bool(uint32_t, uint64_t*)> wait_task;
        std::function<bool(uint64_t)> run_until;
    };
    // The orchestrator's costs: one submission, one GM access of tensor data
    // (get/set_tensor_data, cache maintenance).
    struct Costs {
        uint64_t submit_ps = 0;
        uint64_t tensor_data_ps = 0;
    };
    TaskGraph(Memory memory, uint32_t clusters) : memory_(std::move(memory)), clusters_(clusters) {}
    void go_live(Live live, Costs costs) {
        live_ = std::move(live);
        costs_ = costs;
    }
    // Starts the simulation if it has not started and hands it every task
    // submitted since; later submissions are handed as they come.
    void hand_over();
    bool simulating() const { return begun_; }

    // While alive, the orchestration API records into `graph` (one at a time).
    class Recording {
    public:
        explicit Recording(TaskGraph& graph);
        ~Recording();
        Recording(const Recording&) = delete;
        Recording& operator=(const Recording&) = delete;

    private:
        TaskGraph* graph_;
    };

    // simpler's runtime_env ring sizes, an entry per scope-depth ring (ring r
    // serves the tasks submitted in scopes at depth r + 1, the last ring all
    // deeper ones; the orchestration's outer scope is depth 1). An entry that
    // is 0 or absent takes the default.
    //  - heap: bytes of outputs the open scopes of the ring hold. The outputs
    //    of a scope that has ended are given back (that wait is not timed); an
    //    output that does not fit beside those of the open scopes can never be
    //    allocated: PTO2_ERROR_HEAP_RING_DEADLOCK. Default: no bound per ring.
    //  - task_window: W slots. A scope takes at most W - 1 tasks of its own
    //    (the next one is PTO2_ERROR_SCOPE_DEADLOCK); the orchestrator waits,
    //    in simulated time, before submitting the ring's task i until its task
    //    i + 1 - W and all before it are consumed: completed, their scope ended,
    //    and every task that retained them (an explicit or creator dependency
    //    taken before that) completed. A task whose scope is still open can
    //    never be consumed: PTO2_ERROR_FLOW_CONTROL_DEADLOCK. Default 16384.
    //  - dep_pool: P entries in each of the ring's two pools: the fanin edges a
    //    task has beyond the 64 inline (given back when it is consumed) and the
    //    fanout links of its dependencies on producers not yet seen to complete
    //    (given back 64 consumed tasks at a time, as simpler's reclaim batches
    //    them). The orchestrator waits for the ring's consumption when a pool
    //    is short; needing more than P, or more than the consumption of every
    //    earlier task of the ring frees: PTO2_ERROR_DEP_POOL_OVERFLOW. Default
    //    16384. pfsim counts a fanout link for every producer the orchestrator
    //    has not waited for (simpler: those not completed at submission), so it
    //    can only ask for more than the board.
    struct RingSizes {
        std::vector<uint64_t> heap, task_window, dep_pool;
    };
    void set_ring_sizes(RingSizes sizes) { ring_sizes_ = std::move(sizes); }
    static constexpr uint32_t kRings = 4;  // PTO2_MAX_RING_DEPTH

    // Where a call was made: "orch.cpp:42".
    struct Site {
        const char* file;
        int line;
        std::string str() const;
    };
    // Fatal misuse is latched (report_fatal) and the submission returns no
    // task; later submissions are dropped.
    TaskOutputTensors submit(TaskShape shape, const int32_t kernel[3], const CoreTaskArgs& args, Site site);
    TaskOutputTensors alloc(const CoreTaskArgs& args, Site site);
    uint64_t get_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t* indices, Site site);
    void set_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t* indices, uint64_t bits, Site site);
    void cache_maintenance(Site site);
    void scope_begin(PTO2ScopeMode mode, Site site);
    void scope_end();

    // A scope's boundary as simpler's scope stats record it (--enable-scope-stats): its
    // ring's state when it began or ended. Depth 0 is the executor's scope around the
    // orchestration (site kExecutorSite).
    struct ScopeRecord {
        std::string site;  // "orch.cpp:42": the PTO2_SCOPE
        bool begin = true;
        uint32_t depth = 0, ring = 0;
        uint64_t task_start = 0, task_end = 0;  // the ring's oldest task not yet consumed; its next task
        uint64_t heap_start = 0, heap_end = 0;  // the ring's output bytes given back, allocated (cumulative)
        uint64_t dep_start = 0, dep_end = 0;    // its fanout-link pool's tail and top
        uint64_t tensormap = 0;                 // producers the TensorMap holds
    };
    static constexpr const char* kExecutorSite = "executor:0";
    // Scope records are kept only when asked (before recording): two per scope, they
    // would otherwise grow with a graph that opens a scope per task (#49).
    void keep_scope_records(bool keep) { keep_scope_records_ = keep; }
    // The records, moved out once the orchestration returned (empty unless kept).
    std::vector<ScopeRecord> take_scope_records() { return std::move(scope_records_); }
    // Writes simpler's scope_stats.jsonl to `path`: a line of the run's capacities per ring
    // (`sizes`, their defaults; heap: `heap_bytes` where a ring has no bound of its own;
    // tensormap_max 0: pfsim's TensorMap has no bound), then a line per record.
    // std::runtime_error naming the file that cannot be written.
    static void write_scope_stats(const std::string& path, const std::vector<ScopeRecord>& records,
                                  const RingSizes& sizes, uint64_t heap_bytes);
    // Entry `ring` of a runtime_env size list, `fallback` where it is absent or 0.
    static uint64_t ring_size(const std::vector<uint64_t>& sizes, uint32_t ring, uint64_t fallback);
    void log(PTO2LogLevel level, const std::string& line);
    void report_fatal(int code, Site site, const std::string& message);

    // A stable descriptor owned by the graph (arguments, outputs), equal to `t`: one of the
    // last kKeptReused kept if one is (a graph that passes the same tensors to every task
    // keeps them once, #49). Read-only: kernels get copies of their own (Worker::add_task).
    const ChipTensor* keep(const ChipTensor& t);
    static constexpr size_t kKeptReused = 8;
    // The descriptors keep() made, for the tasks' pointers to outlive the graph (they stay
    // where they are); the graph records no more after it.
    TensorStore take_tensors() {
        std::fill(std::begin(recent_), std::end(recent_), nullptr);
        return std::move(tensors_);
    }

    // Dep-gen's records (each task's `edges`, and its `tensors`, `tensor_types`, `scalars`
    // and `scalar_dtypes` once handed over) are kept only when asked, before recording:
    // otherwise no edge is recorded and a task's arguments go once the scheduler has its
    // own copies (Worker::add_task), so that a graph's host memory does not grow with
    // them (#49).
    void keep_dep_records(bool keep) { keep_dep_records_ = keep; }
    // Task records are kept to the graph's end unless told otherwise (before recording):
    // without them a task's record goes once it is handed over and consumed, so that a
    // graph's host memory does not grow with its task count (#49).
    void keep_task_records(bool keep) { keep_task_records_ = keep; }
    // The task records, moved out once the graph is handed over (or stalled): each stays
    // where it is, so what points into them stays valid; the graph records no more after it.
    // Without keep_task_records, those of the tasks still live only.
    TaskWindow<GraphTask> take_tasks() { return std::move(tasks_); }
    const std::vector<std::string>& log_lines() const { return log_; }
    int fatal_code() const { return fatal_code_; }
    // "fatal 5 (PTO2_ERROR_INVALID_ARGS) at orch.cpp:12: ...", or empty.
    const std::string& fatal_message() const { return fatal_message_; }
    uint32_t clusters() const { return clusters_; }
    uint64_t orchestrator_ps() const { return orch_ps_; }

private:
    // A TensorMap entry: tasks first..last (consecutive) accessed bytes [begin, end) of a
    // buffer through `tensor`. Consecutive tasks with the same range and descriptor share
    // an entry: a graph that rewrites one output every task holds one entry, not one per
    // task (#49); read as the entries of each task in order, it lists what they would.
    struct Producer {
        uint64_t begin, end;
        uint32_t first, last;
        const ChipTensor* tensor;
    };
    // Entries per buffer address, in the order they were registered: a lookup walks the
    // entries of its own buffer only, not every buffer's (#49).
    using TensorMap = std::unordered_map<uint64_t, std::vector<Producer>>;
    static const std::vector<Producer>& entries_of(const TensorMap& map, uint64_t base);  // none: empty
    // Registers task `task`'s access [begin, end) of buffer `base` through `tensor`,
    // extending the buffer's last entry when it is the previous task's same access.
    static void register_access(TensorMap& map, uint64_t base, uint64_t begin, uint64_t end, uint32_t task,
                                const ChipTensor* tensor);
    static void byte_range(const ChipTensor& t, uint64_t* begin, uint64_t* end);
    // The GM address of element `indices` of `t`, or ~0 with `why`.
    uint64_t element_gm(const ChipTensor& t, uint32_t ndims, const uint32_t* indices, std::string* why) const;
    // The tasks an access to byte [begin, end) of buffer `base` waits for: its
    // creator and producers, and, for a write, the readers after them.
    std::vector<uint32_t> hazards(const ChipTensor& t, uint64_t begin, uint64_t end, bool write) const;
    // Who waits, for a stall's message: called only when the wait fails (a
    // submission's waits are per task; their text is not built unless needed).
    using Waiter = std::function<std::string()>;
    // Runs the simulation until `tasks` completed; the orchestrator's clock
    // moves to the last end. Throws OrchestrationStalled naming `what()`.
    void wait_for(const std::vector<uint32_t>& tasks, const Waiter& what);
    // When task t completed (from the graph's start), running the simulation
    // until it did; throws OrchestrationStalled naming `what()`.
    uint64_t end_of(uint32_t t, const Waiter& what);

    // A task's place in its scope-depth ring.
    struct Slot {
        uint32_t ring = 0, local = 0;   // the ring, and the task's place in its order
        uint64_t scope_end_ps = kOpen;   // when its scope ended (kOpen: still open)
        struct Retainer {
            uint32_t task;
            uint64_t release_ps;  // when it reached the scheduler (GraphTask::release_ps)
        };
        std::vector<Retainer> retainers;  // later tasks holding it (explicit or creator edges), in order
        uint64_t fanin_spill = 0;         // its fanin edges beyond the inline 64
        uint64_t fanout_mark = 0;         // the ring's fanout-link top once it was wired
    };
    static constexpr uint64_t kOpen = ~uint64_t{0};
    // One scope depth's ring: its tasks in order, those consumed, and its pools.
    struct Ring {
        TaskWindow<uint32_t> tasks;  // by place in the ring, from its oldest not consumed
        uint32_t alive = 0;  // tasks [0, alive) are consumed (simpler's last_task_alive)
        uint64_t fanin_used = 0;
        uint64_t fanout_top = 1, fanout_tail = 1;  // linear counters of the fanout links
        uint32_t fanout_reclaimed = 0;             // `alive` at the last reclaim
        uint64_t consumed_mark = 0;                // the fanout_mark of its last task consumed
    };

    // Waits until the oldest unconsumed task of `ring` is consumed (the
    // orchestrator's clock moves there); false when it never can be: there is
    // none, or its scope is still open.
    bool consume_head(Ring& ring, const Waiter& what);
    // Why `ring` cannot consume more: "its oldest ... " for a fatal message.
    std::string stuck_head(const Ring& ring) const;
    void record_scope(bool begin);  // the innermost open scope's boundary
    bool consumed(uint32_t task) const { return slots_[task].local < rings_[slots_[task].ring].alive; }
    // Drops the slots of the oldest tasks consumed, and their records unless kept.
    void drop_consumed();

    Memory memory_;
    Live live_;
    Costs costs_;
    uint64_t orch_ps_ = 0;
    bool begun_ = false;
    size_t handed_ = 0;
    uint32_t clusters_;
    // By task (a deque: no copy of every record as it grows); without keep_task_records_,
    // from the oldest not both handed over and consumed.
    TaskWindow<GraphTask> tasks_;
    bool keep_task_records_ = true;
    bool keep_dep_records_ = false;
    TensorStore tensors_;
    const ChipTensor* recent_[kKeptReused] = {};  // the last kept, most recent at recent_[0]
    TensorMap producers_;
    uint64_t producer_count_ = 0;  // tasks the producers' entries name (scope stats' `tensormap`)
    // INPUT / INOUT / NO_DEP accesses, for set_tensor_data's hazards, which only return a
    // reader later than a producer of its buffer: one registered while its buffer has no
    // producer never is (every later producer is the same task or later) and is not kept.
    TensorMap readers_;
    std::vector<PTO2ScopeMode> scopes_;
    std::vector<uint64_t> scope_heap_bytes_;  // per open scope: its outputs' bytes in its ring
    std::vector<std::vector<uint32_t>> scope_tasks_;  // per open scope: the tasks submitted in it
    RingSizes ring_sizes_;
    Ring rings_[kRings];
    // By task, from the oldest not consumed: a task before slots_.first() is consumed.
    TaskWindow<Slot> slots_;
    uint64_t ring_live_[kRings] = {};  // bytes the open scopes of each ring hold
    uint64_t heap_allocated_[kRings] = {};  // bytes each ring allocated, in all
    std::vector<std::string> scope_sites_;  // per open scope: where it began
    bool keep_scope_records_ = false;
    std::vector<ScopeRecord> scope_records_;
    uint32_t ring_of_scope() const { return std::min<uint32_t>(static_cast<uint32_t>(scopes_.size()), kRings) - 1; }
    std::vector<std::string> log_;
    int fatal_code_ = 0;
    std::string fatal_message_;
    // By task, from the oldest not consumed (slots_): when it completed; kOpen: not known (not
    // waited for). A consumed task's end is asked of the simulation again (Live::wait_task).
    TaskWindow<uint64_t> end_ps_;
};

}  // namespace pfsim::rt
