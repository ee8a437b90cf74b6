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
#include "session/die_run.h"
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

double RunResult::l2_hit_rate() const {
    return counters.contains("l2") && counters["l2"].contains("hit_rate") ? counters["l2"]["hit_rate"].get<double>() : 0;
}

RunResult run(const Config& cfg, const RunRequest& request) {
    RunResult result;
    const CaseSpec spec = read_request_case(request, result);
    const DieRun die_run(request);
    if (spec.ranks > 1) {
        return run_ranks(cfg, request, spec, std::move(result), die_run);
    }

    std::unique_ptr<SimPlatform> die;
    try {
        die = std::make_unique<SimPlatform>("die", cfg, request.waves);
    } catch (const std::invalid_argument& e) {  // the waves files
        throw BadInput(e.what());
    }
    SimPlatform& platform = *die;
    result.waves = platform.waves_files();
    if (request.progress) {
        platform.sampler().report_progress([&request](Tick ps) { request.progress(static_cast<double>(ps) / 1e3); },
                                           std::chrono::milliseconds(request.progress_ms));
    }
    const rt::WorkerOptions wo = worker_options(cfg, request.enable_sdma && spec.enable_sdma, request.prefetch,
                                          request.warmup, die_run.faults().skip_wait);
    try {
        rt::Worker worker(platform, wo);
        if (worker.warmup().ran) result.warmup = worker.warmup().summary();
        KernelCompiler compiler;
        die_run.run(cfg, {platform, worker}, spec, case_work(spec, request, compiler, cfg.bytes("orch.heap_bytes")),
                    result);
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
            if (!o.digest.empty()) row["digest"] = o.digest;
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
        if (r.graph && !r.task_records) {
            j["task_count"] = r.task_count;
            j["log"] = r.log;
        } else if (r.graph) {
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
            out.digest = o.value("digest", "");
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
        r.task_records = !j.contains("task_count");
        r.graph = j.contains("tasks") || !r.task_records;
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
        r.task_count = r.task_records ? r.tasks.size() : json_integer<size_t>(j.at("task_count"));
        r.lanes = j.at("lanes");
        r.series = j.at("series");
        if (j.contains("timed_pass")) r.timed_pass = j["timed_pass"];
        return r;
    } catch (const nlohmann::json::exception& e) {
        throw BadInput(std::string("a run summary with a missing or mistyped field: ") + e.what());
    }
}

}  // namespace pfsim::api
