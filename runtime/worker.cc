#include "runtime/worker.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <sstream>
#include <type_traits>

#include "hw/sdma_request.h"
#include "runtime/platform/device.h"

namespace pfsim::rt {

namespace {
constexpr uint64_t kStatusSlotBytes = 64;  // one line per channel: packed slots lose writes
constexpr uint64_t kStatusWarmed = 1, kStatusDeclined = 2;
}  // namespace

std::string WarmupReport::summary() const {
    std::ostringstream os;
    os << warmed << "/" << (warmed + declined + unreached) << " channels warmed in " << time_ps / 1e9 << " ms";
    if (declined || unreached) os << " (" << declined << " declined, " << unreached << " unreached)";
    return os.str();
}

void sdma_warmup_kernel(int64_t* args) {
    Device& dev = current_device();
    const uint64_t ws = static_cast<uint64_t>(args[0]);
    const uint64_t status = static_cast<uint64_t>(args[1]);
    const auto channels = static_cast<uint32_t>(args[2]);
    const auto* local = reinterpret_cast<const LocalContext*>(args[kLocalContextSlot]);
    const KernelRuntimeOptions& opt = dev.kernel_side().options;
    const uint32_t tail_offset = opt.doorbell_tail_offset;
    for (auto c = static_cast<uint32_t>(local->block_idx); c < channels; c += static_cast<uint32_t>(local->block_num)) {
        dev.flush();  // invalidate the channel-info line
        ChannelRecord rec;
        dev.gm_read(WorkspaceLayout::channel_info(ws, c), &rec, sizeof rec);
        uint64_t result = kStatusDeclined;
        if (rec.sq_base && rec.doorbell_base && rec.sq_depth && rec.sq_head == rec.sq_tail &&
            rec.sq_tail < rec.sq_depth) {
            // Rewrite the request words at the tail in place (no transfer is
            // submitted), flush, and ring the doorbell with the unchanged tail.
            uint8_t words[kSdmaRequestBytes];
            const uint64_t at = rec.sq_base + uint64_t{rec.sq_tail} * kSdmaRequestBytes;
            dev.gm_read(at, words, sizeof words);
            dev.gm_write(at, words, sizeof words);
            dev.flush();
            dev.mmio_write32(rec.doorbell_base + tail_offset, rec.sq_tail);
            dev.spend(opt.warmup_channel_ps);
            result = kStatusWarmed;
        }
        dev.gm_write(status + c * kStatusSlotBytes, &result, 8);
    }
}

Worker::Worker(Platform& platform, const WorkerOptions& options) : platform_(platform), options_(options) {
    if (!options_.enable_sdma) return;
    const uint32_t mask = 1u << DMA_WORKSPACE_SDMA;
    const int rc = provision_dma_workspace(mask);
    if (rc != 0) {
        finalize();
        throw RuntimeError("async-DMA workspace provisioning (mask=" + std::to_string(mask) +
                           ") failed with code " + std::to_string(rc));
    }
}

Worker::~Worker() { finalize(); }

int Worker::provision_dma_workspace(uint32_t mask) {
    const uint32_t supported = platform_.dma_workspace_supported_mask();
    if (mask & ~supported) {
        last_error_ = supported ? "unsupported mask" : platform_.platform_name() + " has no async-DMA workspace provider";
        return -1;
    }
    if (!queues_.empty() || workspace_[DMA_WORKSPACE_SDMA]) {
        last_error_ = "already provisioned";
        return -1;
    }
    if (!(mask & (1u << DMA_WORKSPACE_SDMA))) return 0;
    const uint32_t channels = platform_.dma_channel_count();
    std::vector<ChannelRecord> records(channels);
    for (uint32_t c = 0; c < channels; ++c) {
        const SdmaQueue q = platform_.create_sdma_queue(c);
        queues_.push_back(c);
        ChannelRecord& r = records[c];
        std::memset(&r, 0, sizeof r);
        r.sq_base = q.ring_base;
        r.doorbell_base = q.doorbell_base;
        r.sq_depth = q.depth;
        r.sq_id = q.sq_id;
        r.stream_id = q.stream_id;
    }
    const uint64_t ws = platform_.gm_alloc(options_.workspace_bytes);
    std::vector<uint8_t> zeros(options_.workspace_bytes, 0);
    platform_.gm_write(ws, zeros.data(), zeros.size());
    WorkspaceHeader header{};
    header.flag = 1;
    header.total_queue_num = channels;
    platform_.gm_write(ws + WorkspaceLayout::kHeader, &header, sizeof header);
    platform_.gm_write(ws + WorkspaceLayout::kChannelInfo, records.data(), records.size() * sizeof(ChannelRecord));
    workspace_[DMA_WORKSPACE_SDMA] = ws;
    if (options_.warmup && warm_channels() != 0) {
        last_error_ = "the channel warm-up kernel faulted";
        return -1;
    }
    return 0;
}

int Worker::warm_channels() {
    const uint32_t channels = platform_.dma_channel_count();
    const uint64_t status = platform_.gm_alloc(channels * kStatusSlotBytes);
    std::vector<uint8_t> zeros(channels * kStatusSlotBytes, 0);
    platform_.gm_write(status, zeros.data(), zeros.size());
    KernelLaunch warm;
    warm.name = "sdma_warmup";
    warm.entries.aiv = &sdma_warmup_kernel;
    warm.spec.block_dim = options_.warmup_blocks;
    warm.spec.vector_per_block = 1;
    warm.args = {static_cast<int64_t>(workspace_[DMA_WORKSPACE_SDMA]), static_cast<int64_t>(status),
                 static_cast<int64_t>(channels)};
    const uint64_t start = platform_.now_ps();
    const LaunchResult r = run(warm);
    warmup_ = WarmupReport{};
    warmup_.ran = true;
    warmup_.time_ps = platform_.now_ps() - start;
    for (uint32_t c = 0; c < channels; ++c) {
        uint64_t s = 0;
        platform_.gm_read(status + c * kStatusSlotBytes, &s, 8);
        if (s == kStatusWarmed) {
            ++warmup_.warmed;
        } else if (s == kStatusDeclined) {
            ++warmup_.declined;
        } else {
            ++warmup_.unreached;
        }
    }
    platform_.gm_free(status);
    return r.ok() ? 0 : -1;
}

uint64_t Worker::dma_workspace(int kind) const {
    if (kind < 0 || kind >= DMA_WORKSPACE_KINDS) return 0;
    return workspace_[kind];
}

LaunchResult Worker::run(const KernelLaunch& launch) {
    if (launch.uses_sdma && !options_.enable_sdma) {
        throw RuntimeError("ChipWorker was created without enable_sdma=True");
    }
    if (launch.args.size() > kLocalContextSlot) {
        throw RuntimeError(launch.name + ": " + std::to_string(launch.args.size()) + " arguments; at most " +
                           std::to_string(kLocalContextSlot) + " fit");
    }
    const std::vector<CorePlace> places = core_places(launch.spec);
    args_.assign(places.size(), std::vector<int64_t>(kArgSlots, 0));
    local_.assign(places.size(), LocalContext{});
    global_.assign(places.size(), GlobalContext{});
    std::vector<int64_t*> per_core;
    for (size_t i = 0; i < places.size(); ++i) {
        std::copy(launch.args.begin(), launch.args.end(), args_[i].begin());
        local_[i].block_idx = static_cast<int32_t>(places[i].block_idx);
        local_[i].block_num = static_cast<int32_t>(launch.spec.block_dim);
        global_[i] = global_context(places[i].subblock);
        args_[i][kLocalContextSlot] = reinterpret_cast<int64_t>(&local_[i]);
        args_[i][kGlobalContextSlot] = reinterpret_cast<int64_t>(&global_[i]);
        per_core.push_back(args_[i].data());
    }
    arm_kernel_side();
    return platform_.launch(launch.entries, launch.spec, per_core);
}

GlobalContext Worker::global_context(uint32_t sub_block) const {
    GlobalContext g{};
    g.sub_block_id = static_cast<int32_t>(sub_block);
    for (int k = 0; k < DMA_WORKSPACE_KINDS; ++k) {
        g.dma_workspace[k] = workspace_[k] ? platform_.device_pointer(workspace_[k]) : 0;
    }
    g.l2_cache_offset = platform_.l2_cache_offset();
    return g;
}

void Worker::arm_kernel_side() {
    KernelRuntimeOptions kernel = options_.kernel;
    kernel.channels = platform_.dma_channel_count();
    kernel.doorbell_tail_offset = platform_.doorbell_tail_offset();
    platform_.kernel_side().options = kernel;
    platform_.channel_groups().clear();
}

void Worker::set_aicpu_threads(uint32_t n) {
    if (n > kMaxAicpuThreads) {
        throw RuntimeError("aicpu_thread_num = " + std::to_string(n) + ": simpler's a2a3 runs 1 to " +
                           std::to_string(kMaxAicpuThreads) + " AICPU threads (0: its default, " +
                           std::to_string(kDefaultAicpuThreads) + ")");
    }
    options_.aicpu_threads = n;
}

void Worker::begin_graph(const std::map<int32_t, Incore>& incores, bool uses_sdma) {
    if (uses_sdma && !options_.enable_sdma) throw RuntimeError("ChipWorker was created without enable_sdma=True");
    graph_incores_ = &incores;
    graph_launch_ = GraphLaunch{};
    graph_launch_.dispatch_ps = options_.scheduler.dispatch_ps;
    graph_launch_.completion_ps = options_.scheduler.completion_ps;
    graph_launch_.doorbell_ps = options_.scheduler.doorbell_ps;
    graph_launch_.time_limit_ps = options_.scheduler.time_limit_ps;
    graph_launch_.poll_ps = options_.scheduler.poll_ps;
    const uint32_t threads = options_.aicpu_threads ? options_.aicpu_threads : kDefaultAicpuThreads;
    graph_launch_.scheduler_threads = std::max<uint32_t>(threads, 2) - 1;
    graph_launch_.task_records = task_records_;
    if (args_dump_) graph_launch_.observe = [d = args_dump_](uint32_t t, bool completed) { d->capture(t, completed); };
    global_.assign(platform_.core_count(), GlobalContext{});
    for (uint32_t id = 0; id < global_.size(); ++id) {
        global_[id] = global_context(platform_.core_place(id).subblock);
        graph_launch_.global_context.push_back(reinterpret_cast<int64_t>(&global_[id]));
    }
    arm_kernel_side();
    platform_.begin_graph(graph_launch_);
}

void Worker::add_task(const GraphTask& t) {
    if (args_dump_) args_dump_->add_task(t);
    DispatchTask d;
    d.name = t.name();
    d.shape = t.shape;
    d.blocks = t.block_num;
    d.sync_start = t.sync_start;
    d.early_resolve = t.early_resolve;
    d.deps = t.deps;
    d.release_ps = t.release_ps;
    d.predicate_op = static_cast<uint8_t>(t.predicate.op);
    d.predicate_elem_size = t.predicate.elem_size;
    d.predicate_gm = t.predicate.gm;
    d.predicate_target = t.predicate.target;
    for (int slot = 0; slot < 3; ++slot) {
        if (t.kernel[slot] == INVALID_KERNEL_ID) continue;
        auto it = graph_incores_->find(t.kernel[slot]);
        if (it == graph_incores_->end()) {
            throw OrchestrationError(d.name + ": func_id " + std::to_string(t.kernel[slot]) +
                                     " is not one of the callable's incores");
        }
        if (it->second.vector != (slot != 0)) {
            throw OrchestrationError(d.name + ": func_id " + std::to_string(t.kernel[slot]) + " (" +
                                     it->second.source + ") is built for " + (it->second.vector ? "aiv" : "aic") +
                                     " but submitted to a" + (slot == 0 ? "n aic" : "n aiv") + " slot");
        }
        d.entry[slot] = it->second.entry;
        d.source[slot] = &*graph_launch_.sources.insert(it->second.source).first;
    }
    // The blocks' contexts, per slot with a kernel argument arrays, and the
    // tensor descriptors they point at (the task's own copies, as in the board's
    // task payload: what a kernel does to one stays in its task): dropped by the
    // platform when the task completes.
    // The descriptors (64-byte aligned) sit in plain bytes, not a vector of their own: an
    // over-aligned operator new (glibc's memalign) cannot reuse the chunks such records
    // leave, and with thousands of tasks pending at once the heap crept with the task
    // count (#49).
    static_assert(std::is_trivially_copyable_v<ChipTensor> && std::is_trivially_destructible_v<ChipTensor>);
    struct Storage {
        std::vector<LocalContext> local;
        std::vector<int64_t> args;
        std::unique_ptr<unsigned char[]> bytes;
        ChipTensor* tensors = nullptr;  // in `bytes`
    };
    auto storage = std::make_shared<Storage>();
    if (!t.tensors.empty()) {
        size_t space = t.tensors.size() * sizeof(ChipTensor) + alignof(ChipTensor);
        storage->bytes.reset(new unsigned char[space]);
        void* at = storage->bytes.get();
        storage->tensors = static_cast<ChipTensor*>(std::align(alignof(ChipTensor), space - alignof(ChipTensor), at, space));
        for (size_t i = 0; i < t.tensors.size(); ++i) new (&storage->tensors[i]) ChipTensor(*t.tensors[i]);
    }
    const int slots = (d.entry[0] != nullptr) + (d.entry[1] != nullptr) + (d.entry[2] != nullptr);
    // Each vector allocated once, at its size: a task's record lives until it completes,
    // and the chunks a growing vector leaves behind between the live records of thousands
    // of pending tasks fragment the heap (#49).
    d.slabs.reserve(t.block_num);
    d.args.reserve(size_t{t.block_num} * 3);
    d.tensor_buffers.reserve(t.tensors.size());
    storage->local.resize(t.block_num);
    storage->args.assign(size_t{t.block_num} * slots * kArgSlots, 0);
    int64_t* next_args = storage->args.data();
    for (uint32_t b = 0; b < t.block_num; ++b) {
        LocalContext& local = storage->local[b];
        local.block_idx = static_cast<int32_t>(b);
        local.block_num = static_cast<int32_t>(t.block_num);
        // The block's deferred-completion slab, in GM; its count and error
        // start at zero (GM is reused from run to run).
        const uint64_t slab = platform_.gm_alloc(sizeof(DeferredCompletionSlab));
        static_assert(offsetof(DeferredCompletionSlab, error_code) == 4, "the slab starts with count, error");
        platform_.gm_zero(slab, 2 * sizeof(uint32_t));
        const uint64_t slab_ptr = platform_.device_pointer(slab);
        d.slabs.push_back(slab);
        local.async_ctx.completion_count = reinterpret_cast<volatile uint32_t*>(slab_ptr);
        local.async_ctx.completion_error_code =
            reinterpret_cast<volatile int32_t*>(slab_ptr + offsetof(DeferredCompletionSlab, error_code));
        local.async_ctx.completion_entries = reinterpret_cast<volatile DeferredCompletionEntry*>(
            slab_ptr + offsetof(DeferredCompletionSlab, entries));
        local.async_ctx.completion_capacity = MAX_COMPLETIONS_PER_TASK;
        local.async_ctx.task_token = PTO2TaskId{t.index};
        for (int slot = 0; slot < 3; ++slot) {
            if (!d.entry[slot]) {
                d.args.push_back(nullptr);
                continue;
            }
            int64_t* a = next_args;
            next_args += kArgSlots;
            for (size_t i = 0; i < t.tensors.size(); ++i) a[i] = reinterpret_cast<int64_t>(&storage->tensors[i]);
            for (size_t i = 0; i < t.scalars.size(); ++i) a[t.tensors.size() + i] = static_cast<int64_t>(t.scalars[i]);
            a[kLocalContextSlot] = reinterpret_cast<int64_t>(&local);
            d.args.push_back(a);
        }
    }
    d.args_storage = std::move(storage);
    for (size_t i = 0; i < t.tensors.size(); ++i) {
        d.tensor_buffers.push_back({static_cast<uint32_t>(i), t.tensors[i]->buffer.addr, t.tensors[i]->buffer.size});
    }
    graph_launch_.tasks.push_back(std::make_unique<DispatchTask>(std::move(d)));
}

bool Worker::wait_task(uint32_t task, uint64_t* end_ps) { return platform_.run_graph_until(task, 0, end_ps); }

bool Worker::run_until(uint64_t ps) {
    uint64_t unused = 0;
    return platform_.run_graph_until(~uint32_t{0}, ps, &unused);
}

GraphResult Worker::end_graph() {
    graph_incores_ = nullptr;
    GraphResult result = platform_.end_graph();
    graph_launch_.tasks = {};  // nothing reads them after the graph (#49)
    return result;
}

void Worker::close_graph() {
    graph_incores_ = nullptr;
    platform_.close_graph();
}

void Worker::release_sdma() {
    for (uint32_t q : queues_) platform_.destroy_sdma_queue(q);
    queues_.clear();
    if (workspace_[DMA_WORKSPACE_SDMA]) platform_.gm_free(workspace_[DMA_WORKSPACE_SDMA]);
    for (uint64_t& w : workspace_) w = 0;
}

void Worker::finalize() { release_sdma(); }

TeardownReport Worker::close(bool fatal, const TeardownOptions& o) {
    TeardownReport r;
    r.fatal = fatal;
    r.sdma = !queues_.empty() || workspace_[DMA_WORKSPACE_SDMA] != 0;
    auto step = [&r](std::string what, uint64_t ps) {
        r.steps.push_back({std::move(what), ps});
        r.time_ps += ps;
    };
    const std::string handles = std::to_string(queues_.size()) + " SDMA queues and the " +
                                std::to_string(options_.workspace_bytes) + "-byte workspace";
    if (!fatal) {
        if (r.sdma) step("destroyed " + handles, 0);
        release_sdma();
        return r;
    }
    if (r.sdma) {
        auto seconds = [](uint64_t ps) {
            char b[32];
            std::snprintf(b, sizeof b, "%g s", static_cast<double>(ps) / 1e12);
            return std::string(b);
        };
        step("hand-off wait of max(" + seconds(o.handoff_floor_ps) + ", op timeout " + seconds(o.op_timeout_ps) + " + " +
                 seconds(o.settle_margin_ps) + "): the SDMA streams have no retirement fence",
             std::max(o.handoff_floor_ps, o.op_timeout_ps + o.settle_margin_ps));
    }
    r.reset_attempts_allowed = r.sdma ? o.reset_attempts_sdma : o.reset_attempts;
    r.reset_confirmed = false;
    while (!r.reset_confirmed && r.reset_attempts < r.reset_attempts_allowed) {
        ++r.reset_attempts;
        r.reset_confirmed = r.reset_attempts > o.failing_resets;
        step("force reset, attempt " + std::to_string(r.reset_attempts) + " of " +
                 std::to_string(r.reset_attempts_allowed) + ": " + (r.reset_confirmed ? "confirmed" : "not confirmed"),
             o.reset_ps);
    }
    if (r.sdma) step("forgot " + handles + " without destroying or freeing them", 0);
    if (!r.reset_confirmed) step("reset not confirmed: the old handles are quarantined, the device stays unusable", 0);
    queues_.clear();  // forgotten: no destroy_sdma_queue, no gm_free
    for (uint64_t& w : workspace_) w = 0;
    return r;
}

}  // namespace pfsim::rt
