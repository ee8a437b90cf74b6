#include "session/run.h"

#include <algorithm>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <systemc>

#include "session/faults.h"
#include "session/graph_result.h"
#include "session/summary.h"
#include "base/json_integer.h"
#include "base/user_code.h"
#include "session/case_file.h"
#include "session/case_runner.h"
#include "session/npy.h"
#include "session/run_ranks.h"
#include "session/shipped_cases.h"
#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "model/trace/recorder.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"

namespace pfsim::api {


namespace {

[[noreturn]] void unknown_target(const std::string& name) {
    std::string cases;
    for (const std::string& path : shipped_cases()) cases += (cases.empty() ? "" : ", ") + read_case(path).name;
    throw BadInput("unknown kernel '" + name + "' (shipped cases: " + cases + "; or give a case file, *.toml)");
}

}  // namespace

std::string resolve_target(const std::string& target) {
    if (is_case_file(target)) return target;
    const std::string path = shipped_case_named(target);
    if (path.empty()) unknown_target(target);
    return path;
}

namespace {

// The timed pass of calibration instruments (include/pfsim_timed_pass.h): the
// time covered by the union of every core's marked intervals (concurrent cores:
// earliest start to latest end; one core's disjoint passes: their sum), the
// bytes they moved, and the mean length of one marked interval (concurrent
// cores: what one core's pass took). Null when no core marked one.
nlohmann::json timed_pass_of(SimPlatform& platform) {
    std::vector<std::pair<uint64_t, uint64_t>> intervals;
    uint64_t moved = 0;
    for (const auto* group : {&platform.vector_cores(), &platform.cube_cores()}) {
        for (const auto& core : *group) {
            const Core::TimedPasses& t = core->timed_passes();
            intervals.insert(intervals.end(), t.intervals.begin(), t.intervals.end());
            moved += t.bytes;
        }
    }
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

}  // namespace

namespace {

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

}  // namespace

double RunResult::l2_hit_rate() const {
    return counters.contains("l2") && counters["l2"].contains("hit_rate") ? counters["l2"]["hit_rate"].get<double>() : 0;
}

RunResult run(const Config& cfg, const RunRequest& request) {
    RunResult result;
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
    const FaultPlan faults = parse_faults(request.faults);
    refuse_overwriting_an_input("--trace", request.trace, spec);
    for (uint32_t r = 0; r < spec.ranks && spec.ranks > 1 && !request.trace.empty(); ++r) {
        refuse_overwriting_an_input("--trace", rank_trace_file(request.trace, r), spec);
    }
    for (const TensorSpec& t : spec.tensors) {
        if (t.output && !request.outputs_dir.empty()) {
            refuse_overwriting_an_input("--outputs", request.outputs_dir + "/" + t.name + ".npy", spec);
        }
    }

    std::vector<insight::Suppression> suppressions;
    if (!request.suppressions.empty()) {
        if (!request.sanitize) throw BadInput("--suppressions is for --sanitize");
        try {
            suppressions = insight::read_suppressions(request.suppressions);
        } catch (const std::invalid_argument& e) {
            throw BadInput(std::string("--suppressions: ") + e.what());
        }
    }

    // The what-if site options, each with what counts its sites' uses and what an unused one lacked.
    const struct {
        const char* option;
        const std::vector<std::string>* sites;
        std::map<std::string, uint64_t>* uses;
        const char* unused;
    } site_options[] = {{"--drop-prefetch", &request.dropped_sites, &rt::dropped_site_counts(), "no prefetch was posted"},
                        {"--free-prefetch", &request.free_sites, &rt::free_site_counts(), "no prefetch was posted"},
                        {"--warm-loads", &request.warm_load_sites, &Core::warmed_load_counts(), "no load was made"},
                        {"--bypass-loads", &request.around_load_sites, &Core::around_load_counts(), "no load was made"}};
    for (const auto& [option, sites, uses, unused] : site_options) {
        uses->clear();
        for (const std::string& site : *sites) {
            const size_t colon = site.rfind(':');
            if (colon == std::string::npos || colon == 0 || colon + 1 == site.size() ||
                site.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
                throw BadInput(std::string(option) +
                               " takes FILE:LINE (a line of a kernel's source, as the advisor names it), not '" + site + "'");
            }
        }
    }
    auto warn_unused_sites = [&site_options](RunResult& r) {
        for (const auto& [option, sites, uses, unused] : site_options) {
            for (const std::string& site : *sites) {
                if (!uses->count(site)) r.warnings.push_back(std::string(option) + " " + site + ": " + unused + " from that line");
            }
        }
    };
    if (spec.ranks > 1) return run_ranks(cfg, request, spec, std::move(result), warn_unused_sites);

    std::unique_ptr<SimPlatform> die;
    try {
        die = std::make_unique<SimPlatform>("die", cfg, request.waves);
    } catch (const std::invalid_argument& e) {  // the waves files
        throw BadInput(e.what());
    }
    SimPlatform& platform = *die;
    result.waves = platform.waves_files();
    for (const auto* group : {&platform.vector_cores(), &platform.cube_cores()}) {
        for (const auto& core : *group) {
            core->set_warm_load_sites(request.warm_load_sites);
            core->set_around_load_sites(request.around_load_sites);
        }
    }
    if (request.progress) {
        platform.sampler().report_progress([&request](Tick ps) { request.progress(static_cast<double>(ps) / 1e3); },
                                           std::chrono::milliseconds(request.progress_ms));
    }
    rt::WorkerOptions wo = worker_options(cfg, request.enable_sdma && spec.enable_sdma, request.prefetch,
                                          request.warmup, faults.skip_wait);
    wo.kernel.dropped_sites = request.dropped_sites;
    wo.kernel.free_sites = request.free_sites;
    try {
        rt::Worker worker(platform, wo);
        if (worker.warmup().ran) result.warmup = worker.warmup().summary();
        FaultReport fault_report(platform, faults);  // after the warm-up: faults count from the run's own requests
        KernelCompiler compiler;
        const std::unique_ptr<TraceRecorder> trace = open_trace(request.trace, cfg);
        const Tick insight_start = platform.now_ps();
        std::unique_ptr<insight::Sanitizer> sanitizer;
        if (request.sanitize) sanitizer = std::make_unique<insight::Sanitizer>(platform);
        std::unique_ptr<insight::Advisor> advisor;
        if (request.advise) advisor = std::make_unique<insight::Advisor>(platform);
        if (trace) platform.attach_trace(trace.get());
        const PlatformStats before = platform_stats(platform);
        CaseResult r;
        run_users_code(cfg, result.user_stdout,
                       [&] { r = run_case(spec, platform, worker, compiler, cfg.bytes("orch.heap_bytes")); });
        add_graph(r, spec, platform, result);
        if (trace) trace_tasks(*trace, r, platform);
        for (const CaseOutput& out : r.outputs) {
            result.reference_equal &= out.golden_equal;
            result.outputs.push_back(output_result(out, out.name));
        }
        if (!request.outputs_dir.empty()) write_outputs(request.outputs_dir, spec, r);
        result.timed_pass = timed_pass_of(platform);
        finish(result, platform, before, r.graph.graph_time_ps, cfg);
        result.faults = fault_report.finish();
        for (const std::string& w : fault_report.unfired()) result.warnings.push_back(w);
        if (!result.error.empty()) {  // the device is running down: the fatal close of protocol §3.6
            result.teardown = teardown_json(worker.close(true, teardown_options(cfg, faults.failing_resets)));
        }
        if (sanitizer) {
            result.sanitizer = sanitizer->finish(suppressions);
            result.sanitized = true;
        }
        if (advisor) {
            result.advisor = advisor->finish();
            insight::weigh_by_critical_path(result.advisor, task_spans(result));
            result.advised = true;
        }
        if (trace && (result.sanitized || result.advised)) trace_insight(*trace, result, insight_start);
        if (trace) {
            platform.attach_trace(nullptr);
            trace->close();
        }
        warn_unused_sites(result);
    } catch (...) {
        report_refusal(result);
    }
    result.sim_time_total_ns = static_cast<double>(platform.now_ps()) / 1e3;  // warm-up included
    return result;
}

nlohmann::json to_json(const RunResult& r, const Config& cfg) {
    nlohmann::json j = {{"schema", kSummarySchema}, {"command", "run"}, {"kernel", r.name},
                        {"prefetch", r.prefetch ? "on" : "off"}, {"case", r.case_path},
                        {"params", r.params}};
    if (r.ranks > 1) j["ranks"] = r.ranks;
    if (!r.warmup.empty()) j["warmup"] = r.warmup;
    if (r.ran) {
        j["kernel_time_ns"] = r.kernel_time_ns;
        j["cycles"] = r.cycles;
        j.update(r.counters);
        nlohmann::json outputs = nlohmann::json::array();
        for (const OutputResult& o : r.outputs) {
            nlohmann::json row = {{"name", o.name}, {"bytes", o.bytes}, {"sha256", o.sha256}, {"equal_reference", o.equal_reference}};
            if (o.compared) {
                row["max_abs_diff"] = o.max_abs_diff;
                row["mismatches"] = o.mismatches;
                if (o.mismatches) row["first_mismatch"] = o.first_mismatch;
            }
            outputs.push_back(row);
        }
        j["outputs"] = outputs;
        j["reference_equal"] = r.reference_equal;
        j["violations"] = r.violations;
        j["warnings"] = r.warnings;
        if (r.graph) {
            nlohmann::json tasks = nlohmann::json::array();
            for (const TaskResult& t : r.tasks) {
                tasks.push_back({{"name", t.name}, {"kernels", t.kernels}, {"blocks", t.blocks}, {"deps", t.deps},
                                 {"start_ns", t.start_ns}, {"end_ns", t.end_ns}, {"cores", t.cores}});
                if (t.skipped) tasks.back()["skipped"] = true;
                if (r.spans) {
                    nlohmann::json spans = nlohmann::json::array();
                    for (const TaskResult::Span& s : t.spans) {
                        nlohmann::json busy;
                        for (int p = 0; p < 5; ++p) busy[rt::TaskRun::kPipes[p]] = s.busy_ns[p];
                        spans.push_back({{"core", s.core}, {"core_id", s.core_id}, {"block", s.block},
                                         {"func_id", s.func_id}, {"dispatch_ns", s.dispatch_ns},
                                         {"start_ns", s.start_ns}, {"end_ns", s.end_ns}, {"finish_ns", s.finish_ns},
                                         {"busy_ns", busy}});
                    }
                    tasks.back()["spans"] = spans;
                    tasks.back()["task_id"] = t.ring_id;
                    tasks.back()["submit_ns"] = {t.submit_ns, t.release_ns};
                    if (t.drained) tasks.back()["drain_ns"] = t.drain_ns;
                    if (t.early) tasks.back()["early_ns"] = t.early_ns;
                }
            }
            j["tasks"] = tasks;
            j["log"] = r.log;
        }
        j["lanes"] = r.lanes;
        j["series"] = r.series;
        if (!r.timed_pass.is_null()) j["timed_pass"] = r.timed_pass;
    }
    if (r.sanitized) j["sanitizer"] = r.sanitizer.to_json();
    if (r.advised) j["advisor"] = r.advisor.to_json();
    if (!r.faults.empty()) j["faults"] = r.faults;
    if (!r.teardown.is_null()) j["teardown"] = r.teardown;
    if (!r.error.empty()) j["error"] = r.error;
    if (!r.user_stdout.empty()) j["user_stdout"] = r.user_stdout;
    j["sim_time_total_ns"] = r.sim_time_total_ns;
    if (!r.waves.empty()) j["waves"] = r.waves;
    j["config"] = cfg.to_json();
    return j;
}

RunResult from_json(const nlohmann::json& j) {
    if (!j.is_object() || j.value("schema", "") != kSummarySchema || j.value("command", "") != "run") {
        throw BadInput("not a pfsim run summary");
    }
    try {
        RunResult r;
        r.name = j.at("kernel").get<std::string>();
        r.case_path = j.value("case", "");
        r.params = j.value("params", std::map<std::string, double>{});
        r.ranks = json_integer_or<uint32_t>(j, "ranks", 1);
        r.prefetch = j.at("prefetch") == "on";
        r.warmup = j.value("warmup", "");
        r.error = j.value("error", "");
        r.user_stdout = j.value("user_stdout", "");
        r.faults = j.value("faults", nlohmann::json::array());
        if (j.contains("teardown")) r.teardown = j["teardown"];
        r.sim_time_total_ns = j.at("sim_time_total_ns").get<double>();
        r.waves = j.value("waves", std::vector<std::string>{});
        r.sanitized = j.contains("sanitizer");
        if (r.sanitized) r.sanitizer = insight::SanitizerReport::from_json(j["sanitizer"]);
        r.advised = j.contains("advisor");
        if (r.advised) r.advisor = insight::AdvisorReport::from_json(j["advisor"]);
        r.ran = j.contains("kernel_time_ns");
        if (!r.ran) return r;
        r.kernel_time_ns = j.at("kernel_time_ns").get<double>();
        r.cycles = json_integer<uint64_t>(j.at("cycles"));
        for (const std::string& block : counter_blocks()) {
            if (j.contains(block)) r.counters[block] = j[block];
        }
        for (const nlohmann::json& o : j.at("outputs")) {
            OutputResult out;
            out.name = o.at("name").get<std::string>();
            out.bytes = json_integer<uint64_t>(o.at("bytes"));
            out.sha256 = o.at("sha256").get<std::string>();
            out.equal_reference = o.at("equal_reference").get<bool>();
            out.compared = o.contains("mismatches");
            out.max_abs_diff = o.value("max_abs_diff", 0.0);
            out.mismatches = json_integer_or<uint64_t>(o, "mismatches", 0);
            out.first_mismatch = json_integer_or<uint64_t>(o, "first_mismatch", 0);
            r.outputs.push_back(out);
        }
        r.reference_equal = j.at("reference_equal").get<bool>();
        r.violations = j.at("violations").get<std::vector<std::string>>();
        r.warnings = j.at("warnings").get<std::vector<std::string>>();
        r.log = j.value("log", std::vector<std::string>{});
        r.graph = j.contains("tasks");
        for (const nlohmann::json& t : j.value("tasks", nlohmann::json::array())) {
            TaskResult task;
            task.name = t.at("name").get<std::string>();
            task.kernels = t.at("kernels").get<std::vector<std::string>>();
            task.cores = t.at("cores").get<std::vector<std::string>>();
            task.blocks = json_integer<uint32_t>(t.at("blocks"));
            task.deps = json_integers<uint32_t>(t.at("deps"));
            task.start_ns = t.at("start_ns").get<double>();
            task.end_ns = t.at("end_ns").get<double>();
            r.tasks.push_back(task);
        }
        r.lanes = j.at("lanes");
        r.series = j.at("series");
        if (j.contains("timed_pass")) r.timed_pass = j["timed_pass"];
        return r;
    } catch (const nlohmann::json::exception& e) {
        throw BadInput(std::string("a run summary with a missing or mistyped field: ") + e.what());
    }
}

}  // namespace pfsim::api
