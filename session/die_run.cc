#include "session/die_run.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "insight/advisor.h"
#include "insight/comm_rings.h"
#include "model/trace/recorder.h"
#include "session/graph_result.h"
#include "session/npy.h"
#include "session/run_ranks.h"
#include "session/shipped_cases.h"
#include "session/summary.h"

namespace pfsim::api {

namespace {

template <typename F>
void for_each_core(SimPlatform& platform, F f) {
    for (const auto* group : {&platform.vector_cores(), &platform.cube_cores()}) {
        for (const auto& core : *group) f(*core);
    }
}

uint64_t count_of(const std::map<std::string, uint64_t>& counts, const std::string& site) {
    const auto it = counts.find(site);
    return it == counts.end() ? 0 : it->second;
}

// How many times a die used a what-if site since the run set the sites: its
// kernel side's counts (rt::KernelSide) or its cores' (Core).
using SiteUses = uint64_t (*)(SimPlatform& die, const std::string& site);

template <const std::map<std::string, uint64_t>& (Core::*counts)() const>
uint64_t core_uses(SimPlatform& die, const std::string& site) {
    uint64_t n = 0;
    for_each_core(die, [&](const Core& c) { n += count_of((c.*counts)(), site); });
    return n;
}

// The what-if site options, each with what counts its sites' uses and what an unused one lacked.
struct SiteOption {
    const char* option;
    const std::vector<std::string>* sites;
    SiteUses uses;
    const char* unused;
};

std::vector<SiteOption> site_options(const RunRequest& request) {
    return {{"--drop-prefetch", &request.dropped_sites,
             [](SimPlatform& die, const std::string& site) { return count_of(die.kernel_side().dropped_site_counts, site); },
             "no prefetch was posted"},
            {"--free-prefetch", &request.free_sites,
             [](SimPlatform& die, const std::string& site) { return count_of(die.kernel_side().free_site_counts, site); },
             "no prefetch was posted"},
            {"--warm-loads", &request.warm_load_sites, core_uses<&Core::warmed_load_counts>, "no load was made"},
            {"--bypass-loads", &request.around_load_sites, core_uses<&Core::around_load_counts>, "no load was made"}};
}

// Each core's timed passes (include/pfsim_timed_pass.h) so far: how many
// intervals it marked and the bytes they moved. A die kept across runs keeps
// its cores' passes; a run's are those after its mark.
using TimedMarks = std::vector<std::pair<size_t, uint64_t>>;

TimedMarks timed_marks(SimPlatform& platform) {
    TimedMarks marks;
    for_each_core(platform, [&](const Core& c) { marks.push_back({c.timed_passes().intervals.size(), c.timed_passes().bytes}); });
    return marks;
}

// The timed pass of calibration instruments since `marks`: the time covered by
// the union of every core's marked intervals (concurrent cores: earliest start
// to latest end; one core's disjoint passes: their sum), the bytes they moved,
// and the mean length of one marked interval (concurrent cores: what one
// core's pass took). Null when no core marked one.
nlohmann::json timed_pass_of(SimPlatform& platform, const TimedMarks& marks) {
    std::vector<std::pair<uint64_t, uint64_t>> intervals;
    uint64_t moved = 0;
    size_t i = 0;
    for_each_core(platform, [&](const Core& c) {
        const Core::TimedPasses& t = c.timed_passes();
        intervals.insert(intervals.end(), t.intervals.begin() + static_cast<std::ptrdiff_t>(marks[i].first), t.intervals.end());
        moved += t.bytes - marks[i].second;
        ++i;
    });
    if (intervals.empty()) return nullptr;
    uint64_t marked = 0;
    for (const auto& [b, e] : intervals) marked += e - b;
    const double mean_ns = static_cast<double>(marked) / static_cast<double>(intervals.size()) / 1e3;
    std::sort(intervals.begin(), intervals.end());
    uint64_t covered = 0, end = 0;
    for (const auto& [b, e] : intervals) {
        if (e <= end) continue;
        covered += e - std::max(b, end);
        end = e;
    }
    const double ns = static_cast<double>(covered) / 1e3;
    return {{"ns", ns},
            {"bytes", moved},
            {"gbps", ns > 0 ? static_cast<double>(moved) / ns : 0.0},
            {"mean_interval_ns", mean_ns}};
}

// Throws BadInput when `output` (given as `option`) is one of the run's inputs:
// an output never overwrites what the run reads.
void refuse_overwriting_an_input(const std::string& option, const std::string& output, const CaseSpec& spec) {
    const std::string input = input_named_by(output, spec.inputs());
    if (!input.empty()) throw BadInput(option + " " + output + ": is " + input + ", which the run reads; not overwritten");
}

// outputs_dir: each output tensor as DIR/NAME.npy (bfloat16 as raw uint16).
void write_outputs(const std::string& dir, const CaseSpec& spec, const CaseResult& r) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    for (const CaseOutput& out : r.outputs) {
        const TensorSpec* t = nullptr;
        for (const TensorSpec& s : spec.tensors) t = s.name == out.name ? &s : t;
        NpyArray a;
        a.descr = npy_descr(t->dtype);
        a.shape.assign(t->shape.begin(), t->shape.end());
        a.data = out.data;
        try {
            write_npy(dir + "/" + out.name + ".npy", a);
        } catch (const std::runtime_error& e) {
            throw BadInput(std::string("--outputs: ") + e.what());
        }
    }
}

std::string json_string(const std::string& s) { return nlohmann::json(s).dump(); }

// A marker in the trace at each sanitizer finding and at each advised site's
// first post (site times count from `start`).
void trace_insight(TraceRecorder& trace, const RunResult& r, Tick start) {
    const int pid = trace.process("pfsim insight", 1000);
    auto at = [&](double ns) { return start + static_cast<Tick>(ns * 1e3 + 0.5); };
    if (r.sanitized) {
        const int tid = trace.lane(pid, "sanitizer findings", 0);
        for (const insight::Finding& f : r.sanitizer.findings) {
            trace.instant(pid, tid, f.kind + " at " + (f.site.where.empty() ? "?" : f.site.where), at(f.site.time_ns),
                          "\"severity\":" + json_string(insight::severity_name(f.severity)) + ",\"what\":" +
                              json_string(f.what) + ",\"core\":" + json_string(f.site.core) + ",\"task\":" +
                              json_string(f.site.task) + ",\"times\":" + std::to_string(f.count));
        }
    }
    if (r.advised) {
        const int tid = trace.lane(pid, "advisor", 1);
        for (const insight::Advice& a : r.advisor.advice) {
            double first = 0;
            for (const insight::PrefetchSiteStats& s : r.advisor.sites) first = s.where == a.where ? s.first_post_ns : first;
            trace.instant(pid, tid, a.verdict + " at " + (a.where.empty() ? "?" : a.where), at(first),
                          "\"advice\":" + json_string(a.message));
        }
    }
}

// Ends a die's trace: detached from the die, its file written (BadInput if it cannot be).
void close_trace(SimPlatform& die, TraceRecorder& trace) {
    die.attach_trace(nullptr);
    try {
        trace.close();
    } catch (const std::runtime_error& e) {
        throw BadInput(e.what());
    }
}

}  // namespace

DieRun::DieRun(const RunRequest& request) : request_(request), faults_(parse_faults(request.faults)) {
    if (!request.suppressions.empty()) {
        if (!request.sanitize) throw BadInput("--suppressions is for --sanitize");
        try {
            suppressions_ = insight::read_suppressions(request.suppressions);
        } catch (const std::invalid_argument& e) {
            throw BadInput(std::string("--suppressions: ") + e.what());
        }
    }
    for (const SiteOption& o : site_options(request)) {
        for (const std::string& site : *o.sites) {
            const size_t colon = site.rfind(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == site.size() ||
                site.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
                throw BadInput(std::string(o.option) +
                               " takes FILE:LINE (a line of a kernel's source, as the advisor names it), not '" + site + "'");
            }
        }
    }
}

void DieRun::warn_unused_sites(const std::vector<SimPlatform*>& dies, RunResult& result) const {
    for (const SiteOption& o : site_options(request_)) {
        for (const std::string& site : *o.sites) {
            uint64_t uses = 0;
            for (SimPlatform* die : dies) uses += o.uses(*die, site);
            if (!uses) result.warnings.push_back(std::string(o.option) + " " + site + ": " + o.unused + " from that line");
        }
    }
}

void DieRun::arm(SimPlatform& platform, rt::Worker& worker, bool task_records) const {
    for_each_core(platform, [&](Core& core) {
        core.set_warm_load_sites(request_.warm_load_sites);
        core.set_around_load_sites(request_.around_load_sites);
    });
    worker.set_prefetch_enabled(request_.prefetch);
    worker.set_skip_wait(faults_.skip_wait);
    worker.set_site_what_ifs(request_.dropped_sites, request_.free_sites);
    worker.set_task_records(task_records);
}

void DieRun::run(const Config& cfg, const RunDie& die, const CallableSpec& callable, const RunWork& work,
                 RunResult& result) const {
    SimPlatform& platform = die.platform;
    rt::Worker& worker = die.worker;
    const RunRequest& request = request_;
    arm(platform, worker, request.task_records || !request.trace.empty() || request.advise);  // both read the records
    FaultReport fault_report(platform, faults_);  // after the warm-up: faults count from the run's own requests
    const std::unique_ptr<TraceRecorder> trace = open_trace(request.trace, cfg);
    const Tick insight_start = platform.now_ps();
    std::unique_ptr<insight::Sanitizer> sanitizer;
    if (request.sanitize) {
        sanitizer = std::make_unique<insight::Sanitizer>(platform);
        if (die.carried) sanitizer->carry(*die.carried);
    }
    if (die.carried) die.carried->clear();  // a run the sanitizer does not watch may land those flags unseen
    std::unique_ptr<insight::Advisor> advisor;
    if (request.advise) advisor = std::make_unique<insight::Advisor>(platform);
    struct Detach {
        SimPlatform& p;
        ~Detach() { p.attach_trace(nullptr); }
    } detach{platform};
    if (trace) platform.attach_trace(trace.get());
    const PlatformStats before = platform_stats(platform);
    const TimedMarks timed_before = timed_marks(platform);
    CallResult r;
    run_users_code(cfg, result.user_stdout, [&] { r = work(die, result); });
    if (trace) trace_tasks(*trace, r, platform);
    result.task_records = request.task_records;
    if (!request.task_records && !request.advise) r.task_records = false;  // read by the trace, listed nowhere
    add_graph(r, callable, platform, result, true);  // the tasks' records go as the summary's are made
    result.timed_pass = timed_pass_of(platform, timed_before);
    finish(result, platform, before, r.graph.graph_time_ps, cfg);
    result.faults = fault_report.finish();
    for (const std::string& w : fault_report.unfired()) result.warnings.push_back(w);
    if (!result.error.empty() && !die.carried) {  // the device is running down: the fatal close of protocol §3.6
        result.teardown = teardown_json(worker.close(true, teardown_options(cfg, faults_.failing_resets)));
    }
    if (sanitizer) {
        result.sanitizer = sanitizer->finish(suppressions_);
        result.sanitized = true;
        if (die.carried) *die.carried = sanitizer->in_flight();
    }
    if (advisor) {
        result.advisor = advisor->finish();
        insight::weigh_by_critical_path(result.advisor, task_spans(result));
        result.advised = true;
        if (!request.task_records) result.tasks = {};  // weighed by, listed nowhere
    }
    if (trace && (result.sanitized || result.advised)) trace_insight(*trace, result, insight_start);
    if (trace) close_trace(platform, *trace);
    warn_unused_sites({&platform}, result);
}

void DieRun::run_on_dies(const Config& cfg, SimDies& dies, const std::vector<RankDie>& ranks, const RanksWork& work,
                         DiesRun& run, std::string& user_stdout) const {
    const RunRequest& request = request_;
    if (request.sanitize || !request.faults.empty()) {
        throw BadInput("--sanitize and --inject are not modelled on several dies yet");
    }
    run.results.resize(ranks.size());
    for (const RankDie& d : ranks) arm(dies.die(d.rank), *d.worker, true);  // the run's time is read from them
    // Each die records into a file of its own (a die's processes and lanes, as a one-die run's).
    DieTraces traces(dies);
    for (const RankDie& d : ranks) traces.open(d.rank, d.trace, cfg);
    std::unique_ptr<insight::CommRingLog> rings;
    if (request.advise) rings = std::make_unique<insight::CommRingLog>(dies);
    const Tick start = dies.die(0).now_ps();
    run.before.clear();
    for (const RankDie& d : ranks) run.before.push_back(platform_stats(dies.die(d.rank)));
    const auto run_graphs = [&dies, &ranks] {  // end_graphs gives a result per die: in the run's order
        std::vector<rt::GraphResult> by_rank = dies.end_graphs(), by_call;
        for (const RankDie& d : ranks) by_call.push_back(std::move(by_rank.at(d.rank)));
        return by_call;
    };
    run_users_code(cfg, user_stdout, [&] { run.calls = work(run_graphs, run.results); });
    uint64_t comm_wait_ps = 0;  // sdma.comm_prefetch_wait over the dies
    for (size_t i = 0; i < ranks.size(); ++i) {
        SimPlatform& die = dies.die(ranks[i].rank);
        add_graph(run.calls[i], *ranks[i].callable, die, run.results[i]);
        if (TraceRecorder* trace = traces.at(i)) {
            trace_tasks(*trace, run.calls[i], die);
            close_trace(die, *trace);
        }
        comm_wait_ps += platform_stats(die).soc.sdma.comm_prefetch_wait - run.before[i].soc.sdma.comm_prefetch_wait;
    }
    if (rings) {
        const std::vector<insight::CommRingLog::PrefetchSite> sites = rings->finish(start);
        for (size_t i = 0; i < ranks.size(); ++i) {
            advise_comm(run.results[i], sites, *ranks[i].callable, static_cast<double>(comm_wait_ps) / 1e3,
                        static_cast<uint32_t>(ranks.size()));
        }
    }
}

CaseSpec read_request_case(const RunRequest& request, RunResult& result) {
    result.prefetch = request.prefetch;
    CaseSpec spec;
    try {
        spec = read_case(resolve_target(request.target), request.kernel_args);
    } catch (const CaseError& e) {
        throw BadInput(e.what());
    }
    result.name = spec.name;
    result.case_path = shipped_case_label(spec.path);
    result.params = spec.params;
    result.graph = true;
    refuse_overwriting_an_input("--trace", request.trace, spec);
    for (uint32_t r = 0; r < spec.ranks && spec.ranks > 1 && !request.trace.empty(); ++r) {
        refuse_overwriting_an_input("--trace", rank_trace_file(request.trace, r), spec);
    }
    for (const TensorSpec& t : spec.tensors) {
        if (t.output && !request.outputs_dir.empty()) {
            refuse_overwriting_an_input("--outputs", request.outputs_dir + "/" + t.name + ".npy", spec);
        }
    }
    return spec;
}

RunWork case_work(const CaseSpec& spec, const RunRequest& request, KernelCompiler& compiler, uint64_t heap_bytes) {
    return [&spec, &request, &compiler, heap_bytes](const RunDie& die, RunResult& result) -> CallResult {
        CaseResult r = run_case(spec, die.platform, die.worker, compiler, heap_bytes);
        for (const CaseOutput& out : r.outputs) {
            result.reference_equal &= out.golden_equal;
            result.outputs.push_back(output_result(out, out.name));
        }
        if (!request.outputs_dir.empty()) write_outputs(request.outputs_dir, spec, r);
        return std::move(r);  // the call's part, moved: a copy would double its per-task records (#49)
    };
}

}  // namespace pfsim::api
