#include "session/run_ranks.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "base/user_code.h"
#include "include/platform_comm/comm_context.h"
#include "insight/comm_rings.h"
#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "session/case_runner.h"
#include "session/graph_result.h"
#include "session/summary.h"

namespace pfsim::api {

namespace {

template <class Stats>
Stats stats_sum(const Stats& a, const Stats& b) {
    Stats s;
    for (const StatField<Stats>& f : Stats::fields()) {
        if (f.member) s.*f.member = a.*f.member + b.*f.member;
    }
    return s;
}

// Every die's counters since `before`, summed (formulas over the sums).
void sum_counters(RunResult& result, SimDies& dies, const std::vector<PlatformStats>& before) {
    Soc::Stats soc;
    CoreStats cores;
    for (uint32_t r = 0; r < dies.count(); ++r) {
        const PlatformStats after = platform_stats(dies.die(r));
        const Soc::Stats d = stats_delta(after.soc, before[r].soc);
        soc = {stats_sum(soc.gm, d.gm), stats_sum(soc.l2, d.l2), stats_sum(soc.sdma, d.sdma)};
        cores = stats_sum(cores, stats_delta(after.cores, before[r].cores));
    }
    result.counters = dies.die(0).soc().stats_json(soc);  // its `channels`: rank 0's
    result.counters["cores"] = pfsim::stats_json(cores);
    result.lanes = lanes_json(cores);
}

// "kernel_combine.cpp, task 3 (aiv, func 3) block 0 on rank0.aiv0": a task
// label of the call log with the source of its kernel (its func_id's incore).
std::string with_kernel(const std::string& task, const CallableSpec& spec) {
    const size_t func = task.find("func ");
    if (func == std::string::npos) return task;
    const int32_t id = std::atoi(task.c_str() + func + 5);
    for (const IncoreSpec& k : spec.incores) {
        if (k.func_id == id) return std::filesystem::path(k.source).filename().string() + ", " + task;
    }
    return task;
}

}  // namespace

void advise_comm(RunResult& result, const std::vector<insight::CommRingLog::PrefetchSite>& sites,
                 const CallableSpec& spec, double wait_ns, uint32_t ranks) {
    result.advised = true;
    result.advisor.ranks = ranks;
    if (wait_ns <= 0) return;
    for (const insight::CommRingLog::PrefetchSite& s : sites) {
        if (s.copies_behind.empty()) continue;
        std::string copies;
        for (const insight::CommRingLog::CopyPost& c : s.copies_behind) {
            copies += (copies.empty() ? "" : "; ") + c.instruction + " at " + (c.site.where.empty() ? "?" : c.site.where) +
                      " (" + with_kernel(c.site.task + " on " + c.site.core, spec) + ")";
        }
        std::string tasks;
        for (const std::string& t : s.tasks) tasks += (tasks.empty() ? "" : "; ") + with_kernel(t, spec);
        insight::Advice a;
        a.where = s.where;
        a.verdict = "delays_comm";
        char head[160];
        std::snprintf(head, sizeof head, "its %llu posts (%.2f MiB) stood in an SDMA ring ahead of ",
                      static_cast<unsigned long long>(s.posts), static_cast<double>(s.bytes) / (1 << 20));
        a.message = "TPREFETCH_ASYNC from " + tasks + ": " + head + std::to_string(s.copies_behind.size()) +
                    (s.copies_behind.size() == 1 ? " copy" : " copies") + " between dies (" + copies +
                    "), which wait for it there: post it from a core of another cluster (another channel group), or after them";
        a.comm_wait_ns = wait_ns;
        result.advisor.advice.push_back(std::move(a));
    }
}

std::string rank_trace_file(const std::string& path, uint32_t r) {
    const std::string rank = ".rank" + std::to_string(r);
    const size_t dot = path.rfind('.');
    const size_t slash = path.rfind('/');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + rank;
    return path.substr(0, dot) + rank + path.substr(dot);
}

void begin_ranks_result(const RunRequest& request, const CaseSpec& spec, RunResult& result) {
    const std::string level3 = ": not yet for a level-3 case (" + spec.name + ", ranks = " + std::to_string(spec.ranks) + ")";
    // Artifacts a check of every case asks for too: warned about, the run goes on.
    if (!request.waves.empty()) result.warnings.push_back("--waves" + level3 + ": no waves written");
    if (request.sanitize) throw BadInput("--sanitize" + level3);
    if (!request.faults.empty()) throw BadInput("--inject" + level3);
    if (!request.outputs_dir.empty()) throw BadInput("--outputs" + level3);
    result.ranks = spec.ranks;
}

RunResult run_ranks(const Config& cfg, const RunRequest& request, const CaseSpec& spec, RunResult result,
                    const DieRun& die_run) {
    begin_ranks_result(request, spec, result);
    SimDies dies(cfg, spec.ranks, "rank");
    if (request.progress) {  // the dies share one simulated time: rank 0's sampler speaks for the run
        dies.die(0).sampler().report_progress([&request](Tick ps) { request.progress(static_cast<double>(ps) / 1e3); },
                                              std::chrono::milliseconds(request.progress_ms));
    }
    const rt::WorkerOptions wo = worker_options(cfg, request.enable_sdma && spec.enable_sdma, request.prefetch,
                                                request.warmup, false);
    try {
        std::vector<std::unique_ptr<rt::Worker>> workers;
        std::vector<rt::Worker*> by_rank;
        for (uint32_t r = 0; r < dies.count(); ++r) {
            workers.push_back(std::make_unique<rt::Worker>(dies.die(r), wo));
            by_rank.push_back(workers.back().get());
        }
        if (workers[0]->warmup().ran) result.warmup = workers[0]->warmup().summary();
        KernelCompiler compiler;
        run_case_on_dies(cfg, die_run, request, spec, dies, by_rank, compiler, result);
    } catch (...) {
        report_refusal(result);
    }
    result.sim_time_total_ns = static_cast<double>(dies.die(0).now_ps()) / 1e3;
    return result;
}

void run_case_on_dies(const Config& cfg, const DieRun& die_run, const RunRequest& request, const CaseSpec& spec,
                      SimDies& dies, const std::vector<rt::Worker*>& workers, KernelCompiler& compiler,
                      RunResult& result) {
    // Each rank's window (zeroed) and CommContext, in its own GM; given back (GM is a stack) when the run ends.
    struct Windows {
        SimDies& dies;
        std::vector<uint64_t> gm;
        ~Windows() {
            for (uint32_t r = 0; r < gm.size(); ++r) {
                dies.die(r).gm_free(gm[r]);
                dies.drop_comm_windows(r, gm[r]);
            }
        }
    } windows{dies, {}};
    for (uint32_t r = 0; r < dies.count(); ++r) {
        SimPlatform& die = dies.die(r);
        const uint64_t window = die.gm_alloc(spec.window_bytes);
        windows.gm.push_back(window);
        const std::vector<uint8_t> zeros(spec.window_bytes, 0);
        die.gm_write(window, zeros.data(), zeros.size());
        dies.add_comm_window(r, window, spec.window_bytes);
    }
    std::vector<CaseRank> ranks;
    std::vector<RankDie> on;
    for (uint32_t r = 0; r < dies.count(); ++r) {
        CommContext c{};
        c.rankId = r;
        c.rankNum = dies.count();
        c.winSize = spec.window_bytes;
        for (uint32_t k = 0; k < dies.count(); ++k) c.windowsIn[k] = dies.device_pointer(k, windows.gm[k]);
        const uint64_t gm = dies.die(r).gm_alloc(sizeof c);
        dies.die(r).gm_write(gm, &c, sizeof c);
        ranks.push_back({&dies.die(r), workers[r], dies.device_pointer(r, gm)});
        // --trace FILE: one trace per die, FILE with ".rankR" before its extension.
        on.push_back({r, workers[r], &spec, request.trace.empty() ? "" : rank_trace_file(request.trace, r)});
    }
    const uint64_t heap_bytes = cfg.bytes("orch.heap_bytes");
    const RanksWork work = [&](const std::function<std::vector<rt::GraphResult>()>& run_graphs,
                               std::vector<RunResult>& results) {
        std::vector<CaseResult> done = run_case_ranks(spec, ranks, compiler, heap_bytes, run_graphs);
        std::vector<CallResult> calls;
        for (uint32_t r = 0; r < done.size(); ++r) {
            for (const CaseOutput& out : done[r].outputs) {
                results[r].reference_equal &= out.golden_equal;
                results[r].outputs.push_back(output_result(out, "rank" + std::to_string(r) + "." + out.name));
            }
            calls.push_back(std::move(done[r]));
        }
        return calls;
    };
    DiesRun run;
    die_run.run_on_dies(cfg, dies, on, work, run, result.user_stdout);
    uint64_t first = ~uint64_t{0}, last = 0;
    for (uint32_t r = 0; r < dies.count(); ++r) {
        const std::string rank = "rank " + std::to_string(r) + ": ";
        RunResult& one = run.results[r];
        const uint32_t base = static_cast<uint32_t>(result.tasks.size());
        result.task_count += one.task_count;
        for (TaskResult& t : one.tasks) {
            t.name = rank + t.name;
            for (uint32_t& d : t.deps) d += base;
            result.tasks.push_back(std::move(t));
        }
        for (const std::string& l : one.log) result.log.push_back(rank + l);
        for (const std::string& v : one.violations) result.violations.push_back(rank + v);
        for (const std::string& w : one.warnings) result.warnings.push_back(rank + w);
        if (result.error.empty() && !one.error.empty()) result.error = rank + one.error;
        result.user_fault |= one.user_fault;
        result.reference_equal &= one.reference_equal;
        for (OutputResult& out : one.outputs) result.outputs.push_back(std::move(out));
        for (const rt::TaskRun& t : run.calls[r].graph.tasks) {
            if (!t.ran || t.cores.empty()) continue;
            first = std::min(first, t.start_ps);
            last = std::max(last, t.end_ps);
        }
    }
    result.ran = true;
    sum_counters(result, dies, run.before);
    const uint64_t time_ps = last > first ? last - first : 0;
    result.kernel_time_ns = static_cast<double>(time_ps) / 1e3;
    result.cycles = static_cast<uint64_t>(static_cast<double>(time_ps) * 1e-12 * cfg.frequency("chip.clock") + 0.5);
    result.series = series_json(dies.die(0).sampler());
    if (request.advise) {  // the run's communication advice, as each die's result holds it
        result.advised = true;
        result.advisor = run.results[0].advisor;
    }
    std::vector<SimPlatform*> all;
    for (uint32_t r = 0; r < dies.count(); ++r) all.push_back(&dies.die(r));
    die_run.warn_unused_sites(all, result);
}

}  // namespace pfsim::api
