#include "runtime/orchestration/task_graph.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

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
    graph.scope_tasks_.assign(1, {});
    std::fill(std::begin(graph.ring_live_), std::end(graph.ring_live_), 0);
    graph.scope_sites_.assign(1, kExecutorSite);
    graph.record_scope(true);
    graph_ = &graph;
}

TaskGraph::Recording::~Recording() {
    if (graph_->scopes_.size() == 1) graph_->record_scope(false);  // the executor's scope ends with the orchestration
    g_recording = nullptr;
}

namespace {

// Every field (not the padding: memcmp would compare it too).
bool same_descriptor(const ChipTensor& a, const ChipTensor& b) {
    return a.buffer.addr == b.buffer.addr && a.buffer.size == b.buffer.size &&
           a.owner_task_id.raw == b.owner_task_id.raw && a.start_offset == b.start_offset && a.version == b.version &&
           a.ndims == b.ndims && a.dtype == b.dtype && a.manual_dep == b.manual_dep &&
           a.is_contiguous == b.is_contiguous && a.address_space == b.address_space &&
           std::equal(std::begin(a.shapes), std::end(a.shapes), std::begin(b.shapes)) &&
           a.extent_elem_cache == b.extent_elem_cache &&
           std::equal(std::begin(a.strides), std::end(a.strides), std::begin(b.strides));
}

}  // namespace

const ChipTensor* TaskGraph::keep(const ChipTensor& t) {
    for (size_t i = 0; i < kKeptReused && recent_[i]; ++i) {
        if (!same_descriptor(*recent_[i], t)) continue;
        const ChipTensor* found = recent_[i];
        std::copy_backward(recent_, recent_ + i, recent_ + i + 1);  // most recent first
        return recent_[0] = found;
    }
    std::copy_backward(recent_, recent_ + kKeptReused - 1, recent_ + kKeptReused);
    return recent_[0] = tensors_.push_back(t);
}

void TaskGraph::byte_range(const ChipTensor& t, uint64_t* begin, uint64_t* end) {
    const uint64_t size = element_size(t.dtype) ? element_size(t.dtype) : 1;
    *begin = t.start_offset * size;
    *end = *begin + t.extent_elem() * size;
}

std::string TaskGraph::Site::str() const {
    const char* base = file ? std::strrchr(file, '/') : nullptr;
    return std::string(base ? base + 1 : (file ? file : "?")) + ":" + std::to_string(line);
}

TaskOutputTensors TaskGraph::submit(TaskShape shape, const int32_t kernel[3], const CoreTaskArgs& args, Site site) {
    if (fatal_code_) return {};
    GraphTask task;
    task.index = static_cast<uint32_t>(tasks_.size());
    task.submit_ps = orch_ps_;
    task.shape = shape;
    std::copy(kernel, kernel + 3, task.kernel);
    task.scope_depth = static_cast<uint32_t>(scopes_.size());
    task.site = site.str();
    auto invalid = [&](int code, const std::string& why) {
        report_fatal(code, site, task.name() + ": " + why);
        return TaskOutputTensors{};
    };
    // Everything is checked before the graph changes.
    if (args.error()) return invalid(PTO2_ERROR_INVALID_ARGS, args.error());
    if (args.launch_spec.block_num < 1) {
        return invalid(PTO2_ERROR_INVALID_ARGS, "launch_spec.set_block_num(" +
                                                    std::to_string(args.launch_spec.block_num) + "): at least 1 block");
    }
    task.block_num = static_cast<uint32_t>(args.launch_spec.block_num);
    if (args.launch_spec.require_sync_start && task.block_num > 1 && shape != TaskShape::Dummy) {
        // A cohort needs one core (AIV) or one cluster (AIC, mixed) per block at once.
        const uint32_t limit = shape == TaskShape::Aiv ? 2 * clusters_ : clusters_;
        if (task.block_num > limit) {
            return invalid(PTO2_ERROR_REQUIRE_SYNC_START_INVALID,
                           "launch_spec.set_require_sync_start(true) with block_num " + std::to_string(task.block_num) +
                               " > the die's " + std::to_string(limit) +
                               (shape == TaskShape::Aiv ? " vector cores" : " clusters") +
                               ": its blocks can never start together");
        }
        task.sync_start = true;
    }
    for (int i = 0; i < args.dep_count(); ++i) {
        const PTO2TaskId d = args.dep(i);
        if (!d.is_valid() || d.raw >= task.index) {
            return invalid(PTO2_ERROR_INVALID_ARGS, "set_dependencies names task " + std::to_string(d.raw) +
                                                        ", which was not submitted before it");
        }
    }
    for (int i = 0; i < args.tensor_count(); ++i) {
        const CoreTaskArgs::TensorEntry& e = args.tensor_entry(i);
        const uint32_t dims = e.type == TensorArgType::OUTPUT ? e.create->ndims : e.tensor->ndims;
        if (dims == 0 || dims > MAX_TENSOR_DIMS) {
            return invalid(PTO2_ERROR_INVALID_ARGS,
                           "tensor argument " + std::to_string(i) + " has " + std::to_string(dims) +
                               " dimensions (a reshape of a non-contiguous tensor or to another element count?)");
        }
    }
    if (args.predicate().op != PredicateOp::NONE) {
        const CorePredicateOperand& o = args.predicate().operand;
        std::string why = "set_predicate: the operand has no tensor";
        const uint64_t gm = o.tensor ? element_gm(*o.tensor, o.ndims, o.indices, &why) : ~uint64_t{0};
        if (gm == ~uint64_t{0}) return invalid(PTO2_ERROR_INVALID_ARGS, "set_predicate: " + why);
        task.predicate = {args.predicate().op, gm, static_cast<uint32_t>(element_size(o.tensor->dtype)),
                          args.predicate().target};
    }
    const bool manual = scopes_.back() == PTO2ScopeMode::MANUAL;
    const PTO2TaskId id{task.index};
    // A slot in the task window of the scope depth's ring.
    const uint32_t ring_id = ring_of_scope();
    Ring& ring = rings_[ring_id];
    // The messages' parts, built only for a message (a Waiter of two pointers
    // allocates nothing).
    const auto ring_name = [&] { return "ring " + std::to_string(ring_id); };
    const struct {
        const GraphTask& task;
        uint32_t ring;
    } who{task, ring_id};
    auto waiting = [&who](const char* what) -> Waiter {
        return [&who, what] {
            return who.task.name() + " at " + who.task.site + ", waiting for ring " + std::to_string(who.ring) +
                   " to give back " + what;
        };
    };
    const uint64_t window = ring_size(ring_sizes_.task_window, ring_id, PTO2_TASK_WINDOW_SIZE);
    const auto window_name = [&] {
        return "the task window of " + ring_name() + " (runtime_env.ring_task_window = " + std::to_string(window) + ")";
    };
    if (scope_tasks_.back().size() + 1 >= window) {
        return invalid(PTO2_ERROR_SCOPE_DEADLOCK, "its scope already holds " +
                                                      std::to_string(scope_tasks_.back().size()) + " tasks, all " +
                                                      window_name() + " can hold while the scope is open");
    }
    while (ring.tasks.size() + 1 >= window + ring.alive) {
        if (!consume_head(ring, waiting("a task slot"))) {
            return invalid(PTO2_ERROR_FLOW_CONTROL_DEADLOCK, window_name() + " is full and " + stuck_head(ring));
        }
    }
    // Outputs from the heap ring, in argument order.
    std::vector<const ChipTensor*> outputs;
    try {
        for (int i = 0; i < args.tensor_count(); ++i) {
            const CoreTaskArgs::TensorEntry& e = args.tensor_entry(i);
            if (e.type != TensorArgType::OUTPUT) continue;
            const TensorCreateInfo& c = *e.create;
            ChipTensor out = contiguous_tensor(0, c.dtype, c.shapes, c.ndims);
            out.manual_dep = c.manual_dep;
            out.owner_task_id = id;
            const uint64_t bytes = out.nbytes();
            const uint64_t heap = ring_size(ring_sizes_.heap, ring_id, 0);
            const uint64_t held = (bytes + 63) / 64 * 64;  // PTO2_ALIGN_SIZE
            {
                if (heap && ring_live_[ring_id] + held > heap) {
                    throw OrchestrationError(
                        "heap ring " + std::to_string(ring_id) + " (runtime_env.ring_heap[" +
                        std::to_string(ring_id) + "] = " + std::to_string(heap) + " B) cannot hold its " +
                        std::to_string(held) + " B output beside the " + std::to_string(ring_live_[ring_id]) +
                        " B the open scopes of that ring hold");
                }
                ring_live_[ring_id] += held;
                heap_allocated_[ring_id] += held;
                scope_heap_bytes_.back() += held;
            }
            const uint64_t gm = memory_.allocate(bytes);
            if (c.has_initial_value) memory_.fill(gm, bytes, c.initial_bits, element_size(c.dtype));
            out.buffer.addr = memory_.device_pointer(gm);
            outputs.push_back(keep(out));
        }
    } catch (const OrchestrationError& e) {
        return invalid(PTO2_ERROR_HEAP_RING_DEADLOCK, e.what());
    }

    std::vector<uint32_t> retained;  // explicit DEP_RETAIN and creator edges: they hold the producer's slot
    using Edge = GraphTask::Edge;
    for (int i = 0; i < args.dep_count(); ++i) {
        const uint32_t d = static_cast<uint32_t>(args.dep(i).raw);
        if (args.dep_kind(i) & DEP_WAIT) task.deps.push_back(d);
        if (args.dep_kind(i) & DEP_RETAIN) retained.push_back(d);
        if (keep_dep_records_) task.edges.push_back({d, -1, Edge::Source::Explicit, args.dep_kind(i), false, nullptr});
    }
    task.manual_scope = manual;
    task.early_resolve = args.allow_early_resolve();
    size_t next_output = 0;
    task.tensors.reserve(args.tensor_count());  // allocated once: see Worker::add_task
    task.tensor_types.reserve(args.tensor_count());
    task.scalars.reserve(args.scalar_count());
    task.scalar_dtypes.reserve(args.scalar_count());
    struct Access {
        uint64_t base, begin, end;  // buffer address, byte range
        const ChipTensor* tensor;
    };
    std::vector<Access> reads, writes, inouts;  // registered once the task is accepted
    for (int i = 0; i < args.tensor_count(); ++i) {
        const CoreTaskArgs::TensorEntry& e = args.tensor_entry(i);
        const ChipTensor* t = e.type == TensorArgType::OUTPUT ? outputs[next_output++] : keep(*e.tensor);
        task.tensors.push_back(t);
        task.tensor_types.push_back(e.type);
        if (manual || e.type == TensorArgType::OUTPUT) continue;
        // Creator edge.
        if (t->owner_task_id.is_valid() && t->owner_task_id.raw < task.index) {
            task.deps.push_back(static_cast<uint32_t>(t->owner_task_id.raw));
            retained.push_back(static_cast<uint32_t>(t->owner_task_id.raw));
            if (keep_dep_records_) {
                task.edges.push_back({static_cast<uint32_t>(t->owner_task_id.raw), i, Edge::Source::Creator,
                                      DEP_WAIT | DEP_RETAIN, false, nullptr});
            }
        }
        Access range{t->buffer.addr, 0, 0, t};
        byte_range(*t, &range.begin, &range.end);
        if (e.type != TensorArgType::OUTPUT_EXISTING) reads.push_back(range);
        if (e.type == TensorArgType::NO_DEP) continue;
        if ((e.type == TensorArgType::INPUT || e.type == TensorArgType::INOUT) && !t->manual_dep) {
            for (const Producer& p : entries_of(producers_, range.base)) {
                if (p.begin >= range.end || range.begin >= p.end) continue;
                for (uint32_t k = p.first; k <= p.last; ++k) {
                    task.deps.push_back(k);
                    if (!keep_dep_records_) continue;
                    task.edges.push_back({k, i, Edge::Source::TensorMap, DEP_WAIT,
                                          range.begin <= p.begin && p.end <= range.end, p.tensor});
                }
            }
        }
        if (e.type == TensorArgType::INOUT) inouts.push_back(range);
        if (e.type == TensorArgType::INOUT || e.type == TensorArgType::OUTPUT_EXISTING) writes.push_back(range);
    }
    auto sort_unique = [](std::vector<uint32_t>& v) {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    sort_unique(task.deps);
    sort_unique(retained);
    // The dependency pool. Fanin edges go to producers not yet consumed (a
    // consumed one needs none); simpler keeps 64 inline and the rest in the
    // ring's fanin pool, given back as the task is consumed.
    auto live = [&](uint32_t p) { return slots_.held(p) && !consumed(p); };
    std::vector<uint32_t> fanin;
    std::set_union(task.deps.begin(), task.deps.end(), retained.begin(), retained.end(), std::back_inserter(fanin));
    fanin.erase(std::remove_if(fanin.begin(), fanin.end(), [&](uint32_t p) { return !live(p); }), fanin.end());
    retained.erase(std::remove_if(retained.begin(), retained.end(), [&](uint32_t p) { return !live(p); }),
                   retained.end());
    const uint64_t pool = ring_size(ring_sizes_.dep_pool, ring_id, PTO2_DEP_LIST_POOL_SIZE);
    const auto pool_name = [&] {
        return ring_name() + "'s dependency pool (runtime_env.ring_dep_pool = " + std::to_string(pool) + " entries)";
    };
    const uint64_t spill = fanin.size() > PTO2_FANIN_INLINE_CAP ? fanin.size() - PTO2_FANIN_INLINE_CAP : 0;
    if (spill > pool) {
        return invalid(PTO2_ERROR_DEP_POOL_OVERFLOW, std::to_string(fanin.size()) +
                                                         " dependencies: more than the 64 inline fanin slots and " +
                                                         pool_name() + " hold");
    }
    while (ring.fanin_used + spill > pool) {
        if (!consume_head(ring, waiting("fanin entries"))) {
            return invalid(PTO2_ERROR_DEP_POOL_OVERFLOW, std::to_string(fanin.size()) + " dependencies: " + pool_name() +
                                                             " cannot give back the " + std::to_string(spill) +
                                                             " fanin entries beyond the 64 inline: " + stuck_head(ring));
        }
    }
    // A producer the orchestrator has not seen complete gets a fanout link to
    // this task; wiring needs room for one per dependency. Given back 64
    // consumed tasks at a time (simpler's PTO2_DEP_POOL_CLEANUP_INTERVAL).
    const uint64_t links = static_cast<uint64_t>(std::count_if(task.deps.begin(), task.deps.end(), [&](uint32_t p) {
        return live(p) && (!end_ps_.held(p) || end_ps_[p] == kOpen);
    }));
    const uint64_t need = static_cast<uint64_t>(std::count_if(task.deps.begin(), task.deps.end(), live));
    if (links && need > pool) {
        return invalid(PTO2_ERROR_DEP_POOL_OVERFLOW, std::to_string(need) + " dependencies on running producers: " +
                                                         "more fanout links than " + pool_name() + " holds");
    }
    for (uint32_t seen = ring.alive; links && pool - (ring.fanout_top - ring.fanout_tail) < need;) {
        if (seen > 0 && seen >= ring.fanout_reclaimed + 64) {
            ring.fanout_tail = std::max(ring.fanout_tail, ring.consumed_mark);  // task seen - 1's (seen == alive)
            ring.fanout_reclaimed = seen;
            continue;
        }
        if (!consume_head(ring, waiting("fanout links"))) {
            return invalid(PTO2_ERROR_DEP_POOL_OVERFLOW, std::to_string(need) + " dependencies: " + pool_name() +
                                                             " cannot give back the fanout links they need: " +
                                                             stuck_head(ring));
        }
        seen = ring.alive;
    }
    // An INOUT covering a producer's whole range retires that entry.
    for (const Access& r : inouts) {
        const auto found = producers_.find(r.base);
        if (found == producers_.end()) continue;
        std::vector<Producer>& entries = found->second;
        const auto retired = std::remove_if(entries.begin(), entries.end(), [&](const Producer& p) {
            return r.begin <= p.begin && p.end <= r.end;
        });
        for (auto p = retired; p != entries.end(); ++p) producer_count_ -= p->last - p->first + 1;
        entries.erase(retired, entries.end());
        if (entries.empty()) producers_.erase(found);
    }
    for (const Access& r : reads) {
        if (producers_.count(r.base)) register_access(readers_, r.base, r.begin, r.end, task.index, r.tensor);
    }
    for (const Access& w : writes) {
        register_access(producers_, w.base, w.begin, w.end, task.index, w.tensor);
        ++producer_count_;
    }
    for (int i = 0; i < args.scalar_count(); ++i) {
        task.scalars.push_back(args.scalar_value(i));
        task.scalar_dtypes.push_back(args.scalar_dtype(i));
    }
    task.dump_mask = args.dump_mask();
    task.dump_ambiguous = args.dump_ambiguous_mask();
    task.ring_id = (uint64_t{ring_id} << 32) | ring.tasks.size();
    orch_ps_ += costs_.submit_ps;
    task.release_ps = orch_ps_;
    Slot slot;
    slot.ring = ring_id;
    slot.local = static_cast<uint32_t>(ring.tasks.size());
    slot.fanin_spill = spill;
    ring.fanout_top += links;
    slot.fanout_mark = ring.fanout_top;
    ring.tasks.push_back(task.index);
    ring.fanin_used += spill;
    for (uint32_t p : retained) slots_[p].retainers.push_back({task.index, task.release_ps});
    scope_tasks_.back().push_back(task.index);
    slots_.push_back(std::move(slot));
    tasks_.push_back(std::move(task));
    if (begun_) hand_over();
    return TaskOutputTensors(id, std::move(outputs));
}

void TaskGraph::hand_over() {
    if (!live_.begin) throw OrchestrationError("tensor data and cache maintenance need the simulation running");
    if (!begun_) live_.begin();
    begun_ = true;
    for (; handed_ < tasks_.size(); ++handed_) {
        GraphTask& task = tasks_[handed_];
        live_.submitted(task);
        if (keep_dep_records_) continue;
        std::vector<const ChipTensor*>().swap(task.tensors);
        std::vector<TensorArgType>().swap(task.tensor_types);
        std::vector<uint64_t>().swap(task.scalars);
        std::vector<DataType>().swap(task.scalar_dtypes);
    }
    drop_consumed();
}

void TaskGraph::drop_consumed() {
    while (slots_.first() < slots_.size() && consumed(static_cast<uint32_t>(slots_.first()))) slots_.pop_front();
    while (end_ps_.first() < std::min(end_ps_.size(), slots_.first())) end_ps_.pop_front();
    while (!keep_task_records_ && tasks_.first() < std::min(handed_, slots_.first())) tasks_.pop_front();
}

TaskOutputTensors TaskGraph::alloc(const CoreTaskArgs& args, Site site) {
    if (fatal_code_) return {};
    std::string why;
    if (args.error()) why = args.error();
    if (args.tensor_count() == 0) why = "at least one TensorCreateInfo is needed";
    if (args.scalar_count() != 0) why = "only TensorCreateInfo outputs, no scalars";
    for (int i = 0; i < args.tensor_count(); ++i) {
        if (args.tensor_entry(i).type != TensorArgType::OUTPUT) why = "only TensorCreateInfo outputs";
    }
    if (args.dep_count() || args.predicate().op != PredicateOp::NONE) why = "no dependencies or predicate";
    if (!why.empty()) {
        report_fatal(PTO2_ERROR_INVALID_ARGS, site, "alloc_tensors: " + why);
        return {};
    }
    const int32_t none[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
    return submit(TaskShape::Dummy, none, args, site);
}

uint64_t TaskGraph::element_gm(const ChipTensor& t, uint32_t ndims, const uint32_t* indices, std::string* why) const {
    if (!t.buffer.addr) {
        *why = "the tensor has no buffer (address 0): no task allocated or produced it";
        return ~uint64_t{0};
    }
    if (t.ndims == 0 || t.ndims > MAX_TENSOR_DIMS || ndims != t.ndims) {
        *why = std::to_string(ndims) + " indices for a tensor of " + std::to_string(t.ndims) + " dimensions";
        return ~uint64_t{0};
    }
    uint64_t element = t.start_offset;
    for (uint32_t k = 0; k < ndims; ++k) {
        if (indices[k] >= t.shapes[k]) {
            *why = "index " + std::to_string(indices[k]) + " of dimension " + std::to_string(k) + " (of size " +
                   std::to_string(t.shapes[k]) + ")";
            return ~uint64_t{0};
        }
        element += uint64_t{indices[k]} * t.strides[k];
    }
    const uint64_t size = element_size(t.dtype);
    const uint64_t gm = memory_.gm_of(t.buffer.addr + element * size, size);
    if (gm == ~uint64_t{0}) {
        char addr[32];
        std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(t.buffer.addr + element * size));
        *why = std::string("the element at ") + addr + " is not in GM";
    }
    return gm;
}

std::vector<uint32_t> TaskGraph::hazards(const ChipTensor& t, uint64_t begin, uint64_t end, bool write) const {
    std::vector<uint32_t> out;
    if (t.owner_task_id.is_valid() && t.owner_task_id.raw < tasks_.size()) {
        out.push_back(static_cast<uint32_t>(t.owner_task_id.raw));
    }
    uint32_t first_producer = ~uint32_t{0};
    for (const Producer& p : entries_of(producers_, t.buffer.addr)) {
        if (p.begin >= end || begin >= p.end) continue;
        for (uint32_t k = p.first; k <= p.last; ++k) out.push_back(k);
        first_producer = std::min(first_producer, p.first);
    }
    // A write also waits for the producer's readers (simpler: its fanout);
    // with no producer, nothing tracks the readers.
    if (write && first_producer != ~uint32_t{0}) {
        for (const Producer& r : entries_of(readers_, t.buffer.addr)) {
            if (r.begin >= end || begin >= r.end) continue;
            for (uint32_t k = std::max(r.first, first_producer + 1); k <= r.last; ++k) out.push_back(k);
        }
    }
    return out;
}

const std::vector<TaskGraph::Producer>& TaskGraph::entries_of(const TensorMap& map, uint64_t base) {
    static const std::vector<Producer> none;
    const auto found = map.find(base);
    return found == map.end() ? none : found->second;
}

void TaskGraph::register_access(TensorMap& map, uint64_t base, uint64_t begin, uint64_t end, uint32_t task,
                                const ChipTensor* tensor) {
    std::vector<Producer>& entries = map[base];
    if (!entries.empty()) {
        Producer& last = entries.back();
        if (last.begin == begin && last.end == end && last.tensor == tensor && last.last + 1 == task) {
            last.last = task;
            return;
        }
    }
    entries.push_back({begin, end, task, task, tensor});
}

uint64_t TaskGraph::end_of(uint32_t t, const Waiter& what) {
    const bool cached = t >= end_ps_.first();
    if (cached) {
        while (end_ps_.size() < tasks_.size()) end_ps_.push_back(kOpen);
        if (end_ps_[t] != kOpen) return end_ps_[t];
    }
    hand_over();
    uint64_t end_ps = 0;
    if (!live_.wait_task(t, &end_ps)) {
        throw OrchestrationStalled(what() + " waits for " + tasks_[t].name() + " (submitted at " + tasks_[t].site +
                                   "), which can never complete");
    }
    return cached ? end_ps_[t] = end_ps : end_ps;
}

void TaskGraph::wait_for(const std::vector<uint32_t>& tasks, const Waiter& what) {
    for (uint32_t t : tasks) orch_ps_ = std::max(orch_ps_, end_of(t, what));
}

uint64_t TaskGraph::ring_size(const std::vector<uint64_t>& sizes, uint32_t ring, uint64_t fallback) {
    return ring < sizes.size() && sizes[ring] ? sizes[ring] : fallback;
}

void TaskGraph::write_scope_stats(const std::string& path, const std::vector<ScopeRecord>& records,
                                  const RingSizes& sizes, uint64_t heap_bytes) {
    std::ostringstream out;
    auto per_ring = [&](const std::vector<uint64_t>& v, uint64_t fallback) {
        std::string s;
        for (uint32_t r = 0; r < kRings; ++r) s += (r ? ", " : "") + std::to_string(ring_size(v, r, fallback));
        return s;
    };
    out << "{\"version\": 6, \"fatal\": false, \"dropped\": 0, \"total\": " << records.size()
        << ", \"task_window_max\": [" << per_ring(sizes.task_window, PTO2_TASK_WINDOW_SIZE) << "], \"heap_max\": ["
        << per_ring(sizes.heap, heap_bytes) << "], \"dep_pool_max\": [" << per_ring(sizes.dep_pool, PTO2_DEP_LIST_POOL_SIZE)
        << "], \"tensormap_max\": 0}\n";
    for (const ScopeRecord& s : records) {
        out << "{\"site\": \"" << s.site << "\", \"phase\": \"" << (s.begin ? "begin" : "end") << "\", \"depth\": "
            << s.depth << ", \"ring\": " << s.ring << ", \"task_window_start\": " << s.task_start
            << ", \"task_window_end\": " << s.task_end << ", \"heap_start\": " << s.heap_start
            << ", \"heap_end\": " << s.heap_end << ", \"dep_pool_start\": " << s.dep_start
            << ", \"dep_pool_end\": " << s.dep_end << ", \"tensormap\": " << s.tensormap << "}\n";
    }
    std::ofstream file(path, std::ios::trunc);
    file << out.str();
    if (!file) throw std::runtime_error(path + ": cannot write the scope statistics");
}

bool TaskGraph::consume_head(Ring& ring, const Waiter& what) {
    if (ring.alive == ring.tasks.size()) return false;
    const uint32_t head = ring.tasks[ring.alive];
    const Slot& slot = slots_[head];
    if (slot.scope_end_ps == kOpen) return false;
    uint64_t at = std::max(end_of(head, what), slot.scope_end_ps);
    for (const Slot::Retainer& c : slot.retainers) {
        if (c.release_ps > at) break;  // taken after it was consumed: no hold
        at = std::max(at, end_of(c.task, what));
    }
    orch_ps_ = std::max(orch_ps_, at);
    ring.fanin_used -= slot.fanin_spill;
    ring.consumed_mark = slot.fanout_mark;
    ++ring.alive;
    ring.tasks.pop_front();
    drop_consumed();
    return true;
}

std::string TaskGraph::stuck_head(const Ring& ring) const {
    if (ring.alive == ring.tasks.size()) return "every earlier task of the ring is already given back";
    const GraphTask& head = tasks_[ring.tasks[ring.alive]];
    return "its oldest task, " + head.name() + " (submitted at " + head.site +
           "), is held by its scope, which is still open";
}

uint64_t TaskGraph::get_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t* indices, Site site) {
    if (fatal_code_) return 0;
    std::string why;
    const uint64_t gm = element_gm(t, ndims, indices, &why);
    if (gm == ~uint64_t{0}) {
        report_fatal(PTO2_ERROR_INVALID_ARGS, site, "get_tensor_data: " + why);
        return 0;
    }
    const uint64_t size = element_size(t.dtype);
    const uint64_t begin = gm - memory_.gm_of(t.buffer.addr, 1);
    wait_for(hazards(t, begin, begin + size, false), [&] { return "get_tensor_data at " + site.str(); });
    orch_ps_ += costs_.tensor_data_ps;
    uint64_t bits = 0;
    memory_.read(gm, &bits, size);
    return bits;
}

void TaskGraph::set_tensor_data(const ChipTensor& t, uint32_t ndims, const uint32_t* indices, uint64_t bits, Site site) {
    if (fatal_code_) return;
    std::string why;
    const uint64_t gm = element_gm(t, ndims, indices, &why);
    if (gm == ~uint64_t{0}) {
        report_fatal(PTO2_ERROR_INVALID_ARGS, site, "set_tensor_data: " + why);
        return;
    }
    const uint64_t size = element_size(t.dtype);
    const uint64_t begin = gm - memory_.gm_of(t.buffer.addr, 1);
    wait_for(hazards(t, begin, begin + size, true), [&] { return "set_tensor_data at " + site.str(); });
    orch_ps_ += costs_.tensor_data_ps;
    memory_.write(gm, &bits, size);
}

void TaskGraph::cache_maintenance(Site site) {
    hand_over();
    orch_ps_ += costs_.tensor_data_ps;
    if (!live_.run_until(orch_ps_)) {
        throw OrchestrationStalled("cache maintenance at " + site.str() +
                                   ": the graph has stopped while the orchestration is still polling");
    }
}

void TaskGraph::scope_begin(PTO2ScopeMode mode, Site site) {
    scopes_.push_back(mode);
    scope_heap_bytes_.push_back(0);
    scope_tasks_.emplace_back();
    scope_sites_.push_back(site.str());
    record_scope(true);
}

void TaskGraph::record_scope(bool begin) {
    if (!keep_scope_records_) return;
    const uint32_t r = ring_of_scope();
    const Ring& ring = rings_[r];
    ScopeRecord s;
    s.site = scope_sites_.back();
    s.begin = begin;
    s.depth = static_cast<uint32_t>(scopes_.size()) - 1;
    s.ring = r;
    s.task_start = ring.alive;
    s.task_end = ring.tasks.size();
    s.heap_start = heap_allocated_[r] - ring_live_[r];
    s.heap_end = heap_allocated_[r];
    s.dep_start = ring.fanout_tail;
    s.dep_end = ring.fanout_top;
    s.tensormap = producer_count_;
    scope_records_.push_back(std::move(s));
}

void TaskGraph::scope_end() {
    if (scopes_.size() <= 1) throw OrchestrationError("rt_scope_end without a matching rt_scope_begin");
    ring_live_[ring_of_scope()] -= scope_heap_bytes_.back();  // its outputs given back
    record_scope(false);
    scope_sites_.pop_back();
    scope_heap_bytes_.pop_back();
    for (uint32_t t : scope_tasks_.back()) slots_[t].scope_end_ps = orch_ps_;
    scope_tasks_.pop_back();
    scopes_.pop_back();
}

void TaskGraph::log(PTO2LogLevel level, const std::string& line) {
    static const char* names[] = {"ERROR", "WARN", "INFO", "DEBUG", "TIMING"};
    log_.push_back(std::string(names[static_cast<int>(level)]) + " " + line);
}

void TaskGraph::report_fatal(int code, Site site, const std::string& message) {
    const std::string text = "fatal " + std::to_string(code) + " (" + runtime_error_name(code) + ") at " + site.str() +
                             ": " + message;
    if (!fatal_code_) {
        fatal_code_ = code ? code : PTO2_ERROR_EXPLICIT_ORCH_FATAL;
        fatal_message_ = text;
    }
    log(PTO2LogLevel::ERROR, text);
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
    if (scalar_count_) return set_error("a tensor was added after a scalar (tensors come first)");
    if (tensor_count_ == kMaxTensors) return set_error("more than 32 tensors");
    tensors_[tensor_count_++] = TensorEntry{type, &t, nullptr};
}

void CoreTaskArgs::add_out(const TensorCreateInfo& c) {
    if (scalar_count_) return set_error("a tensor was added after a scalar (tensors come first)");
    if (tensor_count_ == kMaxTensors) return set_error("more than 32 tensors");
    tensors_[tensor_count_++] = TensorEntry{TensorArgType::OUTPUT, nullptr, &c};
}

void CoreTaskArgs::push_scalar(uint64_t v, uintptr_t source, DataType dtype) {
    if (scalar_count_ == kMaxScalars) return set_error("more than 16 scalars");
    scalar_sources_[scalar_count_] = source;
    scalar_dtypes_[scalar_count_] = dtype;
    scalars_[scalar_count_++] = v;
}

void CoreTaskArgs::mark_dump(const ChipTensor& t) {
    for (int i = 0; i < tensor_count_; ++i) {
        if (tensors_[i].type != TensorArgType::OUTPUT && tensors_[i].tensor == &t) {
            dump_mask_ |= uint64_t{1} << i;
            return;
        }
    }
    set_error("dump: a tensor that is not an argument of this task");
}

void CoreTaskArgs::mark_dump(const TensorCreateInfo& c) {
    for (int i = 0; i < tensor_count_; ++i) {
        if (tensors_[i].type == TensorArgType::OUTPUT && tensors_[i].create == &c) {
            dump_mask_ |= uint64_t{1} << i;
            return;
        }
    }
    set_error("dump: a TensorCreateInfo that is not an argument of this task");
}

void CoreTaskArgs::mark_dump_scalar(uintptr_t source) {
    int first = -1, matches = 0;
    for (int i = 0; i < scalar_count_; ++i) {
        if (scalar_sources_[i] != source) continue;
        if (first < 0) first = i;
        ++matches;
    }
    if (first < 0) return set_error("dump: a scalar variable that was not added to this task (add_scalar)");
    const uint64_t bit = uint64_t{1} << (tensor_count_ + first);
    dump_mask_ |= bit;
    if (matches > 1) dump_ambiguous_ |= bit;
}

void CoreTaskArgs::copy_scalars_from(const CoreTaskArgs& src, int offset, int n) {
    if (offset < 0 || n < 0 || offset + n > src.scalar_count_) {
        return set_error("copy_scalars_from: the range is beyond the source's scalars");
    }
    for (int i = 0; i < n; ++i) push_scalar(src.scalars_[offset + i], 0, src.scalar_dtypes_[offset + i]);
}

void CoreTaskArgs::set_dependencies_with_kinds(const PTO2TaskId* ids, const DepFlags* kinds, int n) {
    if (n == 0) {
        deps_.clear();
        kinds_.clear();
        return;
    }
    if (n < 0 || !ids) return set_error("set_dependencies: a null array or a negative count");
    if (!deps_.empty()) return set_error("set_dependencies: called again without clearing (count 0) first");
    deps_.assign(ids, ids + n);
    kinds_.assign(static_cast<size_t>(n), DEP_WAIT | DEP_RETAIN);
    if (kinds) kinds_.assign(kinds, kinds + n);
}

void CoreTaskArgs::clear() {
    tensor_count_ = 0;
    scalar_count_ = 0;
    deps_.clear();
    kinds_.clear();
    allow_early_resolve_ = false;
    predicate_ = CoreTaskPredicate{};
    dump_mask_ = 0;
    dump_ambiguous_ = 0;
}

const ChipTensor& TaskOutputTensors::get_ref(int i) const {
    // After a fatal error submissions return nothing; their outputs are empty
    // tensors (as on the board, the orchestration runs on to its end).
    static const ChipTensor none{};
    if (size() == 0 && pfsim::rt::recording().fatal_code()) return none;
    if (i < 0 || i >= size()) {
        throw OrchestrationError("TaskOutputTensors::get_ref(" + std::to_string(i) + "): the task allocated " +
                                 std::to_string(size()) + " outputs");
    }
    return *outputs_[static_cast<size_t>(i)];
}

using Site = pfsim::rt::TaskGraph::Site;

TaskOutputTensors rt_submit_task(const MixedKernels& k, const CoreTaskArgs& args, const char* file, int line) {
    const int32_t kernel[3] = {k.aic_kernel_id, k.aiv0_kernel_id, k.aiv1_kernel_id};
    const int used = (k.aic_kernel_id != INVALID_KERNEL_ID) + (k.aiv0_kernel_id != INVALID_KERNEL_ID) +
                     (k.aiv1_kernel_id != INVALID_KERNEL_ID);
    TaskShape shape = TaskShape::Mix;
    if (used == 0) shape = TaskShape::Dummy;
    if (used == 1) shape = k.aic_kernel_id != INVALID_KERNEL_ID ? TaskShape::Aic : TaskShape::Aiv;
    if (used == 1 && k.aiv1_kernel_id != INVALID_KERNEL_ID) {
        const int32_t moved[3] = {INVALID_KERNEL_ID, k.aiv1_kernel_id, INVALID_KERNEL_ID};
        return pfsim::rt::recording().submit(shape, moved, args, Site{file, line});
    }
    return pfsim::rt::recording().submit(shape, kernel, args, Site{file, line});
}

TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args, const char* file, int line) {
    const int32_t kernel[3] = {kernel_id, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
    return pfsim::rt::recording().submit(TaskShape::Aic, kernel, args, Site{file, line});
}

TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args, const char* file, int line) {
    const int32_t kernel[3] = {INVALID_KERNEL_ID, kernel_id, INVALID_KERNEL_ID};
    return pfsim::rt::recording().submit(TaskShape::Aiv, kernel, args, Site{file, line});
}

TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args, const char* file, int line) {
    const int32_t kernel[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};
    return pfsim::rt::recording().submit(TaskShape::Dummy, kernel, args, Site{file, line});
}

TaskOutputTensors alloc_tensors(const CoreTaskArgs& args, const char* file, int line) {
    return pfsim::rt::recording().alloc(args, Site{file, line});
}

TaskOutputTensors alloc_tensors(const TensorCreateInfo create_infos[], uint32_t count, const char* file, int line) {
    CoreTaskArgs args;
    for (uint32_t i = 0; i < count; ++i) args.add_output(create_infos[i]);
    return pfsim::rt::recording().alloc(args, Site{file, line});
}

TaskOutputTensors alloc_tensors(const TensorCreateInfo& a, const char* file, int line) {
    return alloc_tensors(&a, 1, file, line);
}

TaskOutputTensors alloc_tensors(const TensorCreateInfo& a, const TensorCreateInfo& b, const char* file, int line) {
    CoreTaskArgs args;
    args.add_output(a, b);
    return pfsim::rt::recording().alloc(args, Site{file, line});
}

TaskOutputTensors alloc_tensors(const TensorCreateInfo& a, const TensorCreateInfo& b, const TensorCreateInfo& c,
                                const char* file, int line) {
    CoreTaskArgs args;
    args.add_output(a, b, c);
    return pfsim::rt::recording().alloc(args, Site{file, line});
}

uint64_t rt_get_tensor_data(const ChipTensor& tensor, uint32_t ndims, const uint32_t indices[], const char* file,
                            int line) {
    return pfsim::rt::recording().get_tensor_data(tensor, ndims, indices, Site{file, line});
}

void rt_set_tensor_data(const ChipTensor& tensor, uint32_t ndims, const uint32_t indices[], uint64_t bits,
                        const char* file, int line) {
    pfsim::rt::recording().set_tensor_data(tensor, ndims, indices, bits, Site{file, line});
}

void rt_cache_maintenance(const void*, size_t, const char* file, int line) {
    pfsim::rt::recording().cache_maintenance(Site{file, line});
}

void rt_scope_begin(PTO2ScopeMode mode, const char* file, int line) {
    pfsim::rt::recording().scope_begin(mode, Site{file, line});
}
void rt_scope_end() { pfsim::rt::recording().scope_end(); }
int rt_available_cluster_count() { return static_cast<int>(pfsim::rt::recording().clusters()); }
int rt_available_aiv_count() { return static_cast<int>(2 * pfsim::rt::recording().clusters()); }
bool rt_is_fatal() { return pfsim::rt::recording().fatal_code() != 0; }
void rt_orchestration_done() {}

void rt_report_fatal_at(const char* file, int line, int code, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const std::string message = pfsim::rt::vformat(fmt, ap);
    va_end(ap);
    pfsim::rt::recording().report_fatal(code, Site{file, line}, message);
}

void pto2_log(PTO2LogLevel level, const char* function, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const std::string message = pfsim::rt::vformat(fmt, ap);
    va_end(ap);
    pfsim::rt::recording().log(level, std::string(function) + ": " + message);
}
