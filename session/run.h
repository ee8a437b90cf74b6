// The typed entry point under the CLI: one run of a case file (a user's or a
// shipped one) on a fresh simulated die, configuration + request -> result. The CLI
// parses and prints; `check`, `sweep` and `calibrate`, which run a plan of
// runs through an executor (cli/children.h), read the results back through
// the same serializer (to_json / from_json).
//
// Contract: run() builds one die per call, in the process's current SystemC
// context: once per process, or once per run of a Session (session/session.h),
// which gives each run a fresh context and unloads its kernels after it.
// Bad input -- an unknown case or argument, a case file, a source that does
// not build, a trace path that cannot be written -- throws BadInput before or
// instead of a result; anything the run itself finds (a kernel fault, a wrong
// output, a protocol violation, a stuck graph) is in the result.
#pragma once

#include <cstdint>
#include <map>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "insight/advisor.h"
#include "insight/sanitizer.h"
#include "model/config/config.h"
#include "session/request.h"

namespace pfsim::api {

struct OutputResult {
    std::string name;
    uint64_t bytes = 0;
    std::string sha256;
    bool equal_reference = false;
    bool compared = false;  // a case output compared within tolerance (the fields below are set)
    double max_abs_diff = 0;
    uint64_t mismatches = 0, first_mismatch = 0;
    std::string digest = {};  // base/digest.h's of its bytes, where asked instead of sha256 (in the summary only then)
};

struct TaskResult {
    std::string name;
    std::vector<std::string> kernels, cores;
    uint32_t blocks = 1;
    std::vector<uint32_t> deps;
    double start_ns = 0, end_ns = 0;
    bool skipped = false;  // its dispatch predicate was false: retired without a core
    // Each block on each core (rt::TaskRun::CoreSpan), in ns of simulated time since the die started.
    struct Span {
        std::string core;
        uint32_t core_id = 0, block = 0;
        int32_t func_id = -1;  // the kernel it ran
        double dispatch_ns = 0, start_ns = 0, end_ns = 0, finish_ns = 0;
        double busy_ns[5] = {};  // each pipe's busy time (rt::TaskRun::kPipes)
    };
    std::vector<Span> spans;
    uint64_t ring_id = 0;  // simpler's task id: scope-depth ring << 32 | place in the ring
    // The orchestrator's submission of it: when it began and when the task reached the scheduler
    // (simulated ns since the die started, as the spans).
    double submit_ns = 0, release_ns = 0;
    bool drained = false;  // a sync-start cohort that went through the global drain (rt::TaskRun::drained), from drain_ns
    double drain_ns = 0;
    bool early = false;  // staged early on an idle core or a busy core's pending slot (rt::TaskRun::early), from early_ns
    double early_ns = 0;
};

struct RunResult {
    std::string name;       // the case's
    std::string case_path;  // its file (a shipped case's as in pfsim's sources)
    bool prefetch = true;
    std::map<std::string, double> params;  // a case's [params], after --arg
    uint32_t ranks = 1;     // a level-3 case's (session/run_ranks.h)
    bool ran = false;       // false when the runtime refused the launch (error says why)
    double kernel_time_ns = 0;  // the graph's first dispatch to last completion
    uint64_t cycles = 0;
    nlohmann::json counters;  // every block's counters over the run (gm, l2, sdma, cores: `pfsim stats`)
    std::vector<OutputResult> outputs;
    bool reference_equal = true;
    std::vector<std::string> violations, warnings, log, waves;
    std::string error, warmup;
    std::string user_stdout;  // what users' code printed to stdout (kept off pfsim's own stdout)
    bool graph = false;             // a task graph ran (a case, a device call): `tasks` is set
    bool spans = false;             // the summary's tasks carry their spans (a device call asked: swimlane)
    std::vector<TaskResult> tasks;  // a graph's (none when the request kept no task records)
    size_t task_count = 0;          // the tasks the graph ran: tasks.size() when they are kept
    // The request asked for the tasks' records (RunRequest::task_records); false: the
    // summary gives their count alone, `task_count` in place of `tasks`.
    bool task_records = true;
    nlohmann::json lanes, series, timed_pass;
    nlohmann::json faults = nlohmann::json::array();  // what each injected fault did (session/faults.h)
    nlohmann::json teardown;  // after a fatal error (a kernel trapped, a graph stopped): how the worker closed
    double sim_time_total_ns = 0;
    bool sanitized = false;                // `sanitizer` holds the report
    insight::SanitizerReport sanitizer;
    bool user_fault = false;               // GraphResult::user_fault: the die is not to be run on again
    bool advised = false;                  // `advisor` holds the report
    insight::AdvisorReport advisor;
    double l2_hit_rate() const;
    int exit_status() const { return !error.empty() || !reference_equal || !violations.empty() ? 1 : 0; }
};

RunResult run(const Config& cfg, const RunRequest& request);

// What `run`, `check` and `sweep` take: a case file's path stays as it is; a
// shipped case's name becomes its file's path. BadInput listing the shipped
// cases otherwise.
std::string resolve_target(const std::string& target);

// The run's summary (schema pfsim.summary/1, docs/trace-format.md) and back.
// from_json throws BadInput on a document that is not a run summary.
nlohmann::json to_json(const RunResult& result, const Config& cfg);
RunResult from_json(const nlohmann::json& summary);

}  // namespace pfsim::api
