// What a run is asked to do, as data: a case run (RunRequest, session/run.h
// runs it) or a trace replay (ReplayRequest, session/replay_run.h). Plans carry
// them in run specs (session/run_spec.h).
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pfsim::api {

// Input the run cannot use: the message names the file and line, key, task or
// argument at fault (the CLI exits 2 with it).
class BadInput : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

struct RunRequest {
    std::string target;                    // a shipped case's name, or a case file's path (*.toml)
    std::vector<std::string> kernel_args;  // NAME=VALUE: the case's [params]
    bool prefetch = true;                  // off: every prefetch is a no-op (handle 0)
    bool enable_sdma = true;               // a case file can turn it off too
    bool warmup = true;
    std::vector<std::string> faults;       // --inject: session/faults.h
    std::string trace, waves, outputs_dir; // paths; empty = none
    bool sanitize = false;                 // run the protocol sanitizer (insight/sanitizer.h)
    std::string suppressions;              // its suppressions file; empty = none
    bool advise = false;                   // run the prefetch advisor (insight/advisor.h)
    std::vector<std::string> dropped_sites;  // what-if: prefetches from these "file:line" sites are no-ops
    std::vector<std::string> free_sites;     // what-if: their regions resident at no cost instead (docs/advisor.md)
    std::vector<std::string> warm_load_sites;  // what-if: loads from these sites find their region resident
    std::vector<std::string> around_load_sites;  // what-if: loads from these sites read around the L2
    // Told the simulated ns since a launch began, about every progress_ms of wall
    // time while it runs (null: never).
    std::function<void(double simulated_ns)> progress;
    int64_t progress_ms = 10000;
    // Each task's record in the result (the summary's `tasks`); false: their count only,
    // the records dropped as the tasks retire, for a run whose output reads none (the
    // text summary, check's runs, a device call that asks none): its host memory then
    // does not grow with its task count (#49), and its summary gives `task_count` in
    // place of `tasks`. A trace or the advisor still reads them (the summary lists
    // none); a level-3 case keeps and lists them whatever this says.
    bool task_records = true;
    bool is_case() const;
};

struct ReplayRequest {
    std::string file;           // the trace to replay
    std::string label;          // the summary's `trace`: the file as the user named it
    bool verify = false;        // carry the bytes and compare every read with a flat memory
    bool progress = false;      // a progress bar on stderr
    std::string trace;          // a Chrome trace of the replay; empty = none
};

}  // namespace pfsim::api
