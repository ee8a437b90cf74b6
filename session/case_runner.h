// Runs callables (an orchestration and its incores) on a worker: compiles them
// through the compile cache, writes the call's tensors into GM, runs the
// orchestration to record the task graph, runs the graph on the simulated die
// and reads the tensors back. run_case does that for a case file and compares
// each output with its golden.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "session/case_file.h"
#include "loader/compiler.h"
#include "runtime/orchestration/orchestration_api.h"
#include "runtime/orchestration/task_graph.h"
#include "runtime/platform/platform.h"
#include "runtime/worker.h"

namespace pfsim {

// A callable compiled and loaded: its entry points stay valid while the
// compiler's shared objects are loaded (for the life of the process).
struct LoadedCallable {
    CallableSpec spec;
    std::map<int32_t, rt::Incore> incores;
    void (*entry)(const ChipTaskArgs&) = nullptr;
    PTO2OrchestrationConfig (*config)(const ChipTaskArgs&) = nullptr;
    // An incore builds a prefetch context on the async-DMA workspace (its
    // object needs pfsim::rt::PrefetchAsyncContext): the callable needs a
    // worker with enable_sdma.
    bool uses_sdma = false;
};

// Throws CompileError or LoadError naming the source and the symbol. With
// `own_orchestration` the orchestration is a load of its own (load_own_copy:
// its statics shared with no other callable), else the cached one.
LoadedCallable load_callable(const CallableSpec& spec, KernelCompiler& compiler, bool own_orchestration = false);

// A tensor argument: `data` holds its initial values going in and what the
// run left in GM coming out. Or, with `gm` set, the caller has placed the
// tensor in GM already (allocated by gm_alloc before the call, its initial
// values in place, freed by the caller); `data` stays empty and nothing is
// copied in or read back (the caller reads GM itself).
struct CallTensor {
    rt::DataType dtype = rt::DataType::FLOAT32;
    std::vector<uint32_t> shape;
    std::vector<uint8_t> data;
    uint64_t gm = 0;
};

// Bytes of a tensor's elements (its shape times its element size).
uint64_t tensor_bytes(const CallTensor& t);

struct CallResult {
    rt::GraphResult graph;
    // As recorded (edges and arguments only with dep_records); none kept without task_records.
    rt::TaskWindow<rt::GraphTask> tasks;
    bool task_records = true;  // the worker kept each task's records (rt::Worker::set_task_records)
    rt::TensorStore tensors;  // what the tasks' tensor pointers point at (the graph's own)
    std::vector<std::string> log;      // the orchestration's LOG_* lines
    std::vector<rt::TaskGraph::ScopeRecord> scopes;  // its scopes' boundaries (scope stats)
    uint64_t heap_base = 0;  // device pointer of the call's first heap-ring allocation; 0: it allocated none
};

// Where a call's argument record passes on its way to the orchestration (a
// device's runtime slot, session/runtime_slots.h): given the tensors'
// descriptors and the scalars the host built, leaves in them what the AICPU
// reads back. Empty: the record is handed over as built.
using StageArgs = std::function<void(std::vector<rt::ChipTensor>& tensors, std::vector<uint64_t>& scalars)>;

// One call on `worker`: the tensors (in order, before the scalars) are
// allocated in GM and released after it, along with everything the runtime
// allocated for it (`heap_bytes` bounds the outputs it allocates; `rings`,
// simpler's runtime_env, sizes each scope depth's ring: rt::TaskGraph::RingSizes). Throws
// CaseError (the argument count `config_function` expects), rt::OrchestrationError
// or rt::RuntimeError for a call that cannot run; a kernel fault or a stuck
// graph is in the result's `graph`. The result's `scopes` are recorded only
// when `scope_stats` asks for them, its tasks' edges and arguments (dep-gen's
// records) only when `dep_records` does.
CallResult call(const LoadedCallable& callable, std::vector<CallTensor>& tensors, const std::vector<uint64_t>& scalars,
                bool uses_sdma, rt::Platform& platform, rt::Worker& worker, uint64_t heap_bytes,
                const rt::TaskGraph::RingSizes& rings = {}, bool scope_stats = false, bool dep_records = false,
                const StageArgs& stage = {});

// One rank's call of a run on several dies (call_ranks): what call() takes,
// the worker over the rank's own die.
struct RankCall {
    const LoadedCallable* callable = nullptr;
    std::vector<CallTensor>* tensors = nullptr;
    std::vector<uint64_t> scalars;
    bool uses_sdma = true;
    rt::Platform* platform = nullptr;
    rt::Worker* worker = nullptr;
    uint64_t heap_bytes = 0;
    rt::TaskGraph::RingSizes rings;  // as call() takes them
};

// The calls of several ranks, each on its own die of one simulation, by rank.
// Each rank's orchestration runs in turn, alone (its graph begins at its first
// wait for tensor data or when it returns, and takes no submission after it
// returned); then `run_graphs` (SimDies::end_graphs) runs every graph to its
// end together and gives their results in the calls' order (end_graphs gives
// one per die: the same when the calls are ranks 0, 1, ... in order), and
// each rank's tensors are read back. Throws as call() does
// (the graphs begun so far ended first). A rank's orchestration that waits
// for tensor data its peers produce waits in vain: its peers' graphs have not
// begun.
std::vector<CallResult> call_ranks(const std::vector<RankCall>& calls,
                                   const std::function<std::vector<rt::GraphResult>()>& run_graphs);

struct CaseOutput {
    std::string name;
    std::vector<uint8_t> data;  // what the run left in GM
    bool golden_equal = false;  // within rtol/atol of the golden everywhere
    double max_abs_diff = 0;
    uint64_t mismatches = 0;
    uint64_t first_mismatch = 0;  // element index
};

struct CaseResult : CallResult {
    std::vector<CaseOutput> outputs;
};

// Throws CaseError, CompileError, LoadError or rt::OrchestrationError for a
// case that cannot run (exit 2); a kernel fault or a stuck graph is in
// `graph` (exit 1).
CaseResult run_case(const CaseSpec& spec, rt::Platform& platform, rt::Worker& worker, KernelCompiler& compiler,
                    uint64_t heap_bytes);

// What a run of the case starts from and compares with, without running it:
// each tensor's initial values and each output's golden (empty for an input),
// the [golden] source compiled and called as run_case calls it. A case's
// derived scene test (pfsim case-data, pfsim.testing.CaseFileTest) runs with
// these. Throws as run_case does before it simulates.
struct CaseData {
    std::vector<std::vector<uint8_t>> initial, golden;  // by tensor, in order
};
CaseData case_data(const CaseSpec& spec, KernelCompiler& compiler);

// One rank of a level-3 case's run: its die, its worker, and the device
// pointer of its CommContext (the value of the case's comm_context scalar).
struct CaseRank {
    rt::Platform* platform = nullptr;
    rt::Worker* worker = nullptr;
    uint64_t comm_context = 0;
};

// A level-3 case (spec.ranks > 1): rank r runs the callable on ranks[r] with
// its own copy of the tensors, the graphs together (call_ranks, run_graphs);
// rank r's outputs are compared with the golden computed for it (the [golden]
// source sees the parameters `rank` = r and `ranks`). One result per rank.
// Throws as run_case does.
std::vector<CaseResult> run_case_ranks(const CaseSpec& spec, const std::vector<CaseRank>& ranks, KernelCompiler& compiler,
                                       uint64_t heap_bytes,
                                       const std::function<std::vector<rt::GraphResult>()>& run_graphs);

}  // namespace pfsim
