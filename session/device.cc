#include "session/device.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "session/faults.h"
#include "session/file_pages.h"
#include "session/graph_result.h"
#include "session/summary.h"
#include "base/sha256.h"
#include "base/user_code.h"
#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "runtime/orchestration/dep_gen.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"

namespace pfsim::api {

struct DeviceSession::State {
    State(const Config& c, bool enable_sdma)
        : cfg(c), platform("die", cfg), worker(platform, worker_options(cfg, enable_sdma, true, true, false)) {}
    Config cfg;
    SimPlatform platform;
    rt::Worker worker;
    KernelCompiler compiler;
    std::vector<LoadedCallable> callables;
    std::string running;  // the callable of the run going on, for progress lines
    // Posts of the last sanitized run whose flags had not landed by its end.
    std::vector<insight::CarriedPost> carried;
    bool ended = false;  // a run's kernel faulted (RunResult::user_fault): no more runs on this die
};

DeviceSession::DeviceSession(const Config& cfg, bool enable_sdma) : state_(std::make_unique<State>(cfg, enable_sdma)) {}

DeviceSession::~DeviceSession() = default;

bool DeviceSession::ended() const { return state_->ended; }

void DeviceSession::report_progress(int64_t every_ms) {
    if (every_ms <= 0) {
        state_->platform.sampler().report_progress(nullptr, std::chrono::milliseconds(0));
        return;
    }
    State* s = state_.get();
    s->platform.sampler().report_progress(
        [s](Tick ps) {
            std::fprintf(stderr, "pfsim device: %s: still running, %.3f us simulated so far\n", s->running.c_str(),
                         static_cast<double>(ps) / 1e6);
        },
        std::chrono::milliseconds(every_ms));
}

bool DeviceSession::sdma_enabled() const { return state_->worker.sdma_enabled(); }

std::string DeviceSession::warmup() const {
    return state_->worker.warmup().ran ? state_->worker.warmup().summary() : "";
}

double DeviceSession::now_ns() const { return static_cast<double>(state_->platform.now_ps()) / 1e3; }

int DeviceSession::register_callable(const CallableSpec& spec) {
    state_->callables.push_back(load_callable(spec, state_->compiler));
    return static_cast<int>(state_->callables.size()) - 1;
}

namespace {

// The tensors of a call placed in GM from the client's transfer file (see
// DeviceCall::transfer): mapped (FilePages); unmapped and freed when it ends.
class PlacedTensors {
public:
    PlacedTensors(SimPlatform& platform, DeviceCall& c) {
        if (c.transfer.empty() && c.sources.empty()) return;
        if (c.offsets.size() != c.tensors.size()) throw BadInput("the transfer file needs one offset per tensor");
        for (size_t i = 0; i < c.tensors.size(); ++i) {
            const bool own = i < c.sources.size() && !c.sources[i].empty();
            const bool writes = own && i < c.writes_source.size() && c.writes_source[i];
            c.tensors[i].gm = pages_.map(platform, own ? c.sources[i] : c.transfer, c.offsets[i],
                                         tensor_bytes(c.tensors[i]), "tensor " + std::to_string(i) + ": ",
                                         own && !writes ? FilePages::Pages::Private : FilePages::Pages::Shared);
        }
    }

private:
    FilePages pages_;
};

}  // namespace

RunResult DeviceSession::run(DeviceCall& c) {
    State& s = *state_;
    if (s.ended) throw rt::RuntimeError("the device ended after a kernel's fault");
    if (c.handle < 0 || c.handle >= static_cast<int>(s.callables.size())) {
        throw BadInput("no callable registered with handle " + std::to_string(c.handle));
    }
    const LoadedCallable& callable = s.callables[c.handle];
    if (callable.uses_sdma && !s.worker.sdma_enabled()) {
        throw rt::RuntimeError("ChipWorker was created without enable_sdma=True");
    }
    RunResult result;
    result.name = std::filesystem::path(callable.spec.orchestration).stem().string();
    s.running = result.name;
    result.prefetch = c.prefetch;
    result.graph = true;
    result.spans = c.spans;
    const std::unique_ptr<TraceRecorder> trace = open_trace(c.trace, s.cfg);
    const FaultPlan faults = parse_faults(c.faults);
    if (faults.core_fault) {
        throw BadInput("inject core-fault: only `pfsim run` models the fatal close that follows it; a persistent "
                       "Worker does not yet");
    }
    s.worker.set_prefetch_enabled(c.prefetch);
    s.worker.set_skip_wait(faults.skip_wait);
    s.worker.set_aicpu_threads(c.aicpu_threads);
    struct Detach {
        SimPlatform& p;
        ~Detach() { p.attach_trace(nullptr); }
    } detach{s.platform};
    if (trace) s.platform.attach_trace(trace.get());
    const PlatformStats before = platform_stats(s.platform);
    std::unique_ptr<insight::Sanitizer> sanitizer;
    if (c.sanitize) {
        sanitizer = std::make_unique<insight::Sanitizer>(s.platform);
        sanitizer->carry(s.carried);
    }
    s.carried.clear();  // a run the sanitizer does not watch may land those flags unseen
    std::unique_ptr<insight::Advisor> advisor;
    if (c.advise) advisor = std::make_unique<insight::Advisor>(s.platform);
    try {
        const PlacedTensors placed(s.platform, c);
        FaultReport fault_report(s.platform, faults);
        const double limit_s = static_cast<double>(s.cfg.time("orch.host_time_limit")) / 1e12;
        user_code::TimeLimit limit(limit_s, "the host-time limit (orch.host_time_limit = " + std::to_string(limit_s) + " s)");
        std::unique_ptr<rt::ArgsDump> dump;
        if (c.dump_args) {
            dump = std::make_unique<rt::ArgsDump>(static_cast<rt::ArgsDump::Level>(c.dump_args),
                                                  [&p = s.platform](uint64_t pointer, void* out, uint64_t bytes) {
                                                      p.gm_read(pointer - p.device_pointer(0), out, bytes);
                                                  });
        }
        s.worker.set_args_dump(dump.get());
        struct Unset {
            rt::Worker& w;
            ~Unset() { w.set_args_dump(nullptr); }
        } unset{s.worker};
        const CallResult r = call(callable, c.tensors, c.scalars, callable.uses_sdma, s.platform, s.worker,
                                  s.cfg.bytes("orch.heap_bytes"), c.rings);
        try {
            if (dump) dump->write(c.dump_dir);
            if (!c.scope_stats_dir.empty()) {
                std::error_code ec;
                std::filesystem::create_directories(c.scope_stats_dir, ec);
                rt::TaskGraph::write_scope_stats(c.scope_stats_dir + "/scope_stats.jsonl", r.scopes, c.rings,
                                                 s.cfg.bytes("orch.heap_bytes"));
            }
            if (!c.deps_json.empty()) rt::write_deps_json(c.deps_json, r.tasks);
        } catch (const std::runtime_error& e) {
            throw BadInput(e.what());
        }
        add_graph(r, callable.spec, s.platform, result);
        s.ended = result.user_fault;
        if (trace) trace_tasks(*trace, r, s.platform);
        for (const CallTensor& t : c.tensors) {
            OutputResult out;
            const size_t i = result.outputs.size();
            out.name = i < c.names.size() && !c.names[i].empty() ? c.names[i] : "arg" + std::to_string(i);
            out.bytes = tensor_bytes(t);
            const auto* bytes = t.gm ? reinterpret_cast<const uint8_t*>(s.platform.device_pointer(t.gm)) : t.data.data();
            if (i >= c.hashed.size() || c.hashed[i]) out.sha256 = sha256_hex(bytes, out.bytes);
            out.equal_reference = true;  // the caller compares with its golden
            result.outputs.push_back(out);
        }
        finish(result, s.platform, before, r.graph.graph_time_ps, s.cfg);
        result.faults = fault_report.finish();
        for (const std::string& w : fault_report.unfired()) result.warnings.push_back(w);
        if (sanitizer) {
            result.sanitizer = sanitizer->finish({});
            result.sanitized = true;
            s.carried = sanitizer->in_flight();
        }
        if (advisor) {
            result.advisor = advisor->finish();
            insight::weigh_by_critical_path(result.advisor, task_spans(result));
            result.advised = true;
        }
        if (trace) {
            s.platform.attach_trace(nullptr);
            try {
                trace->close();
            } catch (const std::runtime_error& e) {  // the trace file could not be written
                throw BadInput(e.what());
            }
        }
    } catch (const CaseError& e) {
        throw BadInput(e.what());
    } catch (const rt::OrchestrationError& e) {
        throw BadInput(e.what());
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
    result.sim_time_total_ns = now_ns();
    return result;
}

}  // namespace pfsim::api
