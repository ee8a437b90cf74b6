// SimPlatform's graph runs: the AICPU scheduler as a SystemC process.
//
// The orchestration runs on the host alongside: it appends tasks to the launch
// between the host's graph calls, each reaching the scheduler at its
// `release_ps` (the orchestrator's clock), and gets the simulation back when
// the task it waits for completed, its clock is reached, or only its next
// submissions can make progress (sc_pause). A task whose dependencies have
// completed is ready; a ready task whose predicate is false completes without
// a core; the others are served in submission order, each block to the lowest
// free core of its shape (a whole cluster for a mixed task), starting
// `dispatch_ps` later. A block counts as done `completion_ps` after its core
// finishes; a task completes with its last block.
//
// Sync-start cohorts (launch_spec.set_require_sync_start) come first: all the
// blocks of one start together once enough cores of its shape are free. The
// AICPU runs `scheduler_threads` schedulers, each owning a share of the clusters
// (GraphLaunch::scheduler_threads); a cohort that fits the free cores of one
// thread's clusters starts there (the lowest such thread: on the board whichever
// thread takes it from the ready queue), any other enters the global drain: it
// goes out at once across the die when enough cores are free, and while it waits
// for them nothing else is dispatched, so the cores that free gather for it and
// a stream of other tasks cannot starve it.
//
// Early dispatch (set_allow_early_resolve): when nothing is ready, a consumer
// whose producers not yet completed are all flagged early-resolve and have all
// their blocks dispatched is staged (predicated consumers never): its blocks go
// to idle cores first, then to busy cores' pending slots (one staged block per
// core; a sync-start cohort all on one thread's clusters, or not at all). An
// idle core is held, gated; a pending block enters its core's running slot,
// gated, when the block the core runs ends. The last producer's completion
// rings the doorbell: a gated block starts `doorbell_ps` after it (not
// `dispatch_ps`), a pending one `doorbell_ps` after its core's block ends if
// that is later; a sync-start cohort starts together, once the scheduler has
// also taken the completion of each of its cores' earlier blocks (the
// rendezvous). Only normal dispatch takes idle cores alone: pfsim does not
// pre-load a ready task into a busy core's pending slot.
#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <utility>

#include "model/common/time.h"
#include "runtime/kernel_abi.h"
#include "runtime/platform/sim/sim_platform.h"

namespace pfsim {

void SimPlatform::check_new_tasks() {
    const rt::GraphLaunch& launch = *graph_;
    for (; graph_checked_ < launch.tasks.size(); ++graph_checked_) {
        const rt::DispatchTask& t = *launch.tasks[graph_checked_];
        for (int slot = 0; slot < 3; ++slot) {
            const bool needed = (t.shape == rt::TaskShape::Aic && slot == 0) ||
                                (t.shape == rt::TaskShape::Aiv && slot == 1) ||
                                (t.shape == rt::TaskShape::Mix && t.entry[slot]);
            if (needed && !t.entry[slot]) throw std::runtime_error(t.name + ": no kernel for its core");
        }
        if (t.args.size() < 3 * static_cast<size_t>(t.blocks)) throw std::runtime_error(t.name + ": no arguments");
    }
}

void SimPlatform::begin_graph(rt::GraphLaunch& launch) {
    if (launch.global_context.size() < aic_.size() + aiv_.size()) {
        throw std::runtime_error("run_graph: a global context per core is needed");
    }
    graph_ = &launch;
    graph_checked_ = 0;
    check_new_tasks();
    elaborate();
    if (faults_.prefetch_corrupt) soc_.l2.corrupt_next_prefetch_fill();
    graph_result_ = rt::GraphResult{};
    graph_end_ps_.clear();
    Core::forget_signal_writers();
    graph_t0_ = sc_core::sc_time_stamp().value();
    graph_result_.start_ps = graph_t0_;
    pause_task_ = kNoTask;
    pause_at_ps_ = kNoTime;
    graph_active_ = true;
    sampler_.start([this] { return graph_active_; });
    graph_start_.notify(sc_core::SC_ZERO_TIME);
}

bool SimPlatform::run_graph_until(uint32_t task, uint64_t until_ps, uint64_t* end_ps) {
    check_new_tasks();
    auto done = [&] { return graph_done(task); };
    if (task != kNoTask && !done() && graph_active_) {
        pause_task_ = task;
    } else if (task == kNoTask && graph_active_ && graph_t0_ + until_ps > sc_core::sc_time_stamp().value()) {
        pause_at_ps_ = until_ps;
    }
    if (pause_task_ != kNoTask || pause_at_ps_ != kNoTime) {
        graph_resume_.notify(sc_core::SC_ZERO_TIME);
        sc_core::sc_start();
    }
    pause_task_ = kNoTask;
    pause_at_ps_ = kNoTime;
    if (task == kNoTask) return graph_active_;
    if (!done()) return false;
    *end_ps = graph_end_ps_[task] - graph_t0_;
    return true;
}

rt::GraphResult SimPlatform::end_graph() {
    close_submissions();
    if (graph_active_) sc_core::sc_start();
    return graph_result();
}

void SimPlatform::close_submissions() {
    if (!graph_) return;  // no graph begun
    check_new_tasks();
    graph_->submissions_done = true;
    if (graph_active_) graph_resume_.notify(sc_core::SC_ZERO_TIME);
}

rt::GraphResult SimPlatform::graph_result() {
    graph_result_.tasks.grow_to(graph_->tasks.size());  // those submitted after the graph stopped never ran
    graph_ = nullptr;
    for (const std::string& w : cross_flags_.drain()) graph_result_.warnings.push_back(w);
    for (auto* group : {&aic_, &aiv_}) {
        for (auto& core : *group) {
            for (const std::string& w : core->take_warnings()) {
                if (std::find(graph_result_.warnings.begin(), graph_result_.warnings.end(), w) ==
                    graph_result_.warnings.end()) {
                    graph_result_.warnings.push_back(w);
                }
            }
        }
    }
    rt::GraphResult result = std::move(graph_result_);  // not a copy: it holds a record per task (#49)
    graph_result_ = rt::GraphResult{};
    return result;
}

void SimPlatform::scheduler() {
    for (;;) {
        sc_core::wait(graph_start_);
        // What wakes the scheduler besides its clock: a core finished or blocked.
        // Built once a graph: each |= scans the list for a duplicate, so building
        // it at every wait cost a quadratic number of compares in the core count
        // (#49). A graph's local, as the state below: a list alive while the
        // thread idles would never be freed (the thread is never unwound).
        sc_core::sc_event_or_list core_changed;
        for (auto* group : {&aic_, &aiv_}) {
            for (auto& core : *group) core_changed |= core->changed_event();
        }
        const rt::GraphLaunch& g = *graph_;
        rt::GraphResult& result = graph_result_;
        size_t n = 0;  // the tasks submitted so far (grow())
        const uint32_t clusters = static_cast<uint32_t>(aic_.size());
        const Tick t0 = graph_t0_;
        auto now = [] { return static_cast<Tick>(sc_core::sc_time_stamp().value()); };

        // By task, from the oldest task not completed (retire()): its producers not
        // completed, its next block to dispatch, its blocks not completed, its consumers.
        rt::TaskWindow<uint32_t> waiting, next_block, blocks_left;
        rt::TaskWindow<std::vector<uint32_t>> consumers;
        std::set<uint32_t> ready;                  // submitted, dependencies met, blocks to dispatch
        std::vector<int64_t> core_task(aic_.size() + aiv_.size(), -1);  // by core id: the task it runs
        std::vector<uint32_t> core_block(core_task.size(), 0);
        std::vector<size_t> core_span(core_task.size(), 0);  // by core id: its block's place in the task's spans
        std::vector<CoreStats> core_stats(core_task.size());  // by core id: its counters when its block began
        // By core id: the task whose staged block holds it, gated, until its
        // doorbell (not running: the completion, time-limit and deadlock loops skip it).
        std::vector<int64_t> core_staged(core_task.size(), -1);
        // By core id: the task whose staged block waits in this busy core's
        // pending slot; it moves to core_staged when the core's block ends.
        std::vector<int64_t> core_pending(core_task.size(), -1);
        std::vector<char> held(core_task.size(), 0);  // by core id: chosen for a cohort being counted (find_cohort)
        // A staged task: its blocks waiting for the doorbell, with their cores.
        struct StagedBlock {
            uint32_t block;
            std::vector<std::pair<int, Core*>> cores;
            uint32_t pending = 0;     // of its cores, those still in a pending slot
            Tick promoted = kNoTime;  // when the last of them left it (kNoTime: none was)
            bool started = false;
        };
        struct Staged {
            std::vector<StagedBlock> blocks;
            Tick rung = kNoTime;  // when its last producer completed (kNoTime: not yet)
        };
        std::map<uint32_t, Staged> staged;
        std::set<uint32_t> early_candidates;  // consumers of early-resolve producers, to look at when nothing is ready
        std::vector<uint32_t> rung;           // staged tasks whose last producer completed
        std::vector<uint32_t> promoted;       // staged tasks one of whose pending blocks entered its running slot
        bool unstaged_warned = false;         // the warning for a cohort staged on the board, not here, was given
        std::map<std::pair<uint32_t, uint32_t>, uint32_t> block_cores;  // (task, block) -> cores still running
        std::multimap<Tick, std::pair<uint32_t, uint32_t>> completions;  // when a finished block counts as done
        // Blocks whose kernels registered completion conditions, with them.
        std::map<std::pair<uint32_t, uint32_t>, std::vector<rt::DeferredCompletionEntry>> deferred;
        size_t released = 0, completed = 0;
        bool failed = false;
        Tick first = ~Tick{0}, last = t0;

        // Takes in the tasks the orchestration submitted since the last look.
        auto grow = [&] {
            for (; n < g.tasks.size(); ++n) {
                const rt::DispatchTask& task = *g.tasks[n];
                waiting.push_back(0);
                next_block.push_back(0);
                blocks_left.push_back(task.shape == rt::TaskShape::Dummy ? 0 : task.blocks);
                consumers.emplace_back();
                graph_end_ps_.push_back(kNoTime);
                result.tasks.emplace_back();
                for (uint32_t d : task.deps) {
                    if (graph_done(d)) continue;
                    ++waiting[n];
                    consumers[d].push_back(static_cast<uint32_t>(n));
                    if (g.tasks[d]->early_resolve) early_candidates.insert(static_cast<uint32_t>(n));
                }
            }
        };
        // Drops the records of the oldest tasks that completed: the scheduler's own,
        // and the result's unless the launch keeps them (GraphLaunch::task_records).
        auto retire = [&] {
            while (waiting.first() < n && graph_done(static_cast<uint32_t>(waiting.first()))) {
                waiting.pop_front();
                next_block.pop_front();
                blocks_left.pop_front();
                consumers.pop_front();
                graph_->tasks.pop_front();
            }
            while (!g.task_records && result.tasks.first() < waiting.first()) {
                if (result.dropped_error.empty()) result.dropped_error = result.tasks.front().error;
                result.tasks.pop_front();
            }
        };
        // Gives the simulation back to the orchestration (sc_start returns)
        // until it resumes it.
        auto yield_to_host = [&] {
            sc_core::sc_pause();
            sc_core::wait(graph_resume_);
        };
        // A predicate that holds, or none (the task is ready: its producer wrote the element).
        auto predicate_holds = [&](const rt::DispatchTask& task) {
            if (task.predicate_op == 0) return true;
            int64_t v = 0;
            gm_read(task.predicate_gm, &v, task.predicate_elem_size);
            const unsigned bits = 8 * task.predicate_elem_size;
            if (bits < 64) v = static_cast<int64_t>(static_cast<uint64_t>(v) << (64 - bits)) >> (64 - bits);
            switch (static_cast<rt::PredicateOp>(task.predicate_op)) {
                case rt::PredicateOp::EQ: return v == task.predicate_target;
                case rt::PredicateOp::NE: return v != task.predicate_target;
                case rt::PredicateOp::GT: return v > task.predicate_target;
                case rt::PredicateOp::LT: return v < task.predicate_target;
                case rt::PredicateOp::GE: return v >= task.predicate_target;
                case rt::PredicateOp::LE: return v <= task.predicate_target;
                case rt::PredicateOp::NONE: break;
            }
            return true;
        };

        auto complete_task = [&](uint32_t t) {
            if (g.observe && !result.tasks[t].cores.empty()) g.observe(t, true);
            graph_->tasks[t].reset();  // nothing reads a completed task's record again (#49)
            result.tasks[t].end_ps = now();
            last = std::max(last, now());
            ++completed;
            graph_end_ps_[t] = now();
            for (uint32_t c : consumers[t]) {
                if (--waiting[c] != 0) continue;
                early_candidates.erase(c);
                if (staged.count(c)) {
                    rung.push_back(c);
                } else if (c < released) {
                    ready.insert(c);
                }
            }
            std::vector<uint32_t>().swap(consumers[t]);
        };
        auto latch = [&](int32_t code, uint32_t t, const std::string& why) {
            if (result.error_code) return;
            result.error_code = code;
            result.error = "scheduler error " + std::to_string(code) + " (" + rt::runtime_error_name(code) + ") in " +
                           g.tasks[t]->name + ": " + why;
            failed = true;
        };
        auto block_done = [&](uint32_t t) {
            if (--blocks_left[t] == 0) complete_task(t);
        };
        auto gm_of = [&](uint64_t device_pointer, uint64_t bytes) -> uint64_t {
            const uint64_t gm = device_pointer - reinterpret_cast<uintptr_t>(soc_.gm.store().host_base());
            return gm < soc_.gm.store().capacity() && bytes <= soc_.gm.store().capacity() - gm ? gm : ~uint64_t{0};
        };
        // A finished block's slab: an error, conditions to wait for, or nothing.
        auto read_slab = [&](uint32_t t, uint32_t b) {
            const uint64_t slab = b < g.tasks[t]->slabs.size() ? g.tasks[t]->slabs[b] : 0;
            if (!slab) return block_done(t);
            uint32_t head[2] = {0, 0};
            gm_read(slab, head, 8);
            const auto error = static_cast<int32_t>(head[1]);
            std::vector<rt::DeferredCompletionEntry> entries;
            if (!error && head[0] <= rt::MAX_COMPLETIONS_PER_TASK) {
                entries.resize(head[0]);
                gm_read(slab + offsetof(rt::DeferredCompletionSlab, entries), entries.data(),
                        entries.size() * sizeof(rt::DeferredCompletionEntry));
            }
            // Read once: a slab its kernel wrote goes back to the host. One left as
            // add_task zeroed it (no condition, no error: every kernel that registers
            // nothing) was only read: on a fresh die the host's shared zero page, no
            // memory (GM reused from an earlier run keeps what it held). No madvise then.
            if (head[0] || head[1]) gm_release(slab, sizeof(rt::DeferredCompletionSlab));
            if (error) {
                latch(error, t, "the kernel wrote it into its completion slab");
            } else if (head[0] > rt::MAX_COMPLETIONS_PER_TASK) {
                latch(rt::PTO2_ERROR_ASYNC_REGISTRATION_FAILED, t, std::to_string(head[0]) + " conditions in the slab");
            } else if (!entries.empty()) {
                deferred[{t, b}] = std::move(entries);
                return;
            }
            block_done(t);
        };
        // One condition: 1 met, 0 not yet, -1 malformed (`why` says how). A
        // COUNTER is met when *(u32*)addr >= expected, an SDMA_EVENT_RECORD when
        // *(u64*)record >= its post id.
        auto condition = [&](const rt::DeferredCompletionEntry& e, std::string* why) -> int {
            const bool counter = e.completion_type == rt::COMPLETION_TYPE_COUNTER;
            if (!counter && e.completion_type != rt::COMPLETION_TYPE_SDMA_EVENT_RECORD) {
                *why = "a condition of unknown type " + std::to_string(e.completion_type);
                return -1;
            }
            const uint64_t width = counter ? 4 : 8, target = counter ? e.expected_value : e.backend_cookie;
            const uint64_t gm = gm_of(e.addr, width);
            if (!e.addr || gm == ~uint64_t{0} || (!counter && !target)) {
                *why = counter ? "a COUNTER condition at an address outside GM"
                               : "an SDMA_EVENT_RECORD condition with address 0, post id 0 or a record outside GM";
                return -1;
            }
            uint64_t value = 0;
            gm_read(gm, &value, width);
            return value >= target ? 1 : 0;
        };
        // Completes the deferred blocks all of whose conditions are met.
        auto poll_deferred = [&] {
            for (auto it = deferred.begin(); it != deferred.end();) {
                const uint32_t t = it->first.first;
                bool all = true, bad = false;
                std::string why;
                for (const rt::DeferredCompletionEntry& e : it->second) {
                    const int state = condition(e, &why);
                    bad = state < 0;
                    if (bad) break;
                    all &= state == 1;
                }
                if (bad) latch(rt::PTO2_ERROR_ASYNC_COMPLETION_INVALID, t, why);
                if (bad || all) {
                    it = deferred.erase(it);
                    block_done(t);
                } else {
                    ++it;
                }
            }
        };
        // The first tasks that have not completed, by name.
        auto pending = [&] {
            std::string names;
            size_t named = 0;
            for (size_t i = blocks_left.first(); i < n && named < 8; ++i) {
                if (!result.tasks[i].ran || blocks_left[i] > 0) {
                    names += (names.empty() ? "" : ", ") + g.tasks[i]->name;
                    ++named;
                }
            }
            return names;
        };
        auto release = [&](uint32_t t) {
            if (waiting[t] == 0) ready.insert(t);
        };
        // Starts block b of task t, sent at `sent`, on the given cores (slot ->
        // core), `delay` from now.
        auto start_block = [&](uint32_t t, uint32_t b, const std::vector<std::pair<int, Core*>>& cores, Tick sent,
                               Tick delay) {
            const rt::DispatchTask& task = *g.tasks[t];
            rt::TaskRun& run = result.tasks[t];
            if (!run.ran) {
                if (g.observe) g.observe(t, false);
                run.ran = true;
                run.start_ps = now() + delay;
                first = std::min(first, run.start_ps);
            }
            for (const auto& [slot, core] : cores) {
                int64_t* args = task.args[3 * b + static_cast<uint32_t>(slot)];
                args[rt::kGlobalContextSlot] = g.global_context[core->core_id()];
                const rt::CorePlace place = core_place(core->core_id());
                core->set_task_label(task.name + " block " + std::to_string(b));
                std::vector<Core::ArgBuffer> buffers;
                for (const rt::DispatchTask::TensorBuffer& t : task.tensor_buffers) buffers.push_back({t.arg, t.pointer, t.bytes});
                core->set_task_buffers(std::move(buffers));
                core->start(task.entry[slot], args, place.block_idx, clusters, place.subblock, delay);
                core_task[core->core_id()] = t;
                core_block[core->core_id()] = b;
                ++block_cores[{t, b}];
                run.cores.push_back(core->core_id());
                core_span[core->core_id()] = run.spans.size();
                core_stats[core->core_id()] = core->stats();
                run.spans.push_back({core->core_id(), b, static_cast<uint32_t>(slot), sent, now() + delay, 0, 0, {}});
            }
        };
        // An early-resolve task whose blocks are all dispatched: its consumers may be staged.
        auto all_dispatched = [&](uint32_t t) {
            if (!g.tasks[t]->early_resolve || next_block[t] < g.tasks[t]->blocks) return;
            for (uint32_t c : consumers[t]) {
                if (waiting[c] > 0) early_candidates.insert(c);
            }
        };
        // Starts the next block of task t on the given cores.
        auto dispatch = [&](uint32_t t, const std::vector<std::pair<int, Core*>>& cores) {
            start_block(t, next_block[t]++, cores, now(), g.dispatch_ps);
            all_dispatched(t);
        };
        // Sends the next block of task t to the given cores until its doorbell:
        // an idle core it holds, a busy one's pending slot.
        auto stage = [&](uint32_t t, const std::vector<std::pair<int, Core*>>& cores) {
            StagedBlock block{next_block[t]++, cores};
            for (const auto& sc : cores) {
                const uint32_t id = sc.second->core_id();
                const bool busy = core_task[id] >= 0;
                (busy ? core_pending : core_staged)[id] = t;
                block.pending += busy;
            }
            staged[t].blocks.push_back(std::move(block));
            result.tasks[t].early = true;
            result.tasks[t].early_ps = now();
            all_dispatched(t);
        };
        // Starts what of staged task t can start once its doorbell rang: each
        // block none of whose cores is still in a pending slot, `doorbell_ps`
        // after the doorbell or its core's block ending, whichever is later (now);
        // a sync-start cohort only when all are out, together, `doorbell_ps`
        // after the scheduler took the last of those blocks' completions (its
        // rendezvous). After a failure nothing starts.
        auto launch_staged = [&](uint32_t t) {
            const auto it = staged.find(t);
            if (it == staged.end() || it->second.rung == kNoTime) return;
            Staged& s = it->second;
            const bool cohort = g.tasks[t]->sync_start;
            Tick rendezvous = s.rung;
            bool all_out = true;
            for (const StagedBlock& b : s.blocks) {
                all_out &= b.pending == 0;
                if (b.promoted != kNoTime) rendezvous = std::max(rendezvous, b.promoted + g.completion_ps);
            }
            if (cohort && !all_out && !failed) return;
            bool left = false;
            for (StagedBlock& b : s.blocks) {
                if (b.started || b.pending > 0) {
                    left |= !b.started;
                    continue;
                }
                for (const auto& sc : b.cores) core_staged[sc.second->core_id()] = -1;
                b.started = true;
                const Tick at = cohort ? rendezvous : now();
                if (!failed) start_block(t, b.block, b.cores, result.tasks[t].early_ps, at - now() + g.doorbell_ps);
            }
            if (!left) staged.erase(it);
        };
        // "task block b on core (source)" for the kernel `core` runs.
        auto running_kernel = [&](const Core& core) {
            const rt::DispatchTask& task = *g.tasks[static_cast<size_t>(core_task[core.core_id()])];
            int slot = 0;  // which of the task's kernels this core runs
            if (core.core_kind() == CoreKind::Aiv) {
                slot = task.entry[1] && task.entry[2] ? 1 + static_cast<int>(core.subblock_idx()) : (task.entry[1] ? 1 : 2);
            }
            return task.name + " block " + std::to_string(core_block[core.core_id()]) + " on " + core.name() + " (" +
                   (task.source[slot] ? *task.source[slot] : std::string("?")) + ")";
        };
        const uint32_t threads = std::max<uint32_t>(g.scheduler_threads, 1);
        // Cores for one block of `task` in the clusters scheduler thread `owner`
        // owns (-1: any), or empty: free cores, or with `pending` (early staging)
        // cores each free or busy with its pending slot free, at least one of
        // those the task uses busy (a mixed task's cluster: all three).
        auto find_cores = [&](const rt::DispatchTask& task, int owner = -1, bool pending = false) {
            std::vector<std::pair<int, Core*>> cores;
            auto free = [&](const Core& c) {
                const uint32_t id = c.core_id();
                return core_task[id] < 0 && core_staged[id] < 0 && !held[id];
            };
            auto pending_free = [&](const Core& c) {
                const uint32_t id = c.core_id();
                return pending && core_task[id] >= 0 && core_pending[id] < 0 && !held[id];
            };
            auto owned = [&](uint32_t cluster) { return owner < 0 || cluster % threads == static_cast<uint32_t>(owner); };
            auto fits = [&](const Core& c) { return pending ? pending_free(c) : free(c); };
            if (task.shape == rt::TaskShape::Aiv) {
                for (uint32_t v = 0; v < aiv_.size(); ++v) {
                    if (owned(v / 2) && fits(*aiv_[v])) return std::vector<std::pair<int, Core*>>{{1, aiv_[v].get()}};
                }
            } else if (task.shape == rt::TaskShape::Aic) {
                for (uint32_t c = 0; c < clusters; ++c) {
                    if (owned(c) && fits(*aic_[c])) return std::vector<std::pair<int, Core*>>{{0, aic_[c].get()}};
                }
            } else if (task.shape == rt::TaskShape::Mix) {
                for (uint32_t c = 0; c < clusters; ++c) {
                    Core* const cluster[3] = {aic_[c].get(), aiv_[2 * c].get(), aiv_[2 * c + 1].get()};
                    bool slots = owned(c), busy = false;
                    for (int slot = 0; slot < 3; ++slot) {
                        slots &= free(*cluster[slot]) || pending_free(*cluster[slot]);
                        busy |= task.entry[slot] && pending_free(*cluster[slot]);
                    }
                    if (slots && busy == pending) {
                        for (int slot = 0; slot < 3; ++slot) {
                            if (task.entry[slot]) cores.push_back({slot, cluster[slot]});
                        }
                        return cores;
                    }
                }
            }
            return cores;
        };

        // Cores for every block of a sync-start `task` at once (one list per
        // block) in the clusters of scheduler thread `owner` (-1: any): free
        // ones, then, with `pending` (early staging), busy cores' pending slots;
        // empty when there are not enough.
        auto find_cohort = [&](uint32_t t, int owner, bool pending = false) {
            std::vector<std::vector<std::pair<int, Core*>>> blocks;
            for (bool busy : {false, true}) {
                while (blocks.size() < g.tasks[t]->blocks && (!busy || pending)) {
                    auto cores = find_cores(*g.tasks[t], owner, busy);
                    if (cores.empty()) break;
                    for (const auto& sc : cores) held[sc.second->core_id()] = 1;
                    blocks.push_back(std::move(cores));
                }
            }
            for (const auto& cores : blocks) {
                for (const auto& sc : cores) held[sc.second->core_id()] = 0;
            }
            if (blocks.size() < g.tasks[t]->blocks) blocks.clear();
            return blocks;
        };

        for (;;) {
            grow();
            retire();
            if (g.submissions_done && completed == n) break;
            // Submissions that have reached the scheduler by now.
            while (released < n && t0 + g.tasks[released]->release_ps <= now()) release(static_cast<uint32_t>(released++));
            // Blocks whose completion latency has passed, and deferred ones whose conditions are met.
            while (!completions.empty() && completions.begin()->first <= now()) {
                const auto [t, b] = completions.begin()->second;
                completions.erase(completions.begin());
                for (rt::TaskRun::CoreSpan& s : result.tasks[t].spans) {
                    if (s.block == b) s.finish_ps = now();
                }
                read_slab(t, b);
            }
            poll_deferred();
            // Dummy tasks complete as soon as they are ready, and so do tasks
            // whose predicate is false, without a core.
            for (auto it = ready.begin(); it != ready.end();) {
                const rt::DispatchTask& task = *g.tasks[*it];
                const bool skip = !failed && next_block[*it] == 0 && !predicate_holds(task);
                if (task.shape == rt::TaskShape::Dummy || skip) {
                    const uint32_t t = *it;
                    it = ready.erase(it);
                    result.tasks[t].ran = true;
                    result.tasks[t].skipped = skip;
                    result.tasks[t].start_ps = now();
                    complete_task(t);
                } else {
                    ++it;
                }
            }
            // Doorbells (a staged task's last producer completed), and staged
            // blocks that left their cores' pending slots: what can start does.
            for (uint32_t t : rung) {
                staged[t].rung = now();
                launch_staged(t);
                if (next_block[t] < g.tasks[t]->blocks) ready.insert(t);  // blocks no core took
            }
            for (uint32_t t : promoted) launch_staged(t);
            rung.clear();
            promoted.clear();
            bool draining = false;  // a ready cohort waits for cores: nothing else goes
            if (!failed) {
                for (auto it = ready.begin(); it != ready.end() && !draining;) {
                    const uint32_t t = *it;
                    if (!g.tasks[t]->sync_start) {
                        ++it;
                        continue;
                    }
                    std::vector<std::vector<std::pair<int, Core*>>> cohort;
                    for (uint32_t owner = 0; owner < threads && cohort.empty() && !result.tasks[t].drained; ++owner) {
                        cohort = find_cohort(t, static_cast<int>(owner));
                    }
                    if (cohort.empty()) {  // the global drain
                        if (!result.tasks[t].drained) {
                            result.tasks[t].drained = true;
                            result.tasks[t].drain_ps = now();
                        }
                        cohort = find_cohort(t, -1);
                    }
                    draining = cohort.empty();
                    for (const auto& cores : cohort) dispatch(t, cores);
                    it = draining ? it : ready.erase(it);
                }
            }
            if (!failed && !draining) {
                for (auto it = ready.begin(); it != ready.end();) {
                    const uint32_t t = *it;
                    const rt::DispatchTask& task = *g.tasks[t];
                    while (next_block[t] < task.blocks) {
                        const auto cores = find_cores(task);
                        if (cores.empty()) break;
                        dispatch(t, cores);
                    }
                    it = next_block[t] == task.blocks ? ready.erase(it) : std::next(it);
                }
            }
            // Early staging, only with nothing ready: a consumer whose producers
            // still to complete are all early-resolve and fully dispatched.
            for (auto it = early_candidates.begin(); !failed && ready.empty() && it != early_candidates.end();) {
                const uint32_t c = *it;
                const rt::DispatchTask& task = *g.tasks[c];
                if (c >= released) {  // not at the scheduler yet
                    ++it;
                    continue;
                }
                bool stageable = task.predicate_op == 0 && task.shape != rt::TaskShape::Dummy && !result.tasks[c].early;
                for (uint32_t d : task.deps) {
                    stageable &= graph_done(d) || (g.tasks[d]->early_resolve && next_block[d] == g.tasks[d]->blocks);
                }
                if (!stageable) {  // another producer's full dispatch looks again
                    it = early_candidates.erase(it);
                    continue;
                }
                if (task.sync_start) {
                    std::vector<std::vector<std::pair<int, Core*>>> cohort;
                    for (uint32_t owner = 0; owner < threads && cohort.empty(); ++owner) {
                        cohort = find_cohort(c, static_cast<int>(owner), true);
                    }
                    for (const auto& cores : cohort) stage(c, cores);
                    if (cohort.empty() && !unstaged_warned) {
                        unstaged_warned = true;
                        result.warnings.push_back(
                            "set_allow_early_resolve: " + task.name + " (a sync-start consumer of " +
                            std::to_string(task.blocks) + " blocks) fits no one scheduler thread's idle cores and " +
                            "pending slots; the board stages it early through the global drain, pfsim does not: " +
                            "it goes out once ready, up to about orch.dispatch_latency later than the board's");
                    }
                } else {
                    for (bool busy : {false, true}) {  // idle cores, then busy ones' pending slots
                        while (next_block[c] < task.blocks) {
                            const auto cores = find_cores(task, -1, busy);
                            if (cores.empty()) break;
                            stage(c, cores);
                        }
                    }
                }
                it = result.tasks[c].early ? early_candidates.erase(it) : std::next(it);  // none free: later
            }
            if (g.submissions_done && completed == n) break;
            // Before anything else: an orchestration polling GM gets the simulation back each time.
            if (now() - t0 >= g.time_limit_ps) {
                result.stuck = "the graph did not finish within orch.time_limit; still pending: " +
                               std::to_string(n - completed) + " tasks: " + pending() +
                               (g.submissions_done ? "" : " (the orchestration has not returned)");
                // Each kernel in a wait, named with what it waits for; then the first of the others.
                std::string others;
                size_t listed = 0, unlisted = 0;
                for (auto* group : {&aic_, &aiv_}) {
                    for (auto& core : *group) {
                        if (core_task[core->core_id()] < 0) continue;
                        const std::string at = core->waiting_at();
                        const std::string in = core->waiting_on().empty() ? core->in_flag_wait() : core->waiting_on();
                        if (!in.empty()) {
                            result.stuck += "; " + running_kernel(*core) + (at.empty() ? "" : " at " + at) + " in " + in;
                        } else if (listed++ < 8) {
                            others += (others.empty() ? "" : ", ") + running_kernel(*core);
                        } else {
                            ++unlisted;
                        }
                    }
                }
                if (!others.empty()) {
                    result.stuck += "; still running: " + others +
                                    (unlisted ? " and " + std::to_string(unlisted) + " more" : "");
                }
                for (auto* group : {&aic_, &aiv_}) {
                    for (auto& core : *group) {
                        if (core_task[core->core_id()] >= 0) core->request_stop("the graph reached orch.time_limit");
                    }
                }
                break;
            }
            // The orchestration waits for a task or for its clock: give it the simulation back.
            if (graph_done(pause_task_) ||
                (pause_at_ps_ != kNoTime && now() >= t0 + pause_at_ps_)) {
                yield_to_host();
                continue;
            }
            // Only the orchestration can add work while it still submits.
            const bool open = !g.submissions_done && !failed;
            const bool running = std::any_of(core_task.begin(), core_task.end(), [](int64_t t) { return t >= 0; });
            Tick wake = ~Tick{0};
            if (released < n && !failed) wake = t0 + g.tasks[released]->release_ps;
            if (pause_at_ps_ != kNoTime) wake = std::min(wake, t0 + pause_at_ps_);
            if (!completions.empty()) wake = std::min(wake, completions.begin()->first);
            if (!deferred.empty()) wake = std::min(wake, now() + std::max<Tick>(g.poll_ps, 1));
            if (!running && wake == ~Tick{0} && open) {
                yield_to_host();
                continue;
            }
            if (!running && wake == ~Tick{0}) {
                if (!failed) {
                    result.stuck = std::to_string(n - completed) + " tasks can never run (a dependency cycle or a wait " +
                                   "nobody satisfies): " + pending();
                }
                break;
            }
            // Only running kernels set cross-core flags: when each of them waits
            // for one no set is on its way to, none ever will be.
            std::string deadlocked;
            bool all_blocked = running && completions.empty() && deferred.empty() && (released == n || failed) &&
                               pause_at_ps_ == kNoTime;
            for (auto* group : {&aic_, &aiv_}) {
                for (auto& core : *group) {
                    if (!all_blocked || core_task[core->core_id()] < 0) continue;
                    all_blocked = !core->blocked_on().empty();
                    deadlocked += (deadlocked.empty() ? "" : "; ") + running_kernel(*core) + " in " + core->blocked_on();
                }
            }
            if (all_blocked && open) {
                yield_to_host();
                continue;
            }
            if (all_blocked) {
                result.stuck = "deadlock: every running kernel waits for a cross-core flag no core will set: " + deadlocked;
                for (auto* group : {&aic_, &aiv_}) {
                    for (auto& core : *group) {
                        if (core_task[core->core_id()] >= 0) core->request_stop("deadlock on cross-core flags");
                    }
                }
                break;
            }
            const Tick limit = t0 + g.time_limit_ps;
            wake = std::min(wake, limit);
            sc_core::wait(to_sc(wake - now()), core_changed);
            // Cores that finished, of those that notified since the last look, in core id
            // order: their blocks count as done after the completion latency.
            for (size_t word = 0; word < changed_cores_.size(); ++word) {
                for (uint64_t bits = std::exchange(changed_cores_[word], 0); bits; bits &= bits - 1) {
                    const auto id = static_cast<uint32_t>(64 * word + __builtin_ctzll(bits));
                    Core* const core = id < clusters ? aic_[id].get() : aiv_[id - clusters].get();
                    const int64_t t = core_task[core->core_id()];
                    if (t < 0 || core->running() || !core->last_run().ran) continue;  // idle, or not started yet
                    const CoreRun& r = core->last_run();
                    rt::TaskRun& run = result.tasks[static_cast<size_t>(t)];
                    if (!r.error.empty() && run.error.empty()) {
                        run.error = running_kernel(*core) + ": " + r.error;
                        failed = true;
                    }
                    result.user_fault |= r.fatal;
                    if (r.fatal) {  // what the user's code left behind is not simulated on
                        for (auto* others : {&aic_, &aiv_}) {
                            for (auto& other : *others) {
                                if (core_task[other->core_id()] >= 0 && other.get() != core) {
                                    other->request_stop("the run ends: a kernel on " + std::string(core->name()) + " failed");
                                }
                            }
                        }
                    }
                    core_task[core->core_id()] = -1;
                    if (core_pending[core->core_id()] >= 0) {  // its pending staged block enters the running slot
                        const auto p = static_cast<uint32_t>(core_pending[core->core_id()]);
                        core_pending[core->core_id()] = -1;
                        core_staged[core->core_id()] = p;
                        for (StagedBlock& b : staged[p].blocks) {
                            for (const auto& sc : b.cores) {
                                if (sc.second == core && --b.pending == 0) b.promoted = now();
                            }
                        }
                        promoted.push_back(p);
                    }
                    rt::TaskRun::CoreSpan& span = run.spans[core_span[core->core_id()]];
                    span.start_ps = r.entered;
                    span.end_ps = r.returned;
                    const CoreStats& was = core_stats[core->core_id()];
                    const CoreStats& is = core->stats();
                    const uint64_t busy[5] = {is.scalar - was.scalar, is.mte2 - was.mte2, is.mte3 - was.mte3,
                                              is.vector - was.vector, is.cube - was.cube};
                    std::copy(busy, busy + 5, span.busy_ps);
                    for (const std::string& v : r.violations) result.violations.push_back(v);
                    // A mixed block is done when all its cores are.
                    const uint32_t b = core_block[core->core_id()];
                    const auto cores_left = block_cores.find({static_cast<uint32_t>(t), b});
                    if (--cores_left->second == 0) {
                        block_cores.erase(cores_left);
                        completions.emplace(now() + g.completion_ps, std::make_pair(static_cast<uint32_t>(t), b));
                    }
                }
            }
        }
        result.graph_time_ps = first == ~Tick{0} ? 0 : (last > first ? last - first : 0);
        graph_active_ = false;
    }
}

}  // namespace pfsim
