#include "session/device_ranks.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "session/die_run.h"
#include "session/file_pages.h"
#include "session/graph_result.h"
#include "session/run_ranks.h"
#include "session/summary.h"
#include "base/sha256.h"
#include "loader/compiler.h"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/worker.h"

namespace pfsim::api {

struct RankSession::State {
    State(const Config& c, uint32_t ranks, bool enable_sdma) : cfg(c), dies(cfg, ranks, "rank") {
        for (uint32_t r = 0; r < ranks; ++r) {
            workers.push_back(
                std::make_unique<rt::Worker>(dies.die(r), worker_options(cfg, enable_sdma, true, true, false)));
        }
    }
    Config cfg;
    SimDies dies;
    std::vector<std::unique_ptr<rt::Worker>> workers;  // by rank
    KernelCompiler compiler;
    std::vector<LoadedCallable> callables;
    bool ended = false;
    bool warmup_reported = false;  // the channel warm-up is in the first case run's result, as in `pfsim run`'s
    std::string running;  // the ranks of the run going on, for progress lines

    SimPlatform& die(uint32_t rank, const std::string& what) {
        if (rank >= dies.count()) {
            throw BadInput(what + ": rank " + std::to_string(rank) + " is not one of the " +
                           std::to_string(dies.count()) + " ranks of this device");
        }
        return dies.die(rank);
    }
    void check_range(uint32_t rank, uint64_t gm, uint64_t bytes, const std::string& what) {
        if (!die(rank, what).gm_allocated(gm, bytes)) {
            throw BadInput(what + ": " + std::to_string(bytes) + " bytes at GM " + std::to_string(gm) + " of rank " +
                           std::to_string(rank) + " are not allocated there");
        }
    }
};

RankSession::RankSession(const Config& cfg, uint32_t ranks, bool enable_sdma)
    : state_(std::make_unique<State>(cfg, ranks, enable_sdma)) {}

RankSession::~RankSession() = default;

uint32_t RankSession::ranks() const { return state_->dies.count(); }

void RankSession::report_progress(int64_t every_ms) {
    State* s = state_.get();
    // The dies share one simulated time: rank 0's sampler speaks for the run.
    if (every_ms <= 0) {
        s->dies.die(0).sampler().report_progress(nullptr, std::chrono::milliseconds(0));
        return;
    }
    s->dies.die(0).sampler().report_progress(
        [s](Tick ps) {
            std::fprintf(stderr, "pfsim device: %s: still running, %.3f us simulated so far\n", s->running.c_str(),
                         static_cast<double>(ps) / 1e6);
        },
        std::chrono::milliseconds(every_ms));
}
bool RankSession::ended() const { return state_->ended; }
bool RankSession::sdma_enabled() const { return state_->workers.front()->sdma_enabled(); }
std::string RankSession::warmup() const {
    const rt::Worker& w = *state_->workers.front();
    return w.warmup().ran ? w.warmup().summary() : "";
}
double RankSession::now_ns() const { return static_cast<double>(state_->dies.die(0).now_ps()) / 1e3; }

int RankSession::register_callable(const CallableSpec& spec) {
    state_->callables.push_back(load_callable(spec, state_->compiler));
    return static_cast<int>(state_->callables.size()) - 1;
}

RankSession::Allocation RankSession::alloc(uint32_t rank, uint64_t bytes, bool window) {
    SimPlatform& die = state_->die(rank, "alloc");
    Allocation a;
    try {
        a.gm = die.gm_alloc(bytes);
    } catch (const std::runtime_error& e) {
        throw BadInput("alloc on rank " + std::to_string(rank) + ": " + e.what());
    }
    a.pointer = state_->dies.device_pointer(rank, a.gm);
    if (window) state_->dies.add_comm_window(rank, a.gm, bytes);
    return a;
}

void RankSession::free(uint32_t rank, uint64_t gm) {
    state_->check_range(rank, gm, 0, "free");
    state_->dies.die(rank).gm_free(gm);
    state_->dies.drop_comm_windows(rank, gm);
}

void RankSession::write(uint32_t rank, uint64_t gm, const void* src, uint64_t bytes) {
    state_->check_range(rank, gm, bytes, "write");
    state_->dies.die(rank).gm_write(gm, src, bytes);
}

void RankSession::read(uint32_t rank, uint64_t gm, void* dst, uint64_t bytes) {
    state_->check_range(rank, gm, bytes, "read");
    state_->dies.die(rank).gm_read(gm, dst, bytes);
}

namespace {

// The file-backed tensors of the ranks' calls mapped into their dies' GM for
// the run (FilePages); unmapped and freed when it ends.
class MappedTensors {
public:
    MappedTensors(SimDies& dies, std::vector<RankCallRequest>& calls) {
        for (RankCallRequest& c : calls) {
            for (size_t i = 0; i < c.tensors.size(); ++i) {
                RankTensor& t = c.tensors[i];
                if (t.tensor.gm) continue;
                const std::string what = "rank " + std::to_string(c.rank) + " tensor " + std::to_string(i) + ": ";
                t.tensor.gm = pages_.map(dies.die(c.rank), t.file, t.offset, tensor_bytes(t.tensor), what);
            }
        }
    }

private:
    FilePages pages_;
};

// A run in which a rank's kernel faulted the host (RunResult::user_fault): the dies are not run on again.
bool ended_by(const DiesRun& run) {
    for (const RunResult& r : run.results) {
        if (r.user_fault) return true;
    }
    return false;
}

}  // namespace

std::vector<RunResult> RankSession::run(std::vector<RankCallRequest>& calls, bool prefetch, bool advise) {
    State& s = *state_;
    if (s.ended) throw rt::RuntimeError("the device ended after a kernel's fault");
    if (calls.empty()) throw BadInput("run_ranks: no call");
    std::vector<bool> busy(s.dies.count(), false);
    for (const RankCallRequest& c : calls) {
        const std::string what = "run_ranks";
        s.die(c.rank, what);
        if (busy[c.rank]) throw BadInput(what + ": rank " + std::to_string(c.rank) + " has two calls in one run");
        busy[c.rank] = true;
        if (c.handle < 0 || c.handle >= static_cast<int>(s.callables.size())) {
            throw BadInput("rank " + std::to_string(c.rank) + ": no callable registered with handle " +
                           std::to_string(c.handle));
        }
        const LoadedCallable& callable = s.callables[c.handle];
        if (callable.uses_sdma && !s.workers[c.rank]->sdma_enabled()) {
            throw rt::RuntimeError("ChipWorker was created without enable_sdma=True");
        }
        for (size_t i = 0; i < c.tensors.size(); ++i) {
            const CallTensor& t = c.tensors[i].tensor;
            if (t.gm) s.check_range(c.rank, t.gm, tensor_bytes(t), "rank " + std::to_string(c.rank) + " tensor " +
                                                                        std::to_string(i));
        }
    }
    s.running = "ranks";
    for (size_t i = 0; i < calls.size(); ++i) s.running += (i ? "," : " ") + std::to_string(calls[i].rank);
    s.warmup_reported = true;  // in the hello (`pfsim device`'s first reply), not in a call's result
    RunRequest request;  // what the calls ask of the dies beyond their work
    request.prefetch = prefetch;
    request.advise = advise;
    const DieRun die_run(request);
    DiesRun run;
    std::vector<RankDie> on;
    for (size_t i = 0; i < calls.size(); ++i) {
        const LoadedCallable& callable = s.callables[calls[i].handle];
        on.push_back({calls[i].rank, s.workers[calls[i].rank].get(), &callable.spec, calls[i].trace});
        RunResult r;
        r.name = std::filesystem::path(callable.spec.orchestration).stem().string();
        r.prefetch = prefetch;
        r.graph = true;
        run.results.push_back(std::move(r));
    }
    const RanksWork work = [&s, &calls](const std::function<std::vector<rt::GraphResult>()>& run_graphs,
                                        std::vector<RunResult>& results) {
        const MappedTensors mapped(s.dies, calls);
        std::vector<std::vector<CallTensor>> tensors(calls.size());
        std::vector<RankCall> rank_calls;
        for (size_t i = 0; i < calls.size(); ++i) {
            for (const RankTensor& t : calls[i].tensors) tensors[i].push_back(t.tensor);
            RankCall rc;
            rc.callable = &s.callables[calls[i].handle];
            rc.tensors = &tensors[i];
            rc.scalars = calls[i].scalars;
            rc.uses_sdma = rc.callable->uses_sdma;
            rc.platform = &s.dies.die(calls[i].rank);
            rc.worker = s.workers[calls[i].rank].get();
            rc.heap_bytes = s.cfg.bytes("orch.heap_bytes");
            rc.rings = calls[i].rings;
            rank_calls.push_back(rc);
        }
        std::vector<CallResult> done = call_ranks(rank_calls, run_graphs);
        for (size_t i = 0; i < calls.size(); ++i) {
            const SimPlatform& die = s.dies.die(calls[i].rank);
            for (size_t k = 0; k < tensors[i].size(); ++k) {
                const CallTensor& t = tensors[i][k];
                OutputResult out;
                out.name = calls[i].tensors[k].name.empty() ? "arg" + std::to_string(k) : calls[i].tensors[k].name;
                out.bytes = tensor_bytes(t);
                out.sha256 = sha256_hex(reinterpret_cast<const uint8_t*>(die.device_pointer(t.gm)), out.bytes);
                out.equal_reference = true;  // the client compares with its golden
                results[i].outputs.push_back(out);
            }
        }
        return done;
    };
    std::string user_stdout;
    try {
        die_run.run_on_dies(s.cfg, s.dies, on, work, run, user_stdout);
    } catch (const CaseError& e) {
        s.ended = ended_by(run);
        throw BadInput(e.what());
    } catch (const rt::OrchestrationError& e) {
        s.ended = ended_by(run);
        throw BadInput(e.what());
    } catch (const std::invalid_argument& e) {
        s.ended = ended_by(run);
        throw BadInput(e.what());
    } catch (...) {
        s.ended = ended_by(run);
        throw;
    }
    s.ended = ended_by(run);
    for (size_t i = 0; i < calls.size(); ++i) {
        finish(run.results[i], s.dies.die(calls[i].rank), run.before[i], run.calls[i].graph.graph_time_ps, s.cfg);
        run.results[i].sim_time_total_ns = now_ns();
    }
    run.results.front().user_stdout = user_stdout;  // the run's, in its first call's result
    return run.results;
}

RunResult RankSession::run(const RunRequest& request) {
    State& s = *state_;
    if (s.ended) throw rt::RuntimeError("the device ended after a kernel's fault");
    RunResult result;
    const CaseSpec spec = read_request_case(request, result);
    const bool warmed = s.workers.front()->warmup().ran;
    const std::string refused =
        spec.ranks != ranks() ? "ranks = " + std::to_string(spec.ranks) + " (the device has " + std::to_string(ranks()) + " dies)"
        : request.progress    ? "a progress callback (report_progress)"
        : !request.warmup && warmed ? "no warm-up (the dies warmed their channels)"
        : (request.enable_sdma && spec.enable_sdma) != sdma_enabled() ? "enable_sdma other than the device's"
                                                                      : "";
    if (!refused.empty()) throw BadInput(spec.name + ": " + refused + " does not run on a device's persistent dies");
    begin_ranks_result(request, spec, result);
    const DieRun die_run(request);
    if (!s.warmup_reported && warmed) result.warmup = s.workers.front()->warmup().summary();  // it ran before this run
    s.warmup_reported = true;
    s.running = spec.name;
    std::vector<rt::Worker*> workers;
    for (const auto& w : s.workers) workers.push_back(w.get());
    try {
        run_case_on_dies(s.cfg, die_run, request, spec, s.dies, workers, s.compiler, result);
    } catch (...) {
        s.ended = result.user_fault;
        report_refusal(result);
    }
    s.ended = result.user_fault;
    result.sim_time_total_ns = now_ns();
    return result;
}

}  // namespace pfsim::api
