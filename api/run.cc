#include "api/run.h"

#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <systemc>

#include "api/summary.h"
#include "base/sha256.h"
#include "cases/case_file.h"
#include "cases/case_runner.h"
#include "cases/npy.h"
#include "kernels/registry.h"
#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "model/trace/recorder.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"

namespace pfsim::api {

namespace {

// after - before, for every unsigned counter; other fields as in `after`.
nlohmann::json counter_delta(const nlohmann::json& after, const nlohmann::json& before) {
    if (after.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (auto it = after.begin(); it != after.end(); ++it) {
            out[it.key()] = before.contains(it.key()) ? counter_delta(it.value(), before[it.key()]) : it.value();
        }
        return out;
    }
    if (after.is_number_unsigned() && before.is_number_unsigned()) {
        return after.get<uint64_t>() - before.get<uint64_t>();
    }
    return after;
}

}  // namespace

const KernelCase& kernel_named(const std::string& name) {
    const KernelCase* k = find_kernel(name);
    if (!k) {
        std::string list;
        for (const auto& [n, kc] : kernel_registry()) list += (list.empty() ? "" : ", ") + n;
        throw BadInput("unknown kernel '" + name + "' (known: " + list + ")");
    }
    return *k;
}

namespace {

// A case's tasks in the trace: a "tasks" process with a lane per core, a
// slice per task on each core it ran on, and a flow arrow per dependency.
template <typename CoreName>
void trace_tasks(TraceRecorder& trace, const CaseResult& r, CoreName core_name) {
    const int pid = trace.process("Tasks (AICPU scheduler)", 5);
    std::map<uint32_t, int> lanes;
    auto lane = [&](uint32_t core) {
        auto it = lanes.find(core);
        if (it == lanes.end()) it = lanes.emplace(core, trace.lane(pid, core_name(core), static_cast<int>(core))).first;
        return it->second;
    };
    constexpr uint64_t kFlowBase = uint64_t{1} << 32;  // apart from the prefetch flows' ids
    for (size_t i = 0; i < r.tasks.size(); ++i) {
        const rt::TaskRun& run = r.graph.tasks[i];
        if (!run.ran || run.cores.empty()) continue;
        std::set<uint32_t> cores(run.cores.begin(), run.cores.end());
        for (uint32_t c : cores) {
            trace.slice(pid, lane(c), r.tasks[i].name(), run.start_ps, run.end_ps,
                        "\"blocks\":" + std::to_string(r.tasks[i].block_num));
        }
        for (uint32_t d : r.tasks[i].deps) {
            const rt::TaskRun& from = r.graph.tasks[d];
            if (!from.ran || from.cores.empty()) continue;
            trace.flow(kFlowBase + i * 64 + (d % 64), pid, lane(from.cores.front()), from.end_ps, pid,
                       lane(run.cores.front()), run.start_ps);
        }
    }
}

// outputs_dir: each output tensor as DIR/NAME.npy (bfloat16 as raw uint16).
void write_outputs(const std::string& dir, const CaseSpec& spec, const CaseResult& r) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    for (const CaseOutput& out : r.outputs) {
        const TensorSpec* t = nullptr;
        for (const TensorSpec& s : spec.tensors) t = s.name == out.name ? &s : t;
        NpyArray a;
        a.descr = npy_descr(t->dtype).empty() ? "<u2" : npy_descr(t->dtype);
        a.shape.assign(t->shape.begin(), t->shape.end());
        a.data = out.data;
        try {
            write_npy(dir + "/" + out.name + ".npy", a);
        } catch (const std::runtime_error& e) {
            throw BadInput(std::string("--outputs: ") + e.what());
        }
    }
}

rt::WorkerOptions worker_options(const Config& cfg, const RunRequest& request, bool enable_sdma) {
    rt::WorkerOptions wo;
    wo.enable_sdma = enable_sdma;
    wo.warmup = request.warmup;
    wo.workspace_bytes = cfg.bytes("prefetch.workspace_bytes");
    wo.warmup_blocks = static_cast<uint32_t>(cfg.count("prefetch.warmup_blocks"));
    wo.kernel.block_bytes = cfg.bytes("prefetch.block_bytes");
    wo.kernel.poll_limit = cfg.count("prefetch.poll_limit");
    wo.kernel.max_posts = cfg.count("prefetch.max_posts");
    wo.kernel.warmup_channel_ps = cfg.time("prefetch.warmup_channel_cost");
    wo.kernel.prefetch_enabled = request.prefetch;
    for (const std::string& f : request.faults) wo.kernel.skip_wait |= f == "skip-wait";
    wo.scheduler.submit_ps = cfg.time("orch.submit_cost");
    wo.scheduler.dispatch_ps = cfg.time("orch.dispatch_latency");
    wo.scheduler.completion_ps = cfg.time("orch.completion_latency");
    wo.scheduler.time_limit_ps = cfg.time("orch.time_limit");
    wo.scheduler.poll_ps = cfg.time("orch.poll_interval");
    return wo;
}

}  // namespace

bool RunRequest::is_case() const {
    return is_case_file(target);
}

double RunResult::l2_hit_rate() const {
    return counters.contains("l2") && counters["l2"].contains("hit_rate") ? counters["l2"]["hit_rate"].get<double>() : 0;
}

RunResult run(const Config& cfg, const RunRequest& request) {
    RunResult result;
    result.prefetch = request.prefetch;
    CaseSpec spec;
    const KernelCase* kernel = nullptr;
    KernelArgs kargs;
    if (request.is_case()) {
        try {
            spec = read_case(request.target, request.kernel_args);
        } catch (const CaseError& e) {
            throw BadInput(e.what());
        }
        result.name = spec.name;
        result.case_path = spec.path;
        result.params = spec.params;
    } else {
        kernel = &kernel_named(request.target);
        try {
            kargs = resolve_kernel_args(*kernel, request.kernel_args);
        } catch (const std::invalid_argument& e) {
            throw BadInput(e.what());
        }
        result.name = kernel->name();
        result.args = kargs;
        if (!request.outputs_dir.empty()) throw BadInput("--outputs is for case files");
    }
    bool corrupt = false;
    for (const std::string& f : request.faults) {
        if (f == "prefetch-corrupt") {
            corrupt = true;
        } else if (f != "skip-wait") {
            throw BadInput("unknown fault '" + f + "' for --inject (known: prefetch-corrupt, skip-wait)");
        }
    }

    SimPlatform platform("die", cfg);
    platform.faults().prefetch_corrupt = corrupt;
    if (!request.waves.empty()) {
        try {
            result.waves = platform.attach_waves(request.waves);
        } catch (const std::invalid_argument& e) {
            throw BadInput(e.what());
        }
    }
    const rt::WorkerOptions wo = worker_options(cfg, request, request.enable_sdma && (kernel || spec.enable_sdma));
    auto core_by_id = [&](uint32_t id) { return &platform.core(id); };
    auto add_output = [&](const std::string& name, const std::vector<uint8_t>& bytes, bool same) {
        result.reference_equal &= same;
        OutputResult out;
        out.name = name;
        out.bytes = bytes.size();
        out.sha256 = sha256_hex(bytes.data(), bytes.size());
        out.equal_reference = same;
        result.outputs.push_back(out);
        return &result.outputs.back();
    };
    try {
        rt::Worker worker(platform, wo);
        if (worker.warmup().ran) result.warmup = worker.warmup().summary();
        KernelCompiler compiler;
        const std::unique_ptr<TraceRecorder> trace = open_trace(request.trace, cfg);
        nlohmann::json before;
        uint64_t time_ps = 0;
        std::vector<const Core*> launched;
        if (kernel == nullptr) {
            if (trace) platform.attach_trace(trace.get());
            before = platform.soc().stats_json();
            const CaseResult r = run_case(spec, platform, worker, compiler, cfg.bytes("orch.heap_bytes"));
            time_ps = r.graph.graph_time_ps;
            std::set<uint32_t> used;
            for (size_t i = 0; i < r.tasks.size(); ++i) {
                const rt::TaskRun& run = r.graph.tasks[i];
                TaskResult t;
                t.name = r.tasks[i].name();
                for (uint32_t c : run.cores) {
                    t.cores.push_back(core_by_id(c)->name());
                    used.insert(c);
                }
                for (int slot = 0; slot < 3; ++slot) {
                    const int32_t f = r.tasks[i].kernel[slot];
                    if (f != INVALID_KERNEL_ID) {
                        t.kernels.push_back(std::filesystem::path(r.incore_sources.at(f)).filename().string());
                    }
                }
                t.blocks = r.tasks[i].block_num;
                t.deps = r.tasks[i].deps;
                t.start_ns = static_cast<double>(run.start_ps) / 1e3;
                t.end_ns = static_cast<double>(run.end_ps) / 1e3;
                result.tasks.push_back(t);
            }
            for (uint32_t c : used) launched.push_back(core_by_id(c));
            if (trace) trace_tasks(*trace, r, [&](uint32_t id) { return std::string(core_by_id(id)->name()); });
            result.log = r.log;
            for (const CaseOutput& out : r.outputs) {
                OutputResult* o = add_output(out.name, out.data, out.golden_equal);
                o->compared = true;
                o->max_abs_diff = out.max_abs_diff;
                o->mismatches = out.mismatches;
                o->first_mismatch = out.first_mismatch;
            }
            if (!request.outputs_dir.empty()) write_outputs(request.outputs_dir, spec, r);
            result.violations = r.graph.violations;
            result.warnings = r.graph.warnings;
            result.error = r.graph.first_error();
        } else {
            PreparedKernel prepared = kernel->prepare(platform, kargs);
            prepared.launch.entries = load_kernel(compiler, *kernel, prepared.launch.spec);
            if (trace) platform.attach_trace(trace.get());
            before = platform.soc().stats_json();
            const rt::LaunchResult launch = worker.run(prepared.launch);
            time_ps = launch.kernel_time_ps;
            for (const KernelOutput& out : prepared.outputs) {
                std::vector<uint8_t> bytes(out.bytes);
                platform.gm_read(out.addr, bytes.data(), bytes.size());
                add_output(out.name, bytes, bytes == out.expected);
            }
            for (const rt::CoreTiming& c : launch.cores) {
                for (const std::string& v : c.violations) result.violations.push_back(v);
                launched.push_back(core_by_id(c.core_id));
            }
            result.cores_launched = launch.cores.size();
            result.warnings = launch.warnings;
            if (!launch.ok()) result.error = launch.first_error();
            if (prepared.probe) {  // a calibration kernel's timed pass
                uint64_t first = ~0ull, last = 0;
                for (uint64_t c = 0; c < prepared.probe_cores; ++c) {
                    first = std::min(first, prepared.probe[2 * c]);
                    last = std::max(last, prepared.probe[2 * c + 1]);
                }
                const double ns = static_cast<double>(last - first) / 1e3;
                const uint64_t moved = prepared.probe_cores * prepared.probe_bytes;
                result.timed_pass = {{"ns", ns}, {"bytes", moved}, {"gbps", ns > 0 ? static_cast<double>(moved) / ns : 0.0}};
            }
        }
        result.ran = true;
        result.counters = counter_delta(platform.soc().stats_json(), before);
        result.kernel_time_ns = static_cast<double>(time_ps) / 1e3;
        result.cycles = static_cast<uint64_t>(static_cast<double>(time_ps) * 1e-12 * cfg.frequency("chip.clock") + 0.5);
        const uint64_t hits = result.counters["l2"]["hits"].get<uint64_t>();
        const uint64_t accesses = hits + result.counters["l2"]["misses"].get<uint64_t>();
        result.counters["l2"]["hit_rate"] = accesses ? static_cast<double>(hits) / static_cast<double>(accesses) : 0.0;
        result.lanes = lanes_json(launched);
        result.series = series_json(platform.sampler());
    } catch (const rt::RuntimeError& e) {
        result.error = e.what();
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());  // an argument the kernel's host side refused, a case that does not fit
    } catch (const CompileError& e) {
        throw BadInput(e.what());
    } catch (const LoadError& e) {
        throw BadInput(e.what());
    } catch (const rt::OrchestrationError& e) {
        throw BadInput(e.what());
    } catch (const std::runtime_error& e) {
        throw BadInput(e.what());  // the compiler or the compile cache unusable, GM full
    }
    result.sim_time_total_ns = static_cast<double>(platform.now_ps()) / 1e3;  // warm-up included
    return result;
}

nlohmann::json to_json(const RunResult& r, const Config& cfg) {
    nlohmann::json j = {{"schema", kSummarySchema}, {"command", "run"}, {"kernel", r.name},
                        {"prefetch", r.prefetch ? "on" : "off"}, {"args", r.args}};
    if (!r.case_path.empty()) {
        j["case"] = r.case_path;
        j["params"] = r.params;
    }
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
        if (r.case_path.empty()) {
            j["cores"] = {{"launched", r.cores_launched}};
        } else {
            nlohmann::json tasks = nlohmann::json::array();
            for (const TaskResult& t : r.tasks) {
                tasks.push_back({{"name", t.name}, {"kernels", t.kernels}, {"blocks", t.blocks}, {"deps", t.deps},
                                 {"start_ns", t.start_ns}, {"end_ns", t.end_ns}, {"cores", t.cores}});
            }
            j["tasks"] = tasks;
            j["log"] = r.log;
        }
        j["lanes"] = r.lanes;
        j["series"] = r.series;
        if (!r.timed_pass.is_null()) j["timed_pass"] = r.timed_pass;
    }
    if (!r.error.empty()) j["error"] = r.error;
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
        r.prefetch = j.at("prefetch") == "on";
        r.args = j.at("args").get<std::map<std::string, uint64_t>>();
        r.warmup = j.value("warmup", "");
        r.error = j.value("error", "");
        r.sim_time_total_ns = j.at("sim_time_total_ns").get<double>();
        r.waves = j.value("waves", std::vector<std::string>{});
        r.ran = j.contains("kernel_time_ns");
        if (!r.ran) return r;
        r.kernel_time_ns = j.at("kernel_time_ns").get<double>();
        r.cycles = j.at("cycles").get<uint64_t>();
        for (const char* block : {"l2", "gm", "sdma"}) r.counters[block] = j.at(block);
        for (const nlohmann::json& o : j.at("outputs")) {
            OutputResult out;
            out.name = o.at("name").get<std::string>();
            out.bytes = o.at("bytes").get<uint64_t>();
            out.sha256 = o.at("sha256").get<std::string>();
            out.equal_reference = o.at("equal_reference").get<bool>();
            out.compared = o.contains("mismatches");
            out.max_abs_diff = o.value("max_abs_diff", 0.0);
            out.mismatches = o.value("mismatches", uint64_t{0});
            out.first_mismatch = o.value("first_mismatch", uint64_t{0});
            r.outputs.push_back(out);
        }
        r.reference_equal = j.at("reference_equal").get<bool>();
        r.violations = j.at("violations").get<std::vector<std::string>>();
        r.warnings = j.at("warnings").get<std::vector<std::string>>();
        r.log = j.value("log", std::vector<std::string>{});
        if (j.contains("cores")) r.cores_launched = j["cores"].at("launched").get<uint64_t>();
        for (const nlohmann::json& t : j.value("tasks", nlohmann::json::array())) {
            TaskResult task;
            task.name = t.at("name").get<std::string>();
            task.kernels = t.at("kernels").get<std::vector<std::string>>();
            task.cores = t.at("cores").get<std::vector<std::string>>();
            task.blocks = t.at("blocks").get<uint32_t>();
            task.deps = t.at("deps").get<std::vector<uint32_t>>();
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
