// Host side of the runtime: a worker on one device (mirrors simpler's ChipWorker).
// With enable_sdma, initialisation provisions the async-DMA workspace: 48
// submission queues, the workspace of §2.4 in GM, the channel warm-up pass of
// §3.4; every launch then carries the workspace address in each core's context.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/orchestration/args_dump.h"
#include "runtime/orchestration/task_graph.h"
#include "runtime/platform/platform.h"
#include "runtime/prefetch.h"
#include "runtime/sdma_workspace.h"

namespace pfsim::rt {

// A host-side failure, with the message the real runtime gives.
class RuntimeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The AICPU scheduler's costs (configuration keys orch.*).
struct SchedulerTiming {
    uint64_t submit_ps = 0, dispatch_ps = 0, completion_ps = 0, time_limit_ps = 0, poll_ps = 0;
    uint64_t doorbell_ps = 0;     // an early-staged block's last producer completing -> its core starts
    uint64_t tensor_data_ps = 0;  // the orchestrator's GM access of tensor data
};

// An incore of a callable: its kernel and the core type it was built for.
struct Incore {
    KernelEntry entry = nullptr;
    bool vector = true;
    std::string source;
};

// Closing a worker after a fatal device error (prefetch-protocol.md §3.6, §5
// item 23; simpler's DeviceRunner::finalize): the constants (teardown.*).
struct TeardownOptions {
    uint64_t op_timeout_ps = 0;     // the op-execute timeout the streams run with
    uint64_t handoff_floor_ps = 0;  // the hand-off wait is max(floor, op timeout + settle margin)...
    uint64_t settle_margin_ps = 0;
    uint64_t reset_ps = 0;          // one force reset with its probe
    uint32_t reset_attempts_sdma = 1, reset_attempts = 3;  // ...on a worker with SDMA provisioned / without
    uint32_t failing_resets = 0;    // fault injection: this many resets do not confirm
};

struct TeardownStep {
    std::string step;
    uint64_t time_ps = 0;  // simulated host time the step takes
};

struct TeardownReport {
    bool fatal = false, sdma = false;
    bool reset_confirmed = true;  // false: the old handles are quarantined, the device stays unusable
    uint32_t reset_attempts = 0, reset_attempts_allowed = 0;
    std::vector<TeardownStep> steps;
    uint64_t time_ps = 0;  // all steps
};

struct WorkerOptions {
    bool enable_sdma = false;
    uint64_t workspace_bytes = 53248;
    uint32_t warmup_blocks = 8;
    bool warmup = true;                  // false: the first prefetch on each channel pays the cold cost
    KernelRuntimeOptions kernel;         // constants the kernel side runs with
    SchedulerTiming scheduler;
    // simpler's AICPU threads of a run (its CallConfig.aicpu_thread_num; 0 is
    // simpler's default, kDefaultAicpuThreads): one orchestrator, the others
    // schedulers (GraphLaunch::scheduler_threads), at least one.
    uint32_t aicpu_threads = 0;
};

// simpler's a2a3 platform default (PLATFORM_DEFAULT_AICPU_THREAD_NUM: one
// orchestrator and three schedulers) and its largest count.
constexpr uint32_t kDefaultAicpuThreads = 4, kMaxAicpuThreads = 4;

struct WarmupReport {
    bool ran = false;
    uint32_t warmed = 0, declined = 0, unreached = 0;
    uint64_t time_ps = 0;
    std::string summary() const;  // "48/48 channels warmed in 4.42 ms"
};

struct KernelLaunch {
    std::string name;
    KernelEntries entries;
    LaunchSpec spec;
    std::vector<int64_t> args;  // the kernel's own slots (at most 48)
    bool uses_sdma = false;     // the kernel calls make_context / PrefetchAsyncContext
};

class Worker {
public:
    Worker(Platform& platform, const WorkerOptions& options);
    ~Worker();
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    // Provisions the workspace kinds in `mask`. Returns 0, or -1 with last_error()
    // saying why (unsupported mask, already provisioned, no provider, ...).
    int provision_dma_workspace(uint32_t mask);
    const std::string& last_error() const { return last_error_; }
    uint64_t dma_workspace(int kind) const;
    const WarmupReport& warmup() const { return warmup_; }
    bool sdma_enabled() const { return options_.enable_sdma; }
    const SchedulerTiming& scheduler_timing() const { return options_.scheduler; }
    // Whether later launches' prefetches reach the engine (off: each is a no-op returning handle 0).
    void set_prefetch_enabled(bool on) { options_.kernel.prefetch_enabled = on; }
    void set_skip_wait(bool on) { options_.kernel.skip_wait = on; }  // fault injection (session/faults.h)
    // What-ifs of later launches (KernelRuntimeOptions::dropped_sites,
    // free_sites); the die's counts of their uses start afresh (KernelSide).
    void set_site_what_ifs(std::vector<std::string> dropped, std::vector<std::string> freed) {
        options_.kernel.dropped_sites = std::move(dropped);
        options_.kernel.free_sites = std::move(freed);
        platform_.kernel_side().dropped_site_counts.clear();
        platform_.kernel_side().free_site_counts.clear();
    }
    // Later graphs' AICPU threads (WorkerOptions::aicpu_threads); throws RuntimeError above kMaxAicpuThreads.
    void set_aicpu_threads(uint32_t n);

    // Runs a kernel. Throws RuntimeError before anything reaches the device when
    // an SDMA kernel meets a worker without enable_sdma.
    LaunchResult run(const KernelLaunch& launch);
    // Runs a task graph alongside the orchestration that submits it;
    // `incores` maps each func_id to its kernel (kept until end_graph).
    // begin_graph throws RuntimeError when an SDMA graph meets a worker
    // without enable_sdma; add_task (each submission, in order) throws
    // OrchestrationError naming the task when it submits a func_id no incore
    // declares, or one built for the other core type. wait_task and run_until
    // run the simulation while the orchestration waits (Platform::run_graph_until);
    // end_graph runs the graph to its end. After begin_graph, end_graph must be called.
    void begin_graph(const std::map<int32_t, Incore>& incores, bool uses_sdma);
    void add_task(const GraphTask& task);
    // Whether the next graphs keep each task's records to their end (the default) or only
    // while the task is live (GraphLaunch::task_records; the orchestration's graph asks
    // task_records() for its own): false for a run that reads no task's record (#49).
    void set_task_records(bool keep) { task_records_ = keep; }
    bool task_records() const { return task_records_; }
    // The argument dump the next graphs feed (nullptr: none); it must outlive them.
    void set_args_dump(ArgsDump* dump) { args_dump_ = dump; }
    bool wait_task(uint32_t task, uint64_t* end_ps);
    bool run_until(uint64_t ps);
    GraphResult end_graph();
    // end_graph's first half, for graphs of several dies run together
    // (SimDies::end_graphs runs them out and gives the results).
    void close_graph();
    // Releases every channel and the workspace (also done by the destructor).
    void finalize();
    // Closes the worker and says how. Healthy: every queue destroyed and the
    // workspace freed. Fatal (a kernel trapped, the device is running down):
    // with SDMA provisioned a hand-off wait of max(floor, op timeout + margin),
    // then one force reset; without, up to three resets and no wait; either
    // way the handles are forgotten without a per-resource free. Later calls
    // (and the destructor) do nothing more.
    TeardownReport close(bool fatal, const TeardownOptions& options);

    // The channel warm-up pass of §3.4 (also run by provisioning). 0, or -1 when
    // the warm-up kernel faulted.
    int warm_channels();

private:
    void release_sdma();
    // A core's context: its place in its cluster and the workspaces' device pointers.
    GlobalContext global_context(uint32_t sub_block) const;
    // The kernel side's constants for the next launch or graph.
    void arm_kernel_side();

    Platform& platform_;
    WorkerOptions options_;
    uint64_t workspace_[DMA_WORKSPACE_KINDS] = {0, 0};
    std::vector<uint32_t> queues_;
    std::string last_error_;
    WarmupReport warmup_;
    std::vector<std::vector<int64_t>> args_;  // per core, kept alive during a launch
    const std::map<int32_t, Incore>* graph_incores_ = nullptr;
    GraphLaunch graph_launch_;
    ArgsDump* args_dump_ = nullptr;
    bool task_records_ = true;
    std::vector<LocalContext> local_;
    std::vector<GlobalContext> global_;
};

// The channel warm-up kernel (§3.4): args[0] workspace, args[1] status buffer
// (one 64-byte slot per channel: 1 warmed, 2 declined, 0 unreached), args[2]
// channel count. Grid-strides over the channels from its block index.
void sdma_warmup_kernel(int64_t* args);

}  // namespace pfsim::rt
