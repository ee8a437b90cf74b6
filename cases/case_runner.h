// Runs a case (case_file.h) on a worker: compiles its incores and its
// orchestration through the compile cache, writes its tensors into GM, runs
// the orchestration to record the task graph, runs the graph on the
// simulated die and compares each output with its golden.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cases/case_file.h"
#include "loader/compiler.h"
#include "runtime/orchestration/task_graph.h"
#include "runtime/platform/platform.h"
#include "runtime/worker.h"

namespace pfsim {

struct CaseOutput {
    std::string name;
    std::vector<uint8_t> data;  // what the run left in GM
    bool golden_equal = false;  // within rtol/atol of the golden everywhere
    double max_abs_diff = 0;
    uint64_t mismatches = 0;
    uint64_t first_mismatch = 0;  // element index
};

struct CaseResult {
    rt::GraphResult graph;
    std::vector<rt::GraphTask> tasks;  // as recorded
    std::vector<CaseOutput> outputs;
    std::vector<std::string> log;      // the orchestration's LOG_* lines
    std::map<int32_t, std::string> incore_sources;
};

// Throws CaseError, CompileError, LoadError or rt::OrchestrationError for a
// case that cannot run (exit 2); a kernel fault or a stuck graph is in
// `graph` (exit 1). `heap_bytes` bounds the outputs the runtime allocates.
CaseResult run_case(const CaseSpec& spec, rt::Platform& platform, rt::Worker& worker, KernelCompiler& compiler,
                    uint64_t heap_bytes);

}  // namespace pfsim
