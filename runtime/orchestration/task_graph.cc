#include "runtime/orchestration/task_graph.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace pfsim::rt {

namespace {

TaskGraph* g_recording = nullptr;

TaskGraph& recording() {
    if (!g_recording) throw OrchestrationError("the orchestration API was called outside an orchestration run");
    return *g_recording;
}

std::string vformat(const char* fmt, va_list ap) {
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    return buf;
}

}  // namespace

std::string GraphTask::name() const {
    std::string funcs;
    for (int s = 0; s < 3; ++s) {
        if (kernel[s] != INVALID_KERNEL_ID) funcs += (funcs.empty() ? "" : "/") + std::to_string(kernel[s]);
    }
    return "task " + std::to_string(index) + " (" + task_shape_name(shape) + (funcs.empty() ? "" : ", func " + funcs) +
           ")";
}

TaskGraph::Recording::Recording(TaskGraph& graph) {
    if (g_recording) throw OrchestrationError("an orchestration is already being recorded");
    g_recording = &graph;
    graph.scopes_.assign(1, PTO2ScopeMode::AUTO);  // the executor's outer scope
    graph.scope_heap_bytes_.assign(1, 0);
    std::fill(std::begin(graph.ring_live_), std::end(graph.ring_live_), 0);
}

TaskGraph::Recording::~Recording() { g_recording = nullptr; }

const ChipTensor* TaskGraph::keep(const ChipTensor& t) {
    tensors_.push_back(t);
    return &tensors_.back();
}

void TaskGraph::byte_range(const ChipTensor& t, uint64_t* begin, uint64_t* end) {
    const uint64_t size = element_size(t.dtype) ? element_size(t.dtype) : 1;
    *begin = t.start_offset * size;
    *end = *begin + t.extent_elem() * size;
}

TaskOutputTensors TaskGraph::submit(TaskShape shape, const int32_t kernel[3], const CoreTaskArgs& args) {
    GraphTask task;
    task.index = static_cast<uint32_t>(tasks_.size());
    task.shape = shape;
    std::copy(kernel, kernel + 3, task.kernel);
    task.scope_depth = static_cast<uint32_t>(scopes_.size());
    const std::string name = task.name();
    if (args.error()) throw OrchestrationError(name + ": " + args.error());
    if (args.launch_spec.block_num < 1) {
        throw OrchestrationError(name + ": launch_spec.set_block_num(" + std::to_string(args.launch_spec.block_num) +
                                 "): at least 1 block");
    }
    task.block_num = static_cast<uint32_t>(args.launch_spec.block_num);
    if (args.launch_spec.require_sync_start && task.block_num > 1 && shape != TaskShape::Dummy) {
        // A cohort needs one core (AIV) or one cluster (AIC, mixed) per block at once.
        const uint32_t limit = shape == TaskShape::Aiv ? 2 * clusters_ : clusters_;
        if (task.block_num > limit) {
            throw OrchestrationError(name + ": launch_spec.set_require_sync_start(true) with block_num " +
                                     std::to_string(task.block_num) + " > the die's " + std::to_string(limit) +
                                     (shape == TaskShape::Aiv ? " vector cores" : " clusters") +
                                     ": its blocks can never start together (PTO2_ERROR_REQUIRE_SYNC_START_INVALID, 7)");
        }
        task.sync_start = true;
    }
    const bool manual = scopes_.back() == PTO2ScopeMode::MANUAL;
    const PTO2TaskId id{task.index};
    std::vector<const ChipTensor*> outputs;

    for (int i = 0; i < args.dep_count(); ++i) {
        const PTO2TaskId d = args.dep(i);
        if (!d.is_valid() || d.raw >= task.index) {
            throw OrchestrationError(name + ": set_dependencies names task " + std::to_string(d.raw) +
                                     ", which was not submitted before it");
        }
        task.deps.push_back(static_cast<uint32_t>(d.raw));
    }
    for (int i = 0; i < args.tensor_count(); ++i) {
        const CoreTaskArgs::TensorEntry& e = args.tensor_entry(i);
        const ChipTensor* t = nullptr;
        if (e.type == TensorArgType::OUTPUT) {
            const TensorCreateInfo& c = *e.create;
            ChipTensor out = contiguous_tensor(0, c.dtype, c.shapes, c.ndims);
            out.manual_dep = c.manual_dep;
            out.owner_task_id = id;
            const uint64_t bytes = out.nbytes();
            const uint32_t ring = ring_of_scope();
            if (ring < ring_heap_.size()) {
                const uint64_t held = (bytes + 63) / 64 * 64;  // PTO2_ALIGN_SIZE
                if (ring_live_[ring] + held > ring_heap_[ring]) {
                    throw OrchestrationError(
                        name + ": heap ring " + std::to_string(ring) + " (runtime_env.ring_heap[" + std::to_string(ring) +
                        "] = " + std::to_string(ring_heap_[ring]) + " B) cannot hold its " + std::to_string(held) +
                        " B output beside the " + std::to_string(ring_live_[ring]) +
                        " B the open scopes of that ring hold (PTO2_ERROR_HEAP_RING_DEADLOCK, 2)");
                }
                ring_live_[ring] += held;
                scope_heap_bytes_.back() += held;
            }
            const uint64_t gm = memory_.allocate(bytes);
            if (c.has_initial_value) memory_.fill(gm, bytes, c.initial_bits, element_size(c.dtype));
            out.buffer.addr = memory_.device_pointer(gm);
            t = keep(out);
            outputs.push_back(t);
        } else {
            t = keep(*e.tensor);
        }
        task.tensors.push_back(t);
        task.tensor_types.push_back(e.type);
        if (manual || e.type == TensorArgType::NO_DEP || e.type == TensorArgType::OUTPUT) continue;
        // Creator edge.
        if (t->owner_task_id.is_valid() && t->owner_task_id.raw < task.index) {
            task.deps.push_back(static_cast<uint32_t>(t->owner_task_id.raw));
        }
        uint64_t begin, end;
        byte_range(*t, &begin, &end);
        if ((e.type == TensorArgType::INPUT || e.type == TensorArgType::INOUT) && !t->manual_dep) {
            for (const Producer& p : producers_) {
                if (p.base == t->buffer.addr && p.begin < end && begin < p.end) task.deps.push_back(p.task);
            }
        }
        if (e.type == TensorArgType::INOUT || e.type == TensorArgType::OUTPUT_EXISTING) {
            if (e.type == TensorArgType::INOUT) {
                producers_.erase(std::remove_if(producers_.begin(), producers_.end(),
                                                [&](const Producer& p) {
                                                    return p.base == t->buffer.addr && begin <= p.begin && p.end <= end;
                                                }),
                                 producers_.end());
            }
            producers_.push_back(Producer{t->buffer.addr, begin, end, task.index});
        }
    }
    for (int i = 0; i < args.scalar_count(); ++i) task.scalars.push_back(args.scalar_value(i));
    std::sort(task.deps.begin(), task.deps.end());
    task.deps.erase(std::unique(task.deps.begin(), task.deps.end()), task.deps.end());
    tasks_.push_back(std::move(task));
    return TaskOutputTensors(id, std::move(outputs));
}

void TaskGraph::scope_begin(PTO2ScopeMode mode) {
    scopes_.push_back(mode);
    scope_heap_bytes_.push_back(0);
}

void TaskGraph::scope_end() {
    if (scopes_.size() <= 1) throw OrchestrationError("rt_scope_end without a matching rt_scope_begin");
    ring_live_[ring_of_scope()] -= scope_heap_bytes_.back();  // its outputs given back
    scope_heap_bytes_.pop_back();
    scopes_.pop_back();
}

void TaskGraph::log(PTO2LogLevel level, const std::string& line) {
    static const char* names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TIMING"};
    log_.push_back(std::string(names[static_cast<int>(level)]) + " " + line);
}

void TaskGraph::report_fatal(int code, const std::string& message) {
    if (!fatal_code_) fatal_code_ = code;
    log(PTO2LogLevel::ERROR, "fatal " + std::to_string(code) + ": " + message);
}

}  // namespace pfsim::rt

using pfsim::rt::OrchestrationError;
using pfsim::rt::TaskShape;

ChipTaskArgs::TensorArg ChipTaskArgs::tensor(uint32_t i) const {
    if (i >= tensors.size()) {
        throw OrchestrationError("orch_args.tensor(" + std::to_string(i) + "): the case has " +
                                 std::to_string(tensors.size()) + " tensors");
    }
    return TensorArg{tensors[i]};
}

uint64_t ChipTaskArgs::scalar(uint32_t i) const {
    if (i >= scalars.size()) {
        throw OrchestrationError("orch_args.scalar(" + std::to_string(i) + "): the case has " +
                                 std::to_string(scalars.size()) + " scalars");
    }
    return scalars[i];
}

TensorCreateInfo::TensorCreateInfo(const uint32_t* shapes_in, uint32_t ndims_in, DataType dtype_in, bool manual_dep_in)
    : ndims(ndims_in), dtype(dtype_in), manual_dep(manual_dep_in) {
    if (ndims_in == 0 || ndims_in > pfsim::rt::MAX_TENSOR_DIMS) {
        throw OrchestrationError("TensorCreateInfo: " + std::to_string(ndims_in) + " dimensions (1 to 5)");
    }
    for (uint32_t i = 0; i < ndims_in; ++i) shapes[i] = shapes_in[i];
}

void CoreTaskArgs::add(TensorArgType type, const ChipTensor& t) {
    if (scalar_count_) return fail("a tensor was added after a scalar (tensors come first)");
    if (tensor_count_ == kMaxTensors) return fail("more than 32 tensors");
    tensors_[tensor_count_++] = TensorEntry{type, &t, nullptr};
}

void CoreTaskArgs::add_out(const TensorCreateInfo& c) {
    if (scalar_count_) return fail("a tensor was added after a scalar (tensors come first)");
    if (tensor_count_ == kMaxTensors) return fail("more than 32 tensors");
    tensors_[tensor_count_++] = TensorEntry{TensorArgType::OUTPUT, nullptr, &c};
}

void CoreTaskArgs::push_scalar(uint64_t v) {
    if (scalar_count_ == kMaxScalars) return fail("more than 16 scalars");
    scalars_[scalar_count_++] = v;
}

void CoreTaskArgs::set_dependencies(const PTO2TaskId* ids, int n) {
    if (deps_set_) return fail("set_dependencies called twice");
    if (n > kMaxDeps) return fail("more than 64 explicit dependencies");
    deps_set_ = true;
    for (int i = 0; i < n; ++i) deps_[dep_count_++] = ids[i];
}

const ChipTensor& TaskOutputTensors::get_ref(int i) const {
    if (i < 0 || i >= size()) {
        throw OrchestrationError("TaskOutputTensors::get_ref(" + std::to_string(i) + "): the task allocated " +
                                 std::to_string(size()) + " outputs");
    }
    return *outputs_[static_cast<size_t>(i)];
}

TaskOutputTensors rt_submit_task(const MixedKernels& k, const CoreTaskArgs& args) {
    const int32_t kernel[3] = {k.aic_kernel_id, k.aiv0_kernel_id, k.aiv1_kernel_id};
    const int used = (k.aic_kernel_id != INVALID_KERNEL_ID) + (k.aiv0_kernel_id != INVALID_KERNEL_ID) +
                     (k.aiv1_kernel_id != INVALID_KERNEL_ID);
    TaskShape shape = TaskShape::Mix;
    if (used == 0) shape = TaskShape::Dummy;
    if (used == 1) shape = k.aic_kernel_id != INVALID_KERNEL_ID ? TaskShape::Aic : TaskShape::Aiv;
    if (used == 1 && k.aiv1_kernel_id != INVALID_KERNEL_ID) {
        const int32_t moved[3] = {INVALID_KERNEL_ID, k.aiv1_kernel_id, INVALID_KERNEL_ID};
        return pfsim::rt::recording().submit(shape, moved, args);
    }
    return pfsim::rt::recording().submit(shape, kernel, args);
}

TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args) {
    const int32_t kernel[3] = {kernel_id, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
    return pfsim::rt::recording().submit(TaskShape::Aic, kernel, args);
}

TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args) {
    const int32_t kernel[3] = {INVALID_KERNEL_ID, kernel_id, INVALID_KERNEL_ID};
    return pfsim::rt::recording().submit(TaskShape::Aiv, kernel, args);
}

TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args) {
    const int32_t kernel[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
    return pfsim::rt::recording().submit(TaskShape::Dummy, kernel, args);
}

void rt_scope_begin(PTO2ScopeMode mode) { pfsim::rt::recording().scope_begin(mode); }
void rt_scope_end() { pfsim::rt::recording().scope_end(); }
int rt_available_cluster_count() { return static_cast<int>(pfsim::rt::recording().clusters()); }
int rt_available_aiv_count() { return static_cast<int>(2 * pfsim::rt::recording().clusters()); }
bool rt_is_fatal() { return pfsim::rt::recording().fatal_code() != 0; }
void rt_orchestration_done() {}

void rt_report_fatal(int code, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const std::string message = pfsim::rt::vformat(fmt, ap);
    va_end(ap);
    pfsim::rt::recording().report_fatal(code, message);
}

void pto2_log(PTO2LogLevel level, const char* function, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const std::string message = pfsim::rt::vformat(fmt, ap);
    va_end(ap);
    pfsim::rt::recording().log(level, std::string(function) + ": " + message);
}
