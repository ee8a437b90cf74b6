#include "session/case_runner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>

#include "base/host_buffer.h"
#include "base/user_code.h"
#include "loader/shared_object.h"
#include "pfsim_kernel_abi.h"
#include "pfsim_golden.h"

namespace pfsim {

namespace {

// Runs `call`, the user's `function` of `source` (an orchestration or a golden),
// under guard (base/user_code.h). A fault, the host-time limit, exit(), or an
// exception escaping it is the user's fault: rt::RuntimeError naming the source
// and the function. Bad input, named the same way: an OrchestrationError (pfsim
// refused a call of the orchestration) and, with `refusal`, std::invalid_argument
// (a golden refusing the case's values, include/pfsim_golden.h) as CaseError.
void call_user_code(const std::string& source, const std::string& function, const std::function<void()>& call,
                    bool refusal = false) {
    const std::string label = source + ": " + function;
    std::exception_ptr thrown;
    const user_code::Escape escape = user_code::run(label.c_str(), [&] {
        try {
            call();
        } catch (...) {
            thrown = std::current_exception();
        }
    });
    if (escape) {
        const std::string line = kernel_source_line ? kernel_source_line(escape.frames) : "";
        throw rt::RuntimeError(label + ": " + (line.empty() ? "" : line + ": ") + escape.what());
    }
    if (!thrown) return;
    try {
        std::rethrow_exception(thrown);
    } catch (const rt::OrchestrationStalled&) {
        throw;  // pfsim's own report: the orchestration waits for what can never come
    } catch (const rt::OrchestrationError& e) {
        throw rt::OrchestrationError(label + ": " + e.what());
    } catch (const std::invalid_argument& e) {
        if (refusal) throw CaseError(label + ": " + e.what());
        throw rt::RuntimeError(label + ": threw " + user_code::current_exception_type() + ": " + e.what());
    } catch (const std::exception& e) {
        throw rt::RuntimeError(label + ": threw " + user_code::current_exception_type() + ": " + e.what());
    } catch (...) {
        throw rt::RuntimeError(label + ": threw " + user_code::current_exception_type());
    }
}

// A digest of `bytes`, to see whether a golden wrote an input it was lent: four
// lanes of xor-multiply by an odd constant, each step a bijection of its lane,
// so a change of any one 8-byte word changes it.
uint64_t digest(const std::vector<uint8_t>& bytes) {
    uint64_t lane[4] = {1, 2, 3, 4};
    const size_t words = bytes.size() / 8;
    for (size_t i = 0; i < words; ++i) {
        uint64_t w;
        std::memcpy(&w, bytes.data() + 8 * i, 8);
        lane[i % 4] = (lane[i % 4] ^ w) * 0x9E3779B97F4A7C15ull;
    }
    for (size_t i = 8 * words; i < bytes.size(); ++i) lane[0] = (lane[0] ^ bytes[i]) * 0x9E3779B97F4A7C15ull;
    return lane[0] ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7);
}

// Every output's `initial` values overwritten by what the [golden] source
// computes (the other tensors' entries are empty). The golden works on copies
// of the outputs and is lent the inputs; an input it wrote is made again from
// the case, so its writes to inputs are ignored, as include/pfsim_golden.h says.
std::vector<std::vector<uint8_t>> computed_goldens(const CaseSpec& spec, golden::ComputeGolden compute,
                                                   std::vector<CallTensor>& initial) {
    std::vector<std::vector<uint8_t>> outputs(initial.size());
    std::vector<uint64_t> digests(initial.size());
    std::vector<golden::Tensor> tensors;
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        const TensorSpec& t = spec.tensors[i];
        if (t.output) {
            outputs[i] = host_buffer_copy(initial[i].data);
        } else {
            digests[i] = digest(initial[i].data);
        }
        golden::Tensor g{};
        g.name = t.name.c_str();
        g.dtype = dtype_name(t.dtype);  // a static string
        g.element_size = static_cast<uint32_t>(rt::element_size(t.dtype));
        g.ndims = static_cast<uint32_t>(t.shape.size());
        for (size_t d = 0; d < t.shape.size(); ++d) g.shape[d] = t.shape[d];
        g.elements = t.elements();
        g.output = t.output;
        g.data = t.output ? outputs[i].data() : initial[i].data.data();
        tensors.push_back(g);
    }
    std::vector<golden::Number> params, scalars;
    for (const auto& [name, value] : spec.params) params.push_back({name.c_str(), value});
    for (const ScalarSpec& s : spec.scalars) scalars.push_back({s.name.c_str(), s.value});
    golden::Args args{tensors.data(), static_cast<uint32_t>(tensors.size()), params.data(),
                      static_cast<uint32_t>(params.size()), scalars.data(), static_cast<uint32_t>(scalars.size())};
    // std::invalid_argument: the golden refuses the case's values (include/pfsim_golden.h), bad input.
    call_user_code(spec.golden_source, spec.golden_function, [&] { compute(args); }, true);
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        if (!spec.tensors[i].output && digest(initial[i].data) != digests[i]) initial[i].data = initial_values(spec.tensors[i]);
    }
    return outputs;
}

std::vector<uint8_t> golden_of(const CaseSpec& spec, size_t index, std::vector<std::vector<uint8_t>>& computed) {
    const TensorSpec& t = spec.tensors[index];
    if (spec.computes_golden(t)) return std::move(computed[index]);
    for (const TensorSpec& other : spec.tensors) {
        if (!t.golden_tensor.empty() && other.name == t.golden_tensor) return initial_values(other);
    }
    return make_values(t, t.golden_values);
}

}  // namespace

uint64_t tensor_bytes(const CallTensor& t) {
    uint64_t n = 1;
    for (uint32_t d : t.shape) n *= d;
    return n * rt::element_size(t.dtype);
}

LoadedCallable load_callable(const CallableSpec& spec, KernelCompiler& compiler, bool own_orchestration) {
    LoadedCallable c;
    c.spec = spec;
    for (const IncoreSpec& k : spec.incores) {
        rt::Incore in;
        in.vector = k.vector;
        in.source = k.source;
        const BuildKind kind = k.vector ? BuildKind::Aiv : BuildKind::Aic;
        in.entry = reinterpret_cast<rt::KernelEntry>(load_symbol(compiler, k.source, kind, "kernel_entry", spec.include_dirs));
        for (const std::string& s : undefined_symbols(compiler.compile(k.source, kind, spec.include_dirs))) {
            c.uses_sdma |= s.find("PrefetchAsyncContext") != std::string::npos;
        }
        c.incores[k.func_id] = in;
    }
    if (own_orchestration) {
        const auto object = load_own_copy(compiler, spec.orchestration, BuildKind::Orchestration, spec.include_dirs);
        c.entry = reinterpret_cast<decltype(c.entry)>(object->symbol(spec.function));
        c.config = reinterpret_cast<decltype(c.config)>(object->symbol(spec.config_function));
        return c;
    }
    c.entry = reinterpret_cast<decltype(c.entry)>(
        load_symbol(compiler, spec.orchestration, BuildKind::Orchestration, spec.function, spec.include_dirs));
    c.config = reinterpret_cast<decltype(c.config)>(
        load_symbol(compiler, spec.orchestration, BuildKind::Orchestration, spec.config_function, spec.include_dirs));
    return c;
}

namespace {

// One call in phases, so that several ranks' calls can run their graphs
// together: the constructor writes the tensors into GM, record() runs the
// orchestration (its graph begun at its first wait for tensor data or when it
// returns), finish() takes the graph's result and reads the tensors back. The
// destructor frees the call's GM (the first tensor it allocated and everything
// after it; a placed tensor is the caller's).
class CallRun {
public:
    CallRun(const LoadedCallable& callable, std::vector<CallTensor>& tensors, const std::vector<uint64_t>& scalars,
            bool uses_sdma, rt::Platform& platform, rt::Worker& worker, uint64_t heap_bytes,
            const rt::TaskGraph::RingSizes& rings, bool scope_stats, bool dep_records, const StageArgs& stage = {})
        : callable_(callable), tensors_(tensors), uses_sdma_(uses_sdma), platform_(platform), worker_(worker),
          heap_bytes_(heap_bytes), graph_(memory(), platform.core_count() / 3) {
        graph_.set_ring_sizes(rings);
        graph_.keep_scope_records(scope_stats);
        graph_.keep_dep_records(dep_records);
        result_.task_records = worker.task_records();
        graph_.keep_task_records(result_.task_records || dep_records);
        std::vector<rt::ChipTensor> descriptors;
        for (const CallTensor& t : tensors) {
            const uint64_t bytes = tensor_bytes(t);
            if (!t.gm && t.data.size() != bytes) throw std::invalid_argument("a tensor's data does not match its shape");
            const uint64_t gm = t.gm ? t.gm : platform.gm_alloc(bytes);
            if (!release_at_ && !t.gm) release_at_ = gm;  // a placed tensor stays the caller's
            gm_of_.push_back(gm);
            descriptors.push_back(rt::contiguous_tensor(platform.device_pointer(gm), t.dtype, t.shape.data(),
                                                        static_cast<uint32_t>(t.shape.size())));
            // A placed tensor's bytes are GM's own: the write copies nothing but is
            // counted as every initial value is (gm.touched_bytes).
            const void* from = t.gm ? reinterpret_cast<const void*>(platform.device_pointer(gm)) : t.data.data();
            platform.gm_write(gm, from, bytes);
        }
        if (!release_at_) release_at_ = platform.gm_alloc(1);
        args_.scalars = scalars;
        if (stage) stage(descriptors, args_.scalars);
        for (const rt::ChipTensor& d : descriptors) args_.tensors.push_back(graph_.keep(d));
    }
    ~CallRun() {
        if (release_at_) platform_.gm_free(release_at_);
    }
    CallRun(const CallRun&) = delete;
    CallRun& operator=(const CallRun&) = delete;

    // Runs the orchestration. Throws CaseError, rt::OrchestrationError or
    // rt::RuntimeError as call() does, the graph ended first.
    void record() {
        const CallableSpec& spec = callable_.spec;
        PTO2OrchestrationConfig cfg{};
        call_user_code(spec.orchestration, spec.config_function, [&] { cfg = callable_.config(args_); });
        const int given = static_cast<int>(args_.tensors.size() + args_.scalars.size());
        if (given < cfg.expected_arg_count) {
            throw CaseError(spec.orchestration + ": " + spec.config_function + " expects " +
                            std::to_string(cfg.expected_arg_count) + " arguments; the case gives " + std::to_string(given) +
                            " (" + std::to_string(args_.tensors.size()) + " tensors, " +
                            std::to_string(args_.scalars.size()) + " scalars)");
        }
        // The graph's simulation starts at the orchestration's first wait for
        // tensor data, or once it returned; it is always ended.
        rt::TaskGraph::Live live;
        live.begin = [&] {
            worker_.begin_graph(callable_.incores, uses_sdma_);
            simulating_ = true;
        };
        live.submitted = [&](const rt::GraphTask& t) { worker_.add_task(t); };
        live.wait_task = [&](uint32_t t, uint64_t* end_ps) { return worker_.wait_task(t, end_ps); };
        live.run_until = [&](uint64_t ps) { return worker_.run_until(ps); };
        graph_.go_live(live, {worker_.scheduler_timing().submit_ps, worker_.scheduler_timing().tensor_data_ps});
        try {
            rt::TaskGraph::Recording recording(graph_);
            call_user_code(spec.orchestration, spec.function, [&] { callable_.entry(args_); });
        } catch (const rt::OrchestrationStalled& e) {
            stalled_ = e.what();
        } catch (...) {
            if (simulating_) worker_.end_graph();
            throw;
        }
        result_.log = graph_.log_lines();
        result_.scopes = graph_.take_scope_records();
        if (graph_.fatal_code()) {
            if (simulating_) worker_.end_graph();
            throw rt::OrchestrationError(spec.orchestration + ": " + graph_.fatal_message());
        }
        if (stalled_.empty()) graph_.hand_over();
        result_.tasks = graph_.take_tasks();  // not a copy: a graph's records are a large part of its memory (#49)
    }

    CallResult finish(rt::GraphResult graph) {
        result_.graph = std::move(graph);
        if (!stalled_.empty()) result_.graph.stuck = stalled_ + (result_.graph.stuck.empty() ? "" : ": " + result_.graph.stuck);
        result_.tensors = graph_.take_tensors();
        for (size_t i = 0; i < tensors_.size(); ++i) {
            if (!tensors_[i].gm) platform_.gm_read(gm_of_[i], tensors_[i].data.data(), tensors_[i].data.size());
        }
        return std::move(result_);
    }

private:
    rt::TaskGraph::Memory memory() {
        rt::TaskGraph::Memory m;
        m.allocate = [this](uint64_t bytes) {
            heap_used_ += (bytes + 4095) / 4096 * 4096;
            if (heap_used_ > heap_bytes_) {
                throw rt::OrchestrationError("the runtime's heap ring (orch.heap_bytes = " + std::to_string(heap_bytes_) +
                                             " B) cannot hold the outputs the orchestration allocates");
            }
            const uint64_t gm = platform_.gm_alloc(bytes);
            if (!result_.heap_base) result_.heap_base = platform_.device_pointer(gm);
            return gm;
        };
        m.device_pointer = [this](uint64_t gm) { return platform_.device_pointer(gm); };
        m.gm_of = [this](uint64_t pointer, uint64_t bytes) {
            const uint64_t gm = pointer - platform_.device_pointer(0);
            return pointer >= platform_.device_pointer(0) && platform_.gm_allocated(gm, bytes) ? gm : ~uint64_t{0};
        };
        m.fill = [this](uint64_t gm, uint64_t bytes, uint64_t pattern, uint64_t size) {
            std::vector<uint8_t> data(bytes);
            for (uint64_t i = 0; i + size <= bytes; i += size) std::memcpy(data.data() + i, &pattern, size);
            platform_.gm_write(gm, data.data(), bytes);
        };
        m.read = [this](uint64_t gm, void* dst, uint64_t bytes) { platform_.gm_read(gm, dst, bytes); };
        m.write = [this](uint64_t gm, const void* src, uint64_t bytes) { platform_.gm_write(gm, src, bytes); };
        return m;
    }

    const LoadedCallable& callable_;
    std::vector<CallTensor>& tensors_;
    const bool uses_sdma_;
    rt::Platform& platform_;
    rt::Worker& worker_;
    const uint64_t heap_bytes_;
    uint64_t heap_used_ = 0;
    uint64_t release_at_ = 0;
    rt::TaskGraph graph_;
    std::vector<uint64_t> gm_of_;
    ChipTaskArgs args_;
    bool simulating_ = false;
    std::string stalled_;
    CallResult result_;
};

}  // namespace

CallResult call(const LoadedCallable& callable, std::vector<CallTensor>& tensors, const std::vector<uint64_t>& scalars,
                bool uses_sdma, rt::Platform& platform, rt::Worker& worker, uint64_t heap_bytes,
                const rt::TaskGraph::RingSizes& rings, bool scope_stats, bool dep_records, const StageArgs& stage) {
    CallRun run(callable, tensors, scalars, uses_sdma, platform, worker, heap_bytes, rings, scope_stats, dep_records,
                stage);
    run.record();
    return run.finish(worker.end_graph());
}

std::vector<CallResult> call_ranks(const std::vector<RankCall>& calls,
                                   const std::function<std::vector<rt::GraphResult>()>& run_graphs) {
    std::vector<std::unique_ptr<CallRun>> runs;
    try {
        for (const RankCall& c : calls) {
            runs.push_back(std::make_unique<CallRun>(*c.callable, *c.tensors, c.scalars, c.uses_sdma, *c.platform,
                                                     *c.worker, c.heap_bytes, c.rings, false, false));
            runs.back()->record();
            c.worker->close_graph();  // its scheduler runs it out without waiting for this host
        }
    } catch (...) {
        run_graphs();  // the graphs begun so far, ended
        throw;
    }
    std::vector<rt::GraphResult> graphs = run_graphs();
    std::vector<CallResult> results;
    for (size_t r = 0; r < runs.size(); ++r) results.push_back(runs[r]->finish(std::move(graphs.at(r))));
    return results;
}

namespace {

// The case's [golden] function, compiled and loaded; null when it has none.
golden::ComputeGolden load_golden(const CaseSpec& spec, KernelCompiler& compiler) {
    if (spec.golden_source.empty()) return nullptr;
    return reinterpret_cast<golden::ComputeGolden>(
        load_symbol(compiler, spec.golden_source, BuildKind::Orchestration, spec.golden_function, spec.include_dirs));
}

std::vector<CallTensor> initial_tensors(const CaseSpec& spec) {
    std::vector<CallTensor> tensors;
    for (const TensorSpec& t : spec.tensors) tensors.push_back({t.dtype, t.shape, initial_values(t)});
    return tensors;
}

// Each output of `tensors` (what the run left) against its golden.
std::vector<CaseOutput> compare_outputs(const CaseSpec& spec, std::vector<CallTensor>& tensors,
                                        std::vector<std::vector<uint8_t>>& computed) {
    std::vector<CaseOutput> outputs;
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        const TensorSpec& t = spec.tensors[i];
        if (!t.output) continue;
        CaseOutput out;
        out.name = t.name;
        out.data = std::move(tensors[i].data);
        const std::vector<uint8_t> golden = golden_of(spec, i, computed);
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
        outputs.push_back(std::move(out));
    }
    return outputs;
}

}  // namespace

CaseResult run_case(const CaseSpec& spec, rt::Platform& platform, rt::Worker& worker, KernelCompiler& compiler,
                    uint64_t heap_bytes) {
    // Compile everything first: a build error stops the case before it runs.
    const LoadedCallable callable = load_callable(spec, compiler);
    const golden::ComputeGolden compute = load_golden(spec, compiler);
    CaseResult result;
    std::vector<CallTensor> tensors = initial_tensors(spec);
    std::vector<std::vector<uint8_t>> computed;
    if (compute) computed = computed_goldens(spec, compute, tensors);
    std::vector<uint64_t> scalars;
    for (const ScalarSpec& s : spec.scalars) scalars.push_back(s.bits);
    static_cast<CallResult&>(result) = call(callable, tensors, scalars, spec.enable_sdma, platform, worker, heap_bytes);
    result.outputs = compare_outputs(spec, tensors, computed);
    return result;
}

CaseData case_data(const CaseSpec& spec, KernelCompiler& compiler) {
    const golden::ComputeGolden compute = load_golden(spec, compiler);
    std::vector<CallTensor> tensors = initial_tensors(spec);
    std::vector<std::vector<uint8_t>> computed;
    if (compute) computed = computed_goldens(spec, compute, tensors);
    CaseData data;
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        data.golden.push_back(spec.tensors[i].output ? golden_of(spec, i, computed) : std::vector<uint8_t>{});
        data.initial.push_back(std::move(tensors[i].data));
    }
    return data;
}

std::vector<CaseResult> run_case_ranks(const CaseSpec& spec, const std::vector<CaseRank>& ranks, KernelCompiler& compiler,
                                       uint64_t heap_bytes,
                                       const std::function<std::vector<rt::GraphResult>()>& run_graphs) {
    const LoadedCallable callable = load_callable(spec, compiler);
    const golden::ComputeGolden compute = load_golden(spec, compiler);
    std::vector<std::vector<CallTensor>> tensors(ranks.size());
    std::vector<std::vector<std::vector<uint8_t>>> computed(ranks.size());
    std::vector<RankCall> calls;
    for (size_t r = 0; r < ranks.size(); ++r) {
        tensors[r] = initial_tensors(spec);
        if (compute) {
            CaseSpec for_rank = spec;
            for_rank.params["rank"] = static_cast<double>(r);
            for_rank.params["ranks"] = static_cast<double>(ranks.size());
            computed[r] = computed_goldens(for_rank, compute, tensors[r]);
        }
        RankCall c;
        c.callable = &callable;
        c.tensors = &tensors[r];
        for (const ScalarSpec& s : spec.scalars) c.scalars.push_back(s.type == "comm_context" ? ranks[r].comm_context : s.bits);
        c.uses_sdma = spec.enable_sdma;
        c.platform = ranks[r].platform;
        c.worker = ranks[r].worker;
        c.heap_bytes = heap_bytes;
        calls.push_back(std::move(c));
    }
    std::vector<CallResult> done = call_ranks(calls, run_graphs);
    std::vector<CaseResult> results(ranks.size());
    for (size_t r = 0; r < ranks.size(); ++r) {
        static_cast<CallResult&>(results[r]) = std::move(done[r]);
        results[r].outputs = compare_outputs(spec, tensors[r], computed[r]);
    }
    return results;
}

}  // namespace pfsim
