// A simulated die that persists across runs, as a device does: the die, its
// worker (SDMA channels provisioned and warmed once) and the registered
// callables live as long as the session; L2 contents and simulated time carry
// over from one run to the next. The Python package's Worker drives one
// session per device process (`pfsim device`, docs/python.md). Each run goes
// through the one place a request becomes a result on a die
// (session/die_run.h), as api::run's: the first run on a device gives what
// `pfsim run` gives for the same request, byte for byte.
#pragma once

#include <cstdint>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "session/run.h"
#include "session/case_runner.h"
#include "session/runtime_slots.h"

namespace pfsim::api {

struct DeviceCall {
    int handle = 0;
    std::vector<CallTensor> tensors;  // in order, before the scalars; data updated in place
    // The client's transfer file, when the tensors' bytes are in it: tensor i
    // at byte offsets[i], a multiple of 4096. For the run, each tensor's GM is
    // that part of the file, mapped (tensors' `data` unused): its initial values
    // are the file's bytes, and what the run leaves there is in the file
    // afterwards, with no copy either way. After the run that GM reads as zeros.
    std::string transfer;
    std::vector<uint64_t> offsets;
    // Tensor i's own file where sources[i] is set (its bytes from offsets[i], in
    // place of `transfer`), mapped privately: the run starts from the file's
    // bytes and what it writes stays in the die, never in the file (a client's
    // arguments, shared by its runs without a copy); mapped shared instead where
    // writes_source[i]: what the run writes lands in that file (a client's
    // output tensor that lives in its own memory file: no copy in or out).
    std::vector<std::string> sources;
    std::vector<bool> writes_source;
    std::vector<std::string> names;   // the tensors' names in the result's outputs; "argN" where missing
    std::vector<uint64_t> scalars;    // bits as the kernel receives them
    bool prefetch = true;
    std::string trace;                // a Chrome trace of this run; empty = none
    bool sanitize = false;            // run the protocol sanitizer: the result's `sanitizer`
    bool advise = false;              // run the prefetch advisor: the result's `advisor`
    std::vector<std::string> faults;  // injected into this run only (session/faults.h)
    rt::TaskGraph::RingSizes rings;   // runtime_env: each scope-depth ring's sizes (empty: the defaults)
    uint32_t aicpu_threads = 0;       // simpler's aicpu_thread_num (rt::WorkerOptions::aicpu_threads; 0: its default)
    bool spans = false;               // the result's tasks carry each block's span per core (swimlane records)
    // Each task's record in the result (RunRequest::task_records); false: their count only,
    // for a client that reads none (the harness's own pairs: #49). Not with spans.
    bool task_records = true;
    // What the result's outputs say of tensor i's bytes after the run (missing: its SHA-256).
    enum class Hash { None, Sha256, Digest };  // Digest: base/digest.h's, cheaper, where only equality matters
    std::vector<Hash> hashed;
    int dump_args = 0;                // simpler's --dump-args level (rt::ArgsDump::Level); 0: none
    std::string dump_dir;             // where the argument dump goes (args_dump.json, args.bin)
    std::string scope_stats_dir;      // where simpler's scope_stats.jsonl goes; empty: none
    std::string deps_json;            // where simpler's deps.json (--enable-dep-gen) goes; empty: none
    int runtime_slot = 0;             // the runtime slot its argument record passes through (RuntimeSlots)
    std::optional<uint64_t> lease_generation;  // simpler's pipeline lease of that slot; none: an ordinary call
};

class DeviceSession {
public:
    // Throws rt::RuntimeError when enable_sdma cannot be honoured
    // ("async-DMA workspace provisioning (mask=1) failed with code -1").
    DeviceSession(const Config& cfg, bool enable_sdma);
    ~DeviceSession();
    DeviceSession(const DeviceSession&) = delete;
    DeviceSession& operator=(const DeviceSession&) = delete;

    // Compiles and loads a callable; its handle. Throws CompileError (the
    // compiler's output) or LoadError (the source and the missing symbol).
    int register_callable(const CallableSpec& spec);
    // simpler's prepared slot: compiles and loads a callable whose
    // orchestration is a load of its own (a new object, fresh statics, as the
    // board's AICPU dlopens it per prepared callable); runs on its handle reuse
    // that load. Counted in orchestration_loads() once the load and both
    // entry points resolved; throws as register_callable does, counting nothing.
    int prepare_callable(const CallableSpec& spec);
    // The handle no longer runs (run() refuses it); its object stays mapped.
    void release_callable(int handle);
    // How many orchestration objects prepare_callable loaded; never decreases.
    uint64_t orchestration_loads() const;
    // The runtime slots every run(DeviceCall&) passes its arguments through.
    const RuntimeSlots& runtime_slots() const;
    // The runtime's heap ring, one for every slot (simpler's tensormap_and_ringbuffer
    // keeps it device scratch: one bank): where the last call that allocated from it
    // began its allocations, as the AICPU addresses it; 0 before any did.
    uint64_t heap_base() const;
    // One run; the result carries the tasks, counters, warnings, error. Throws
    // BadInput for a call that cannot run (an unknown handle, the argument
    // count, a func_id no incore declares, a runtime slot or lease RuntimeSlots refuses), rt::RuntimeError for an SDMA
    // callable on a worker without enable_sdma.
    RunResult run(DeviceCall& call);
    // A case file's run (api::run's request) on this die: what `pfsim run`
    // gives for it on a fresh die, when it is the die's first run. Throws as
    // api::run does, and BadInput naming what a persistent die cannot honour
    // (a level-3 case, --waves, no warm-up, a progress callback, enable_sdma
    // other than the device's, core-fault).
    RunResult run(const RunRequest& request);
    // After a run whose kernel faulted, ran past the host-time limit or called
    // exit (RunResult::user_fault): the die is not simulated on; run() refuses.
    bool ended() const;
    // While a run goes on, a line on stderr about every `every_ms` of wall time
    // ("pfsim device: NAME: still running, 12.500 us simulated so far"); 0: never.
    void report_progress(int64_t every_ms);
    bool sdma_enabled() const;
    std::string warmup() const;  // the channel warm-up's summary, or empty
    double now_ns() const;       // simulated time since the session began

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace pfsim::api
