#include "session/graph_result.h"

#include <cstdio>
#include <filesystem>
#include <set>

#include "base/sha256.h"
#include "base/user_code.h"
#include "session/summary.h"

namespace pfsim::api {

rt::WorkerOptions worker_options(const Config& cfg, bool enable_sdma, bool prefetch, bool warmup, bool skip_wait) {
    rt::WorkerOptions wo;
    wo.enable_sdma = enable_sdma;
    // The warm-up pass exists from PTO-ISA 7ddaa823 on (prefetch-protocol.md §7).
    wo.warmup = warmup && cfg.choice("prefetch.protocol") != "2026-07";
    wo.workspace_bytes = cfg.bytes("prefetch.workspace_bytes");
    wo.warmup_blocks = static_cast<uint32_t>(cfg.count("prefetch.warmup_blocks"));
    wo.kernel.request_bytes = cfg.bytes("prefetch.request_bytes");
    wo.kernel.poll_limit = cfg.count("prefetch.poll_limit");
    wo.kernel.max_posts = cfg.count("prefetch.max_posts");
    wo.kernel.warmup_channel_ps = cfg.time("prefetch.warmup_channel_cost");
    wo.kernel.cold_doorbell_ps = cfg.time("sdma.cold_channel_cost");
    wo.kernel.prefetch_enabled = prefetch;
    wo.kernel.skip_wait = skip_wait;
    wo.scheduler.submit_ps = cfg.time("orch.submit_cost");
    wo.scheduler.dispatch_ps = cfg.time("orch.dispatch_latency");
    wo.scheduler.completion_ps = cfg.time("orch.completion_latency");
    wo.scheduler.doorbell_ps = cfg.time("orch.doorbell_latency");
    wo.scheduler.time_limit_ps = cfg.time("orch.time_limit");
    wo.scheduler.poll_ps = cfg.time("orch.poll_interval");
    wo.scheduler.tensor_data_ps = cfg.time("orch.tensor_data_cost");
    return wo;
}

rt::TeardownOptions teardown_options(const Config& cfg, uint32_t failing_resets) {
    rt::TeardownOptions t;
    t.op_timeout_ps = cfg.time("teardown.op_timeout");
    t.handoff_floor_ps = cfg.time("teardown.handoff_floor");
    t.settle_margin_ps = cfg.time("teardown.settle_margin");
    t.reset_ps = cfg.time("teardown.reset_time");
    t.reset_attempts_sdma = static_cast<uint32_t>(cfg.count("teardown.reset_attempts_sdma"));
    t.reset_attempts = static_cast<uint32_t>(cfg.count("teardown.reset_attempts"));
    t.failing_resets = failing_resets;
    return t;
}

nlohmann::json teardown_json(const rt::TeardownReport& r) {
    nlohmann::json steps = nlohmann::json::array();
    for (const rt::TeardownStep& s : r.steps) steps.push_back({{"step", s.step}, {"ns", static_cast<double>(s.time_ps) / 1e3}});
    return {{"fatal", r.fatal}, {"sdma", r.sdma}, {"reset_attempts", r.reset_attempts},
            {"reset_attempts_allowed", r.reset_attempts_allowed}, {"reset_confirmed", r.reset_confirmed},
            {"time_ns", static_cast<double>(r.time_ps) / 1e3}, {"steps", steps}};
}

void add_graph(CallResult& r, const CallableSpec& callable, const SimPlatform& platform, RunResult& result,
               bool release) {
    result.log = r.log;
    result.violations = r.graph.violations;
    result.warnings = r.graph.warnings;
    result.error = r.graph.first_error();  // before the run records go
    result.user_fault = r.graph.user_fault;
    result.task_count = r.graph.tasks.size();
    if (!r.task_records) return;  // their count only: the graph kept no task's records
    const size_t count = r.tasks.size();
    for (size_t i = 0; i < count; ++i) {
        rt::GraphTask& task = release ? r.tasks.front() : r.tasks[i];
        const rt::TaskRun& run = release ? r.graph.tasks.front() : r.graph.tasks[i];
        TaskResult t;
        t.name = task.name();
        for (uint32_t c : run.cores) {
            t.cores.push_back(platform.core(c).name());
        }
        for (int slot = 0; slot < 3; ++slot) {
            const int32_t f = task.kernel[slot];
            if (f == INVALID_KERNEL_ID) continue;
            for (const IncoreSpec& k : callable.incores) {
                if (k.func_id == f) t.kernels.push_back(std::filesystem::path(k.source).filename().string());
            }
        }
        t.blocks = task.block_num;
        t.deps = release ? std::move(task.deps) : task.deps;
        t.start_ns = static_cast<double>(run.start_ps) / 1e3;
        t.end_ns = static_cast<double>(run.end_ps) / 1e3;
        t.skipped = run.skipped;
        t.ring_id = task.ring_id;
        auto ns = [](uint64_t ps) { return static_cast<double>(ps) / 1e3; };
        t.submit_ns = ns(r.graph.start_ps + task.submit_ps);
        t.release_ns = ns(r.graph.start_ps + task.release_ps);
        t.drained = run.drained;
        t.drain_ns = ns(run.drain_ps);
        t.early = run.early;
        t.early_ns = ns(run.early_ps);
        for (const rt::TaskRun::CoreSpan& s : run.spans) {
            TaskResult::Span span{platform.core(s.core).name(), s.core, s.block, task.kernel[s.slot],
                                  ns(s.dispatch_ps), ns(s.start_ps), ns(s.end_ps), ns(s.finish_ps), {}};
            for (int p = 0; p < 5; ++p) span.busy_ns[p] = ns(s.busy_ps[p]);
            t.spans.push_back(span);
        }
        result.tasks.push_back(std::move(t));
        if (release) {
            r.tasks.pop_front();
            r.graph.tasks.pop_front();
        }
    }
}

void trace_tasks(TraceRecorder& trace, const CallResult& r, const SimPlatform& platform) {
    const int pid = trace.process("Tasks (AICPU scheduler)", 5);
    std::map<uint32_t, int> lanes;
    auto lane = [&](uint32_t core) {
        auto it = lanes.find(core);
        if (it == lanes.end()) it = lanes.emplace(core, trace.lane(pid, platform.core(core).name(), static_cast<int>(core))).first;
        return it->second;
    };
    // A dependency's flow id: kFlowBase + task * 64 + (producer % 64) for the
    // first of a task's producers with that residue (the ids traces always
    // had), a fresh one from kSpareFlowBase up for any later producer with the
    // same residue (a task with more than 64 dependencies, or two 64 apart).
    constexpr uint64_t kFlowBase = uint64_t{1} << 32;        // apart from the prefetch flows' ids
    constexpr uint64_t kSpareFlowBase = uint64_t{1} << 62;   // beyond every kFlowBase id
    uint64_t spare = kSpareFlowBase;
    for (size_t i = 0; i < r.tasks.size(); ++i) {
        const rt::TaskRun& run = r.graph.tasks[i];
        if (!run.ran || run.cores.empty()) continue;
        std::set<uint32_t> cores(run.cores.begin(), run.cores.end());
        for (uint32_t c : cores) {
            trace.slice(pid, lane(c), r.tasks[i].name(), run.start_ps, run.end_ps,
                        "\"blocks\":" + std::to_string(r.tasks[i].block_num));
        }
        uint64_t residues_used = 0;  // bit k: the id of residue k is taken for this task
        for (uint32_t d : r.tasks[i].deps) {
            const rt::TaskRun& from = r.graph.tasks[d];
            if (!from.ran || from.cores.empty()) continue;
            const uint64_t bit = uint64_t{1} << (d % 64);
            const uint64_t id = residues_used & bit ? spare++ : kFlowBase + i * 64 + (d % 64);
            residues_used |= bit;
            trace.flow(id, pid, lane(from.cores.front()), from.end_ps, pid, lane(run.cores.front()), run.start_ps);
        }
    }
}

OutputResult output_result(const CaseOutput& out, const std::string& name) {
    OutputResult o;
    o.name = name;
    o.bytes = out.data.size();
    o.sha256 = sha256_hex(out.data.data(), out.data.size());
    o.equal_reference = out.golden_equal;
    o.compared = true;
    o.max_abs_diff = out.max_abs_diff;
    o.mismatches = out.mismatches;
    o.first_mismatch = out.first_mismatch;
    return o;
}

std::vector<insight::TaskSpan> task_spans(const RunResult& result) {
    std::vector<insight::TaskSpan> spans;
    for (const TaskResult& t : result.tasks) spans.push_back({t.name, t.start_ns, t.end_ns, t.deps});
    return spans;
}

PlatformStats platform_stats(const SimPlatform& platform) {
    std::vector<const Core*> cores;
    for (const auto& c : platform.vector_cores()) cores.push_back(c.get());
    for (const auto& c : platform.cube_cores()) cores.push_back(c.get());
    return {platform.soc().stats(), core_stats_sum(cores)};
}

void finish(RunResult& result, SimPlatform& platform, const PlatformStats& before, uint64_t time_ps,
            const Config& cfg) {
    result.ran = true;
    const PlatformStats after = platform_stats(platform);
    result.counters = platform.soc().stats_json(stats_delta(after.soc, before.soc));
    const CoreStats cores = stats_delta(after.cores, before.cores);
    result.counters["cores"] = pfsim::stats_json(cores);
    result.kernel_time_ns = static_cast<double>(time_ps) / 1e3;
    result.cycles = static_cast<uint64_t>(static_cast<double>(time_ps) * 1e-12 * cfg.frequency("chip.clock") + 0.5);
    result.lanes = lanes_json(cores);
    result.series = series_json(platform.sampler());
    if (cores.prefetch_wait_timeouts > 0) {
        result.warnings.push_back(std::to_string(cores.prefetch_wait_timeouts) +
                                  " prefetch waits returned false after prefetch.poll_limit = " +
                                  std::to_string(cfg.count("prefetch.poll_limit")) +
                                  " polls: the SDMA engine never completed their posts");
    }
}

void report_refusal(RunResult& result) {
    try {
        throw;
    } catch (const rt::RuntimeError& e) {
        result.error = e.what();
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    } catch (const std::runtime_error& e) {
        throw BadInput(e.what());
    }
}

void run_users_code(const Config& cfg, std::string& user_stdout, const std::function<void()>& run) {
    user_code::StdoutCapture capture;
    const double limit_s = static_cast<double>(cfg.time("orch.host_time_limit")) / 1e12;
    char limit_text[32];
    std::snprintf(limit_text, sizeof limit_text, "%g s", limit_s);
    user_code::TimeLimit limit(limit_s, std::string("the host-time limit (orch.host_time_limit = ") + limit_text +
                                            ", or --timeout)");
    try {
        run();
    } catch (...) {
        user_stdout = capture.text();
        throw;
    }
    user_stdout = capture.text();
}

}  // namespace pfsim::api
