#include "session/device_ranks.h"

#include <chrono>
#include <cstdio>
#include <filesystem>

#include "session/file_pages.h"
#include "session/graph_result.h"
#include "session/run_ranks.h"
#include "session/summary.h"
#include "base/sha256.h"
#include "base/user_code.h"
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
    std::vector<RunResult> results(calls.size());
    // Each traced call's die records into its own file (a die's processes and lanes, as a one-die run's).
    DieTraces traces(s.dies);
    for (const RankCallRequest& c : calls) traces.open(c.rank, c.trace, s.cfg);
    std::vector<PlatformStats> before;
    for (size_t i = 0; i < calls.size(); ++i) {
        SimPlatform& die = s.dies.die(calls[i].rank);
        s.workers[calls[i].rank]->set_prefetch_enabled(prefetch);
        s.workers[calls[i].rank]->set_skip_wait(false);
        results[i].name = std::filesystem::path(s.callables[calls[i].handle].spec.orchestration).stem().string();
        results[i].prefetch = prefetch;
        results[i].graph = true;
        before.push_back(platform_stats(die));
    }
    try {
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
        std::unique_ptr<insight::CommRingLog> rings;
        if (advise) rings = std::make_unique<insight::CommRingLog>(s.dies);
        const Tick start = s.dies.die(0).now_ps();
        const double limit_s = static_cast<double>(s.cfg.time("orch.host_time_limit")) / 1e12;
        user_code::TimeLimit limit(limit_s,
                                   "the host-time limit (orch.host_time_limit = " + std::to_string(limit_s) + " s)");
        // end_graphs gives a result per die; call_ranks takes them in the calls' order.
        const std::vector<CallResult> done = call_ranks(rank_calls, [&s, &calls] {
            std::vector<rt::GraphResult> by_rank = s.dies.end_graphs(), by_call;
            for (const RankCallRequest& c : calls) by_call.push_back(std::move(by_rank.at(c.rank)));
            return by_call;
        });
        for (size_t i = 0; i < calls.size(); ++i) {
            SimPlatform& die = s.dies.die(calls[i].rank);
            RunResult& result = results[i];
            add_graph(done[i], rank_calls[i].callable->spec, die, result);
            if (result.user_fault) s.ended = true;
            for (const CallTensor& t : tensors[i]) {
                OutputResult out;
                out.name = "arg" + std::to_string(result.outputs.size());
                out.bytes = tensor_bytes(t);
                out.sha256 = sha256_hex(reinterpret_cast<const uint8_t*>(die.device_pointer(t.gm)), out.bytes);
                out.equal_reference = true;  // the client compares with its golden
                result.outputs.push_back(out);
            }
            finish(result, die, before[i], done[i].graph.graph_time_ps, s.cfg);
            result.sim_time_total_ns = now_ns();
            if (traces.at(i)) {
                trace_tasks(*traces.at(i), done[i], die);
                die.attach_trace(nullptr);
                try {
                    traces.at(i)->close();
                } catch (const std::runtime_error& e) {  // the trace file could not be written
                    throw BadInput(e.what());
                }
            }
        }
        if (rings) {
            double wait_ns = 0;
            for (const RunResult& r : results) wait_ns += r.counters["sdma"]["comm_prefetch_wait"].get<double>() / 1e3;
            const std::vector<insight::CommRingLog::PrefetchSite> sites = rings->finish(start);
            for (size_t i = 0; i < calls.size(); ++i) {
                advise_comm(results[i], sites, s.callables[calls[i].handle].spec, wait_ns,
                            static_cast<uint32_t>(calls.size()));
            }
        }
    } catch (const CaseError& e) {
        throw BadInput(e.what());
    } catch (const rt::OrchestrationError& e) {
        throw BadInput(e.what());
    } catch (const std::invalid_argument& e) {
        throw BadInput(e.what());
    }
    return results;
}

}  // namespace pfsim::api
