#include "session/device.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "session/die_run.h"
#include "session/faults.h"
#include "session/file_pages.h"
#include "session/graph_result.h"
#include "session/summary.h"
#include "base/digest.h"
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
        : cfg(c), platform("die", cfg), worker(platform, worker_options(cfg, enable_sdma, true, true, false)),
          slots(platform) {}
    Config cfg;
    SimPlatform platform;
    rt::Worker worker;
    KernelCompiler compiler;
    std::vector<LoadedCallable> callables;
    std::vector<bool> released;  // by handle: release_callable let it go
    uint64_t orchestration_loads = 0;
    RuntimeSlots slots;
    uint64_t heap_base = 0;
    std::string running;  // the callable of the run going on, for progress lines
    // Posts of the last sanitized run whose flags had not landed by its end.
    std::vector<insight::CarriedPost> carried;
    bool ended = false;  // a run's kernel faulted (RunResult::user_fault): no more runs on this die
    bool warmup_reported = false;  // the channel warm-up is in the first run's result, as in `pfsim run`'s
    // The callable of a handle registered or prepared and not released; else BadInput naming it.
    const LoadedCallable& callable_at(int handle) const {
        if (handle < 0 || handle >= static_cast<int>(callables.size()) || released[handle]) {
            throw BadInput("no callable registered with handle " + std::to_string(handle));
        }
        return callables[handle];
    }
    // One run on this die (session/die_run.h), `result` as far as the caller set it.
    RunResult run_on_die(const DieRun& die_run, const CallableSpec& callable, const RunWork& work, RunResult result);
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
    state_->released.push_back(false);
    return static_cast<int>(state_->callables.size()) - 1;
}

int DeviceSession::prepare_callable(const CallableSpec& spec) {
    state_->callables.push_back(load_callable(spec, state_->compiler, true));
    state_->released.push_back(false);
    ++state_->orchestration_loads;
    return static_cast<int>(state_->callables.size()) - 1;
}

void DeviceSession::release_callable(int handle) {
    state_->callable_at(handle);
    state_->released[handle] = true;
}

uint64_t DeviceSession::orchestration_loads() const { return state_->orchestration_loads; }

const RuntimeSlots& DeviceSession::runtime_slots() const { return state_->slots; }

uint64_t DeviceSession::heap_base() const { return state_->heap_base; }

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

RunResult DeviceSession::State::run_on_die(const DieRun& die_run, const CallableSpec& callable, const RunWork& work,
                                           RunResult result) {
    if (die_run.faults().core_fault) {
        throw BadInput("inject core-fault: only `pfsim run` models the fatal close that follows it; a persistent "
                       "Worker does not yet");
    }
    running = result.name;
    if (!warmup_reported && worker.warmup().ran) result.warmup = worker.warmup().summary();  // it ran before this run
    warmup_reported = true;
    try {
        die_run.run(cfg, {platform, worker, &carried}, callable, work, result);
    } catch (...) {
        ended = result.user_fault;
        try {
            throw;
        } catch (const CaseError& e) {  // the caller's arguments or orchestration at fault: a bad request
            throw BadInput(e.what());
        } catch (const rt::OrchestrationError& e) {
            throw BadInput(e.what());
        }
    }
    ended = result.user_fault;
    result.sim_time_total_ns = static_cast<double>(platform.now_ps()) / 1e3;
    return result;
}

RunResult DeviceSession::run(DeviceCall& c) {
    State& s = *state_;
    if (s.ended) throw rt::RuntimeError("the device ended after a kernel's fault");
    const LoadedCallable& callable = s.callable_at(c.handle);
    if (callable.uses_sdma && !s.worker.sdma_enabled()) {
        throw rt::RuntimeError("ChipWorker was created without enable_sdma=True");
    }
    if (c.lease_generation) {
        s.slots.lease(c.runtime_slot, *c.lease_generation);
    } else {
        s.slots.generation(c.runtime_slot);  // the slot exists
    }
    RunRequest request;  // what the call asks of the die beyond its work
    request.prefetch = c.prefetch;
    request.trace = c.trace;
    request.sanitize = c.sanitize;
    request.advise = c.advise;
    request.faults = c.faults;
    request.task_records = c.task_records;
    if (c.spans && !c.task_records) throw BadInput("spans without the tasks' records: a run's spans are in its tasks");
    const DieRun die_run(request);
    s.worker.set_aicpu_threads(c.aicpu_threads);
    RunResult result;
    result.name = std::filesystem::path(callable.spec.orchestration).stem().string();
    result.prefetch = c.prefetch;
    result.graph = true;
    result.spans = c.spans;
    const uint64_t heap_bytes = s.cfg.bytes("orch.heap_bytes");
    const StageArgs stage = [&s, slot = c.runtime_slot](std::vector<rt::ChipTensor>& t, std::vector<uint64_t>& v) {
        s.slots.stage(slot, t, v);
    };
    const RunWork work = [&c, &callable, heap_bytes, &stage, &s](const RunDie& die, RunResult& r) -> CallResult {
        const PlacedTensors placed(die.platform, c);
        std::unique_ptr<rt::ArgsDump> dump;
        if (c.dump_args) {
            dump = std::make_unique<rt::ArgsDump>(static_cast<rt::ArgsDump::Level>(c.dump_args),
                                                  [&p = die.platform](uint64_t pointer, void* out, uint64_t bytes) {
                                                      p.gm_read(pointer - p.device_pointer(0), out, bytes);
                                                  });
        }
        die.worker.set_args_dump(dump.get());
        struct Unset {
            rt::Worker& w;
            ~Unset() { w.set_args_dump(nullptr); }
        } unset{die.worker};
        CallResult call_result = call(callable, c.tensors, c.scalars, callable.uses_sdma, die.platform, die.worker,
                                      heap_bytes, c.rings, !c.scope_stats_dir.empty(), !c.deps_json.empty(), stage);
        if (call_result.heap_base) s.heap_base = call_result.heap_base;
        try {
            if (dump) dump->write(c.dump_dir);
            if (!c.scope_stats_dir.empty()) {
                std::error_code ec;
                std::filesystem::create_directories(c.scope_stats_dir, ec);
                rt::TaskGraph::write_scope_stats(c.scope_stats_dir + "/scope_stats.jsonl", call_result.scopes, c.rings,
                                                 heap_bytes);
            }
            if (!c.deps_json.empty()) rt::write_deps_json(c.deps_json, call_result.tasks);
        } catch (const std::runtime_error& e) {
            throw BadInput(e.what());
        }
        for (const CallTensor& t : c.tensors) {
            OutputResult out;
            const size_t i = r.outputs.size();
            out.name = i < c.names.size() && !c.names[i].empty() ? c.names[i] : "arg" + std::to_string(i);
            out.bytes = tensor_bytes(t);
            const auto* bytes = t.gm ? reinterpret_cast<const uint8_t*>(die.platform.device_pointer(t.gm)) : t.data.data();
            const DeviceCall::Hash hash = i < c.hashed.size() ? c.hashed[i] : DeviceCall::Hash::Sha256;
            if (hash == DeviceCall::Hash::Sha256) out.sha256 = sha256_hex(bytes, out.bytes);
            if (hash == DeviceCall::Hash::Digest) out.digest = digest_hex(bytes, out.bytes);
            out.equal_reference = true;  // the caller compares with its golden
            r.outputs.push_back(out);
        }
        return call_result;
    };
    return s.run_on_die(die_run, callable.spec, work, std::move(result));
}

RunResult DeviceSession::run(const RunRequest& request) {
    State& s = *state_;
    if (s.ended) throw rt::RuntimeError("the device ended after a kernel's fault");
    RunResult result;
    const CaseSpec spec = read_request_case(request, result);
    const char* refused = spec.ranks > 1                                ? "a level-3 case (ranks > 1)"
                          : !request.waves.empty()                      ? "--waves (the die's RTL is built with it)"
                          : !request.warmup && s.worker.warmup().ran    ? "no warm-up (the die warmed its channels)"
                          : request.progress                            ? "a progress callback (report_progress)"
                          : (request.enable_sdma && spec.enable_sdma) != s.worker.sdma_enabled()
                              ? "enable_sdma other than the device's"
                              : nullptr;
    if (refused) throw BadInput(spec.name + ": " + refused + " does not run on a device's persistent die");
    const DieRun die_run(request);
    return s.run_on_die(die_run, spec, case_work(spec, request, s.compiler, s.cfg.bytes("orch.heap_bytes")),
                        std::move(result));
}

}  // namespace pfsim::api
