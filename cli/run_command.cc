// pfsim run KERNEL: one kernel, prefetch on or off, on a fresh simulated die.
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <systemc>

#include "cli/commands.h"
#include "cli/options.h"
#include "base/sha256.h"
#include "cli/summary.h"
#include "cases/case_file.h"
#include "cases/case_runner.h"
#include "cases/npy.h"
#include "kernels/registry.h"
#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"
#include "model/trace/recorder.h"

namespace pfsim {

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

std::string known_kernels() {
    std::string list;
    for (const auto& [name, k] : kernel_registry()) list += (list.empty() ? "" : ", ") + name;
    return list;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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

// --outputs DIR: each output tensor as DIR/NAME.npy (bfloat16 as raw uint16).
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
            throw UsageError(std::string("--outputs: ") + e.what());
        }
    }
}

}  // namespace

const KernelCase& kernel_named(const std::string& name) {
    const KernelCase* k = find_kernel(name);
    if (!k) throw UsageError("unknown kernel '" + name + "' (known: " + known_kernels() + ")");
    return *k;
}

int cmd_run(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--no-sdma", "--no-warmup"}, {"--prefetch", "--arg", "--inject", "--trace", "--waves", "--outputs"});
    if (o.positional.size() != 1) throw UsageError("run takes exactly one kernel name or case file");
    const Config cfg = resolve_config(o);
    const bool is_case = ends_with(o.positional[0], ".toml");
    CaseSpec spec;
    const KernelCase* kernel = nullptr;
    KernelArgs kargs;
    if (is_case) {
        if (!o.values["--arg"].empty()) throw UsageError("--arg is for built-in kernels; a case file gives its own values");
        try {
            spec = read_case(user_path(o.positional[0]));
        } catch (const CaseError& e) {
            throw UsageError(e.what());
        }
    } else {
        kernel = &kernel_named(o.positional[0]);
        try {
            kargs = resolve_kernel_args(*kernel, o.values["--arg"]);
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    const std::string name = is_case ? spec.name : kernel->name();
    const std::string prefetch = value_of(o, "--prefetch", "on");
    if (prefetch != "on" && prefetch != "off") throw UsageError("--prefetch takes on or off, not '" + prefetch + "'");
    bool corrupt = false, skip_wait = false;
    for (const std::string& f : o.values["--inject"]) {
        if (f == "prefetch-corrupt") {
            corrupt = true;
        } else if (f == "skip-wait") {
            skip_wait = true;
        } else {
            throw UsageError("unknown fault '" + f + "' for --inject (known: prefetch-corrupt, skip-wait)");
        }
    }

    SimPlatform platform("die", cfg);
    platform.faults().prefetch_corrupt = corrupt;
    std::vector<std::string> waves;
    if (!value_of(o, "--waves", "").empty()) {
        try {
            waves = platform.attach_waves(value_of(o, "--waves", ""));
        } catch (const std::invalid_argument& e) {
            throw UsageError(e.what());
        }
    }
    rt::WorkerOptions wo;
    wo.enable_sdma = !has_flag(o, "--no-sdma") && (!is_case || spec.enable_sdma);
    wo.warmup = !has_flag(o, "--no-warmup");
    wo.workspace_bytes = cfg.bytes("prefetch.workspace_bytes");
    wo.warmup_blocks = static_cast<uint32_t>(cfg.count("prefetch.warmup_blocks"));
    wo.kernel.block_bytes = cfg.bytes("prefetch.block_bytes");
    wo.kernel.poll_limit = cfg.count("prefetch.poll_limit");
    wo.kernel.max_posts = cfg.count("prefetch.max_posts");
    wo.kernel.warmup_channel_ps = cfg.time("prefetch.warmup_channel_cost");
    wo.kernel.prefetch_enabled = prefetch == "on";
    wo.kernel.skip_wait = skip_wait;
    wo.scheduler.submit_ps = cfg.time("orch.submit_cost");
    wo.scheduler.dispatch_ps = cfg.time("orch.dispatch_latency");
    wo.scheduler.completion_ps = cfg.time("orch.completion_latency");
    wo.scheduler.time_limit_ps = cfg.time("orch.time_limit");
    wo.scheduler.poll_ps = cfg.time("orch.poll_interval");

    nlohmann::json summary = {{"schema", kSummarySchema}, {"command", "run"}, {"kernel", name},
                              {"prefetch", prefetch}, {"args", kargs}};
    if (is_case) summary["case"] = spec.path;
    int status = 0;
    try {
        rt::Worker worker(platform, wo);
        if (worker.warmup().ran) summary["warmup"] = worker.warmup().summary();
        KernelCompiler compiler;
        const std::unique_ptr<TraceRecorder> trace = open_trace(value_of(o, "--trace", ""), cfg);
        nlohmann::json before;
        uint64_t time_ps = 0;
        bool equal = true;
        nlohmann::json outputs = nlohmann::json::array();
        nlohmann::json violations = nlohmann::json::array();
        std::vector<std::string> warnings;
        std::string error;
        std::vector<const Core*> launched;
        auto core_by_id = [&](uint32_t id) -> const Core* {
            const rt::CorePlace p = platform.core_place(id);
            return p.vector ? platform.vector_cores()[2 * p.block_idx + p.subblock].get() : platform.cube_cores()[p.block_idx].get();
        };
        auto add_output = [&](const std::string& out_name, const std::vector<uint8_t>& bytes, bool same) {
            equal &= same;
            outputs.push_back({{"name", out_name},
                               {"bytes", bytes.size()},
                               {"sha256", sha256_hex(bytes.data(), bytes.size())},
                               {"equal_reference", same}});
        };
        if (is_case) {
            if (trace) platform.attach_trace(trace.get());
            before = platform.soc().stats_json();
            const CaseResult r = run_case(spec, platform, worker, compiler, cfg.bytes("orch.heap_bytes"));
            time_ps = r.graph.graph_time_ps;
            nlohmann::json tasks = nlohmann::json::array();
            std::set<uint32_t> used;
            for (size_t i = 0; i < r.tasks.size(); ++i) {
                const rt::TaskRun& run = r.graph.tasks[i];
                nlohmann::json cores = nlohmann::json::array();
                for (uint32_t c : run.cores) {
                    cores.push_back(std::string(core_by_id(c)->name()));
                    used.insert(c);
                }
                nlohmann::json kernels = nlohmann::json::array();
                for (int slot = 0; slot < 3; ++slot) {
                    const int32_t f = r.tasks[i].kernel[slot];
                    if (f != INVALID_KERNEL_ID) kernels.push_back(std::filesystem::path(r.incore_sources.at(f)).filename().string());
                }
                tasks.push_back({{"name", r.tasks[i].name()}, {"kernels", kernels}, {"blocks", r.tasks[i].block_num},
                                 {"deps", r.tasks[i].deps}, {"start_ns", static_cast<double>(run.start_ps) / 1e3},
                                 {"end_ns", static_cast<double>(run.end_ps) / 1e3}, {"cores", cores}});
            }
            for (uint32_t c : used) launched.push_back(core_by_id(c));
            if (trace) trace_tasks(*trace, r, [&](uint32_t id) { return std::string(core_by_id(id)->name()); });
            summary["tasks"] = tasks;
            summary["log"] = r.log;
            for (const CaseOutput& out : r.outputs) {
                add_output(out.name, out.data, out.golden_equal);
                nlohmann::json& row = outputs.back();
                row["max_abs_diff"] = out.max_abs_diff;
                row["mismatches"] = out.mismatches;
                if (out.mismatches) row["first_mismatch"] = out.first_mismatch;
            }
            const std::string dir = value_of(o, "--outputs", "");
            if (!dir.empty()) write_outputs(user_path(dir), spec, r);
            for (const std::string& v : r.graph.violations) violations.push_back(v);
            warnings = r.graph.warnings;
            error = r.graph.first_error();
        } else {
            if (!value_of(o, "--outputs", "").empty()) throw UsageError("--outputs is for case files");
            PreparedKernel prepared = kernel->prepare(platform, kargs);
            prepared.launch.entries = load_kernel(compiler, *kernel, prepared.launch.spec);
            if (trace) platform.attach_trace(trace.get());
            before = platform.soc().stats_json();
            const rt::LaunchResult result = worker.run(prepared.launch);
            time_ps = result.kernel_time_ps;
            for (const KernelOutput& out : prepared.outputs) {
                std::vector<uint8_t> bytes(out.bytes);
                platform.gm_read(out.addr, bytes.data(), bytes.size());
                add_output(out.name, bytes, bytes == out.expected);
            }
            for (const rt::CoreTiming& c : result.cores) {
                for (const std::string& v : c.violations) violations.push_back(v);
                launched.push_back(core_by_id(c.core_id));
            }
            summary["cores"] = {{"launched", result.cores.size()}};
            warnings = result.warnings;
            if (!result.ok()) error = result.first_error();
            if (prepared.probe) {  // a calibration kernel's timed pass
                uint64_t first = ~0ull, last = 0;
                for (uint64_t c = 0; c < prepared.probe_cores; ++c) {
                    first = std::min(first, prepared.probe[2 * c]);
                    last = std::max(last, prepared.probe[2 * c + 1]);
                }
                const double ns = static_cast<double>(last - first) / 1e3;
                summary["timed_pass"] = {{"ns", ns},
                                         {"bytes", prepared.probe_cores * prepared.probe_bytes},
                                         {"gbps", ns > 0 ? static_cast<double>(prepared.probe_cores * prepared.probe_bytes) / ns : 0.0}};
            }
        }
        const nlohmann::json counters = counter_delta(platform.soc().stats_json(), before);
        summary["kernel_time_ns"] = static_cast<double>(time_ps) / 1e3;
        summary["cycles"] = static_cast<uint64_t>(static_cast<double>(time_ps) * 1e-12 * cfg.frequency("chip.clock") + 0.5);
        summary.update(counters);
        const uint64_t accesses = counters["l2"]["hits"].get<uint64_t>() + counters["l2"]["misses"].get<uint64_t>();
        summary["l2"]["hit_rate"] =
            accesses ? static_cast<double>(counters["l2"]["hits"].get<uint64_t>()) / static_cast<double>(accesses) : 0.0;
        summary["outputs"] = outputs;
        summary["reference_equal"] = equal;
        summary["violations"] = violations;
        summary["warnings"] = warnings;
        summary["lanes"] = lanes_json(launched);
        summary["series"] = series_json(platform.sampler());
        if (!error.empty()) summary["error"] = error;
        if (!error.empty() || !equal || !violations.empty()) status = 1;
    } catch (const rt::RuntimeError& e) {
        summary["error"] = e.what();
        status = 1;
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());  // an argument the kernel's host side refused, a case that does not fit
    } catch (const CompileError& e) {
        throw UsageError(e.what());
    } catch (const LoadError& e) {
        throw UsageError(e.what());
    } catch (const rt::OrchestrationError& e) {
        throw UsageError(e.what());
    }
    summary["sim_time_total_ns"] = static_cast<double>(platform.now_ps()) / 1e3;  // warm-up included
    if (!waves.empty()) summary["waves"] = waves;
    summary["config"] = cfg.to_json();

    if (o.json) {
        std::cout << summary.dump(2) << "\n";
    } else {
        std::printf("kernel           %s (prefetch %s)\n", name.c_str(), prefetch.c_str());
        if (summary.contains("kernel_time_ns")) {
            const auto& l2 = summary["l2"];
            std::printf("kernel time      %.3f us (%llu cycles)\n", summary["kernel_time_ns"].get<double>() / 1e3,
                        summary["cycles"].get<unsigned long long>());
            std::printf("l2               %llu hits, %llu misses (hit rate %.1f %%), %llu prefetched lines\n",
                        l2["hits"].get<unsigned long long>(), l2["misses"].get<unsigned long long>(),
                        100 * l2["hit_rate"].get<double>(), l2["prefetch_lines"].get<unsigned long long>());
            std::printf("gm               %llu B read, %llu B written\n",
                        summary["gm"]["read_bytes"].get<unsigned long long>(),
                        summary["gm"]["write_bytes"].get<unsigned long long>());
            std::printf("sdma             %llu requests\n", summary["sdma"]["requests"].get<unsigned long long>());
            for (const auto& out : summary["outputs"]) {
                std::printf("output %-9s sha256 %s%s\n", out["name"].get<std::string>().c_str(),
                            out["sha256"].get<std::string>().c_str(),
                            out["equal_reference"].get<bool>() ? "" : "  DIFFERS FROM THE REFERENCE");
            }
        }
        if (summary.contains("warmup")) std::printf("warm-up          %s\n", summary["warmup"].get<std::string>().c_str());
        for (const std::string& w : waves) std::printf("waves            %s\n", w.c_str());
    }
    if (summary.contains("warnings")) {
        const auto& warnings = summary["warnings"];
        for (size_t i = 0; i < warnings.size() && i < 5; ++i) {
            std::cerr << "pfsim: warning: " << warnings[i].get<std::string>() << "\n";
        }
        if (warnings.size() > 5) std::cerr << "pfsim: (" << warnings.size() - 5 << " more warnings in --json)\n";
    }
    if (summary.contains("violations")) {
        for (const auto& v : summary["violations"]) {
            std::cerr << "pfsim: " << name << ": protocol violation: " << v.get<std::string>() << "\n";
        }
    }
    if (summary.contains("error")) {
        std::cerr << "pfsim: " << name << ": " << summary["error"].get<std::string>() << "\n";
    }
    if (summary.contains("reference_equal") && !summary["reference_equal"].get<bool>()) {
        std::cerr << "pfsim: " << name << ": output differs from the reference\n";
    }
    return status;
}

}  // namespace pfsim
