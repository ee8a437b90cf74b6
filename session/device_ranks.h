// Several simulated dies that persist across runs, as the devices of one node
// do: die r is rank r of one SystemC simulation (SimDies), each with its own
// worker (SDMA channels provisioned and warmed once). The Python package's
// level-3 worker drives one such session per device process (`pfsim device
// --ranks N`, docs/python.md): it allocates GM on a rank (communication
// windows, their CommContext), writes and reads it, and runs the calls of
// several ranks together (call_ranks), their graphs in one simulation, so
// that what one rank's kernels send another crosses the modelled link and
// SDMA engine. Each run goes through the N-die form of the one place a
// request becomes a result (DieRun::run_on_dies, session/die_run.h), as a
// level-3 case's `pfsim run` does: a case run on the session's fresh dies
// gives what `pfsim run` gives, byte for byte (tests/session:die_run_test).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "session/case_runner.h"
#include "session/request.h"
#include "session/run.h"

namespace pfsim::api {

// A tensor of a rank's call: either the pages [offset, offset + its bytes
// rounded up to 4096) of the client's file `file` (mapped as the tensor's GM
// for the call: what the kernels write lands in the file), or GM the client
// allocated on that rank already (`tensor.gm` set: a window buffer).
struct RankTensor {
    CallTensor tensor;
    std::string file;
    uint64_t offset = 0;
    std::string name;  // the tensor's name in the result's outputs; empty: "argN"
};

struct RankCallRequest {
    uint32_t rank = 0;
    int handle = 0;
    std::vector<RankTensor> tensors;  // in order, before the scalars
    std::vector<uint64_t> scalars;    // bits as the orchestration receives them
    rt::TaskGraph::RingSizes rings;   // runtime_env: each scope-depth ring's sizes (empty: the defaults)
    std::string trace;                // a Chrome trace of this rank's die for the run; empty = none
};

class RankSession {
public:
    // Throws std::invalid_argument for a rank count SimDies refuses,
    // rt::RuntimeError when enable_sdma cannot be honoured.
    RankSession(const Config& cfg, uint32_t ranks, bool enable_sdma);
    ~RankSession();
    RankSession(const RankSession&) = delete;
    RankSession& operator=(const RankSession&) = delete;

    uint32_t ranks() const;
    // Compiles and loads a callable (any rank may run it); its handle.
    int register_callable(const CallableSpec& spec);

    // GM on rank `rank`: its address and the pointer kernels of any rank use
    // to reach it (what a CommContext's window holds). With `window`, the
    // allocation is a communication window of exactly `bytes` (winSize): other
    // ranks' comm instructions on this rank's GM must then lie in one of its
    // windows (SimDies::add_comm_window). GM is a stack: free(gm) gives back
    // gm and everything allocated on that rank after it, windows included.
    // Throws BadInput naming the rank for a rank out of range or an address
    // not allocated.
    struct Allocation {
        uint64_t gm = 0;
        uint64_t pointer = 0;
    };
    Allocation alloc(uint32_t rank, uint64_t bytes, bool window = false);
    void free(uint32_t rank, uint64_t gm);
    void write(uint32_t rank, uint64_t gm, const void* src, uint64_t bytes);
    void read(uint32_t rank, uint64_t gm, void* dst, uint64_t bytes);

    // The calls of several ranks (at most one per rank), their graphs run
    // together to their ends; one result per call, in order. Throws BadInput
    // for a call that cannot run (rank, handle, argument count, a file that
    // does not hold a tensor), rt::RuntimeError for an SDMA callable without
    // enable_sdma.
    // With `advise`, each result's advisor holds the communication advice of
    // the whole run (session/run_ranks.h advise_comm; not measured).
    // What users' code printed during the run is in the first result's
    // user_stdout.
    std::vector<RunResult> run(std::vector<RankCallRequest>& calls, bool prefetch, bool advise = false);
    // A level-3 case file's run (api::run's request) on these dies, ranks
    // 0..N-1 (session/run_ranks.h run_case_on_dies): what `pfsim run` gives
    // for it on fresh dies, when it is the session's first run. Throws as
    // api::run does, and BadInput naming what persistent dies cannot honour
    // (a case of another rank count, no warm-up, a progress callback,
    // enable_sdma other than the device's).
    RunResult run(const RunRequest& request);
    // After a run in which a rank's kernel faulted the host (RunResult::user_fault).
    bool ended() const;
    // While a run goes on, a line on stderr about every `every_ms` of wall time
    // ("pfsim device: ranks 0,1: still running, 12.500 us simulated so far"); 0: never.
    void report_progress(int64_t every_ms);
    bool sdma_enabled() const;
    std::string warmup() const;  // rank 0's channel warm-up summary, or empty
    double now_ns() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace pfsim::api
