// pfsim run KERNEL: one kernel, prefetch on or off, on a fresh simulated die.
#include <cstdio>
#include <memory>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <systemc>

#include "cli/commands.h"
#include "cli/options.h"
#include "base/sha256.h"
#include "cli/summary.h"
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

}  // namespace

const KernelCase& kernel_named(const std::string& name) {
    const KernelCase* k = find_kernel(name);
    if (!k) throw UsageError("unknown kernel '" + name + "' (known: " + known_kernels() + ")");
    return *k;
}

int cmd_run(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--no-sdma", "--no-warmup"}, {"--prefetch", "--arg", "--inject", "--trace", "--waves"});
    if (o.positional.size() != 1) throw UsageError("run takes exactly one kernel name");
    const Config cfg = resolve_config(o);
    const KernelCase& kernel = kernel_named(o.positional[0]);
    KernelArgs kargs;
    try {
        kargs = resolve_kernel_args(kernel, o.values["--arg"]);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
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
    wo.enable_sdma = !has_flag(o, "--no-sdma");
    wo.warmup = !has_flag(o, "--no-warmup");
    wo.workspace_bytes = cfg.bytes("prefetch.workspace_bytes");
    wo.warmup_blocks = static_cast<uint32_t>(cfg.count("prefetch.warmup_blocks"));
    wo.kernel.block_bytes = cfg.bytes("prefetch.block_bytes");
    wo.kernel.poll_limit = cfg.count("prefetch.poll_limit");
    wo.kernel.max_posts = cfg.count("prefetch.max_posts");
    wo.kernel.warmup_channel_ps = cfg.time("prefetch.warmup_channel_cost");
    wo.kernel.prefetch_enabled = prefetch == "on";
    wo.kernel.skip_wait = skip_wait;

    nlohmann::json summary = {{"schema", kSummarySchema}, {"command", "run"}, {"kernel", kernel.name()},
                              {"prefetch", prefetch}, {"args", kargs}};
    int status = 0;
    try {
        rt::Worker worker(platform, wo);
        if (worker.warmup().ran) summary["warmup"] = worker.warmup().summary();
        PreparedKernel prepared = kernel.prepare(platform, kargs);
        KernelCompiler compiler;
        try {
            prepared.launch.entries = load_kernel(compiler, kernel, prepared.launch.spec);
        } catch (const CompileError& e) {
            throw UsageError(std::string(e.what()));
        } catch (const LoadError& e) {
            throw UsageError(e.what());
        }
        const std::unique_ptr<TraceRecorder> trace = open_trace(value_of(o, "--trace", ""), cfg);
        if (trace) platform.attach_trace(trace.get());
        const nlohmann::json before = platform.soc().stats_json();
        const rt::LaunchResult result = worker.run(prepared.launch);
        const nlohmann::json counters = counter_delta(platform.soc().stats_json(), before);
        summary["kernel_time_ns"] = static_cast<double>(result.kernel_time_ps) / 1e3;
        summary["cycles"] = static_cast<uint64_t>(static_cast<double>(result.kernel_time_ps) * 1e-12 *
                                                  cfg.frequency("chip.clock") + 0.5);
        summary.update(counters);
        const uint64_t accesses = counters["l2"]["hits"].get<uint64_t>() + counters["l2"]["misses"].get<uint64_t>();
        summary["l2"]["hit_rate"] =
            accesses ? static_cast<double>(counters["l2"]["hits"].get<uint64_t>()) / static_cast<double>(accesses) : 0.0;
        bool equal = true;
        nlohmann::json outputs = nlohmann::json::array();
        for (const KernelOutput& out : prepared.outputs) {
            std::vector<uint8_t> bytes(out.bytes);
            platform.gm_read(out.addr, bytes.data(), bytes.size());
            const bool same = bytes == out.expected;
            equal &= same;
            outputs.push_back({{"name", out.name},
                               {"bytes", out.bytes},
                               {"sha256", sha256_hex(bytes.data(), bytes.size())},
                               {"equal_reference", same}});
        }
        nlohmann::json violations = nlohmann::json::array();
        std::vector<const Core*> launched;
        for (const rt::CoreTiming& c : result.cores) {
            for (const std::string& v : c.violations) violations.push_back(v);
            launched.push_back(c.vector ? platform.vector_cores()[2 * c.block_idx + c.subblock].get()
                                        : platform.cube_cores()[c.block_idx].get());
        }
        summary["outputs"] = outputs;
        summary["reference_equal"] = equal;
        summary["violations"] = violations;
        summary["warnings"] = result.warnings;
        summary["cores"] = {{"launched", result.cores.size()}};
        summary["lanes"] = lanes_json(launched);
        summary["series"] = series_json(platform.sampler());
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
        if (!result.ok()) summary["error"] = result.first_error();
        if (!result.ok() || !equal || !violations.empty()) status = 1;
    } catch (const rt::RuntimeError& e) {
        summary["error"] = e.what();
        status = 1;
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());  // an argument the kernel's host side refused
    }
    summary["sim_time_total_ns"] = static_cast<double>(platform.now_ps()) / 1e3;  // warm-up included
    if (!waves.empty()) summary["waves"] = waves;
    summary["config"] = cfg.to_json();

    if (o.json) {
        std::cout << summary.dump(2) << "\n";
    } else {
        std::printf("kernel           %s (prefetch %s)\n", kernel.name().c_str(), prefetch.c_str());
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
            std::cerr << "pfsim: " << kernel.name() << ": protocol violation: " << v.get<std::string>() << "\n";
        }
    }
    if (summary.contains("error")) {
        std::cerr << "pfsim: " << kernel.name() << ": " << summary["error"].get<std::string>() << "\n";
    }
    if (summary.contains("reference_equal") && !summary["reference_equal"].get<bool>()) {
        std::cerr << "pfsim: " << kernel.name() << ": output differs from the reference\n";
    }
    return status;
}

}  // namespace pfsim
