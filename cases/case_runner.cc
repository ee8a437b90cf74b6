#include "cases/case_runner.h"

#include <cmath>
#include <cstring>
#include <filesystem>

#include "loader/shared_object.h"
#include "runtime/orchestration/orchestration_api.h"

namespace pfsim {

namespace {

using OrchestrationEntry = void (*)(const ChipTaskArgs&);
using OrchestrationConfig = PTO2OrchestrationConfig (*)(const ChipTaskArgs&);

std::vector<uint8_t> golden_of(const CaseSpec& spec, const TensorSpec& t) {
    for (const TensorSpec& other : spec.tensors) {
        if (!t.golden_tensor.empty() && other.name == t.golden_tensor) return initial_values(other);
    }
    return make_values(t, t.golden_values);
}

}  // namespace

CaseResult run_case(const CaseSpec& spec, rt::Platform& platform, rt::Worker& worker, KernelCompiler& compiler,
                    uint64_t heap_bytes) {
    CaseResult result;
    // Compile everything first: a build error stops the case before it runs.
    std::map<int32_t, rt::Incore> incores;
    for (const IncoreSpec& k : spec.incores) {
        rt::Incore in;
        in.vector = k.vector;
        in.source = k.source;
        in.entry = reinterpret_cast<rt::KernelEntry>(
            load_symbol(compiler, k.source, k.vector ? BuildKind::Aiv : BuildKind::Aic, "kernel_entry", spec.include_dirs));
        incores[k.func_id] = in;
        result.incore_sources[k.func_id] = k.source;
    }
    auto entry = reinterpret_cast<OrchestrationEntry>(
        load_symbol(compiler, spec.orchestration, BuildKind::Orchestration, spec.function, spec.include_dirs));
    auto config = reinterpret_cast<OrchestrationConfig>(
        load_symbol(compiler, spec.orchestration, BuildKind::Orchestration, spec.config_function, spec.include_dirs));

    // Tensors into GM, descriptors for the orchestration.
    rt::TaskGraph::Memory memory;
    uint64_t heap_used = 0;
    memory.allocate = [&](uint64_t bytes) {
        heap_used += (bytes + 4095) / 4096 * 4096;
        if (heap_used > heap_bytes) {
            throw rt::OrchestrationError("the runtime's heap ring (orch.heap_bytes = " + std::to_string(heap_bytes) +
                                         " B) cannot hold the outputs the orchestration allocates");
        }
        return platform.gm_alloc(bytes);
    };
    memory.device_pointer = [&](uint64_t gm) { return platform.device_pointer(gm); };
    memory.fill = [&](uint64_t gm, uint64_t bytes, uint64_t pattern, uint64_t size) {
        std::vector<uint8_t> data(bytes);
        for (uint64_t i = 0; i + size <= bytes; i += size) std::memcpy(data.data() + i, &pattern, size);
        platform.gm_write(gm, data.data(), bytes);
    };
    rt::TaskGraph graph(memory, platform.core_count() / 3);
    std::vector<uint64_t> gm_of;
    ChipTaskArgs args;
    for (const TensorSpec& t : spec.tensors) {
        const std::vector<uint8_t> init = initial_values(t);
        const uint64_t gm = platform.gm_alloc(t.bytes());
        platform.gm_write(gm, init.data(), init.size());
        gm_of.push_back(gm);
        args.tensors.push_back(graph.keep(rt::contiguous_tensor(platform.device_pointer(gm), t.dtype, t.shape.data(),
                                                                static_cast<uint32_t>(t.shape.size()))));
    }
    for (const ScalarSpec& s : spec.scalars) args.scalars.push_back(s.bits);

    const PTO2OrchestrationConfig cfg = config(args);
    const int given = static_cast<int>(args.tensors.size() + args.scalars.size());
    if (given < cfg.expected_arg_count) {
        throw CaseError(spec.path + ": " + spec.config_function + " expects " + std::to_string(cfg.expected_arg_count) +
                        " arguments; the case gives " + std::to_string(given) + " (" +
                        std::to_string(args.tensors.size()) + " tensors, " + std::to_string(args.scalars.size()) +
                        " scalars)");
    }
    {
        rt::TaskGraph::Recording recording(graph);
        entry(args);
    }
    result.log = graph.log_lines();
    result.tasks = graph.tasks();
    if (graph.fatal_code()) {
        throw rt::OrchestrationError(spec.orchestration + ": rt_report_fatal(" + std::to_string(graph.fatal_code()) + ")");
    }
    result.graph = worker.run_graph(graph, incores, spec.enable_sdma);

    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        const TensorSpec& t = spec.tensors[i];
        if (!t.output) continue;
        CaseOutput out;
        out.name = t.name;
        out.data.resize(t.bytes());
        platform.gm_read(gm_of[i], out.data.data(), out.data.size());
        const std::vector<uint8_t> golden = golden_of(spec, t);
        for (uint64_t e = 0; e < t.elements(); ++e) {
            const double a = element_value(t.dtype, out.data.data(), e), g = element_value(t.dtype, golden.data(), e);
            const double diff = std::fabs(a - g);
            const bool close = diff <= t.atol + t.rtol * std::fabs(g) || (std::isnan(a) && std::isnan(g));
            if (!close || std::isnan(diff)) {
                if (!out.mismatches++) out.first_mismatch = e;
            }
            if (!std::isnan(diff)) out.max_abs_diff = std::max(out.max_abs_diff, diff);
        }
        out.golden_equal = out.mismatches == 0;
        result.outputs.push_back(std::move(out));
    }
    return result;
}

}  // namespace pfsim
