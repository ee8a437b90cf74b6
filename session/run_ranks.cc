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
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/worker.h"

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

RunResult run_ranks(const Config& cfg, const RunRequest& request, const CaseSpec& spec, RunResult result,
                    const std::function<void(const std::vector<SimPlatform*>& dies, RunResult&)>& warn_unused_sites) {
    const std::string level3 = ": not yet for a level-3 case (" + spec.name + ", ranks = " + std::to_string(spec.ranks) + ")";
    // Artifacts a check of every case asks for too: warned about, the run goes on.
    if (!request.waves.empty()) result.warnings.push_back("--waves" + level3 + ": no waves written");
    if (request.sanitize) throw BadInput("--sanitize" + level3);
    if (!request.faults.empty()) throw BadInput("--inject" + level3);
    if (!request.outputs_dir.empty()) throw BadInput("--outputs" + level3);
    result.ranks = spec.ranks;
    SimDies dies(cfg, spec.ranks, "rank");
    for (uint32_t r = 0; r < dies.count(); ++r) {
        for (const auto* group : {&dies.die(r).vector_cores(), &dies.die(r).cube_cores()}) {
            for (const auto& core : *group) {
                core->set_warm_load_sites(request.warm_load_sites);
                core->set_around_load_sites(request.around_load_sites);
            }
        }
    }
    if (request.progress) {  // the dies share one simulated time: rank 0's sampler speaks for the run
        dies.die(0).sampler().report_progress([&request](Tick ps) { request.progress(static_cast<double>(ps) / 1e3); },
                                              std::chrono::milliseconds(request.progress_ms));
    }
    rt::WorkerOptions wo = worker_options(cfg, request.enable_sdma && spec.enable_sdma, request.prefetch,
                                          request.warmup, false);
    wo.kernel.dropped_sites = request.dropped_sites;
    wo.kernel.free_sites = request.free_sites;
    try {
        std::vector<std::unique_ptr<rt::Worker>> workers;
        for (uint32_t r = 0; r < dies.count(); ++r) workers.push_back(std::make_unique<rt::Worker>(dies.die(r), wo));
        if (workers[0]->warmup().ran) result.warmup = workers[0]->warmup().summary();
        // Each rank's window (zeroed) and CommContext, in its own GM.
        std::vector<uint64_t> windows, contexts;
        for (uint32_t r = 0; r < dies.count(); ++r) {
            SimPlatform& die = dies.die(r);
            windows.push_back(die.gm_alloc(spec.window_bytes));
            const std::vector<uint8_t> zeros(spec.window_bytes, 0);
            die.gm_write(windows.back(), zeros.data(), zeros.size());
            dies.add_comm_window(r, windows.back(), spec.window_bytes);
        }
        std::vector<CaseRank> ranks;
        for (uint32_t r = 0; r < dies.count(); ++r) {
            CommContext c{};
            c.rankId = r;
            c.rankNum = dies.count();
            c.winSize = spec.window_bytes;
            for (uint32_t k = 0; k < dies.count(); ++k) c.windowsIn[k] = dies.device_pointer(k, windows[k]);
            const uint64_t gm = dies.die(r).gm_alloc(sizeof c);
            dies.die(r).gm_write(gm, &c, sizeof c);
            ranks.push_back({&dies.die(r), workers[r].get(), dies.device_pointer(r, gm)});
        }
        KernelCompiler compiler;
        // --trace FILE: one trace per die, FILE with ".rankR" before its extension.
        DieTraces traces(dies);
        for (uint32_t r = 0; r < dies.count() && !request.trace.empty(); ++r) {
            traces.open(r, rank_trace_file(request.trace, r), cfg);
        }
        std::unique_ptr<insight::CommRingLog> rings;
        if (request.advise) rings = std::make_unique<insight::CommRingLog>(dies);
        const Tick start = dies.die(0).now_ps();
        std::vector<PlatformStats> before;
        for (uint32_t r = 0; r < dies.count(); ++r) before.push_back(platform_stats(dies.die(r)));
        std::vector<CaseResult> done;
        run_users_code(cfg, result.user_stdout, [&] {
            done = run_case_ranks(spec, ranks, compiler, cfg.bytes("orch.heap_bytes"), [&dies] { return dies.end_graphs(); });
        });
        uint64_t first = ~uint64_t{0}, last = 0;
        for (uint32_t r = 0; r < dies.count(); ++r) {
            const std::string rank = "rank " + std::to_string(r) + ": ";
            RunResult one;
            add_graph(done[r], spec, dies.die(r), one);
            const uint32_t base = static_cast<uint32_t>(result.tasks.size());
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
            for (const CaseOutput& out : done[r].outputs) {
                result.reference_equal &= out.golden_equal;
                result.outputs.push_back(output_result(out, "rank" + std::to_string(r) + "." + out.name));
            }
            for (const rt::TaskRun& t : done[r].graph.tasks) {
                if (!t.ran || t.cores.empty()) continue;
                first = std::min(first, t.start_ps);
                last = std::max(last, t.end_ps);
            }
            if (!request.trace.empty()) {
                trace_tasks(*traces.at(r), done[r], dies.die(r));
                dies.die(r).attach_trace(nullptr);
                traces.at(r)->close();  // a file that cannot be written: BadInput, below
            }
        }
        result.ran = true;
        sum_counters(result, dies, before);
        const uint64_t time_ps = last > first ? last - first : 0;
        result.kernel_time_ns = static_cast<double>(time_ps) / 1e3;
        result.cycles = static_cast<uint64_t>(static_cast<double>(time_ps) * 1e-12 * cfg.frequency("chip.clock") + 0.5);
        result.series = series_json(dies.die(0).sampler());
        if (rings) {
            advise_comm(result, rings->finish(start), spec,
                        result.counters["sdma"]["comm_prefetch_wait"].get<double>() / 1e3, spec.ranks);
        }
        std::vector<SimPlatform*> all;
        for (uint32_t r = 0; r < dies.count(); ++r) all.push_back(&dies.die(r));
        warn_unused_sites(all, result);
    } catch (...) {
        report_refusal(result);
    }
    result.sim_time_total_ns = static_cast<double>(dies.die(0).now_ps()) / 1e3;
    return result;
}

}  // namespace pfsim::api
