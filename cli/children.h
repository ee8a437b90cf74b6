// The local executor: runs a plan's run specs (session/run_spec.h) as child
// processes of this pfsim binary (a fresh simulated die each, and runs side
// by side), up to `jobs` at a time. Each child is
// `pfsim run-request` reading its spec as JSON on stdin; its JSON summary is
// read back from its stdout. This is the one place that starts pfsim itself.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/run.h"
#include "session/run_spec.h"

namespace pfsim {

struct ChildRun {
    int status = -1;
    nlohmann::json summary;  // discarded when the child printed no JSON
    std::string error_output;  // what the child wrote on stderr
};

// The path of this pfsim binary, which the children run.
// A new folder NAME.XXXXXX in $TMPDIR (else /tmp); throws std::runtime_error naming it.
std::string make_temporary_folder(const std::string& name);

std::string self_path();

// Runs a program (argv[0], looked up on PATH unless it names a path) to its
// end: its exit status, stdout, and stderr without trailing blanks. A program
// that cannot start has status -1 and says so in `err`.
struct ProgramRun {
    int status = -1;
    std::string out, err;
};
ProgramRun run_program(const std::vector<std::string>& argv);

// A child `run --json`'s result: what it printed read back (api::from_json),
// or, when it printed no summary, a result whose error says so.
api::RunResult run_result(const ChildRun& child);

// A run's copies between dies' wait behind prefetches in their rings
// (sdma.comm_prefetch_wait, every die), in ns; 0 when it has none.
double comm_prefetch_wait_ns(const api::RunResult& r);
// The advisor's what-if from the prefetch-off run, the run advised and the
// ideal run (prefetch off, l2.demand = ideal); not measured when a run failed.
insight::WhatIf measured_what_if(const api::RunResult& off, const api::RunResult& advised, const api::RunResult& ideal);

// The re-runs `run --advise` and `check --advise` make for the advised sites
// (at most kMaxSiteWhatIfs, each once, in the advice's order): a prefetch site
// removed (--drop-prefetch) and its lines resident at no cost
// (--free-prefetch); a load site's region warmed (--warm-loads), or its loads
// read around the L2 (--bypass-loads) where the advice is to bypass.
constexpr size_t kMaxSiteWhatIfs = 4;
struct SiteWhatIf {
    std::string where;
    enum class Kind { Removed, Resident, Around } kind = Kind::Removed;
    bool load_site = false;
    // Makes `request` this what-if's run (the site dropped, resident, warmed or read around).
    void apply_to(api::RunRequest& request) const;
};
std::vector<SiteWhatIf> site_what_ifs(const insight::AdvisorReport& report);
// Records, for each advice of what_ifs[i].where, the time of runs[i] (the same
// run made by what_ifs[i].apply_to), when that run ran.
void record_site_what_ifs(insight::AdvisorReport& report, const std::vector<SiteWhatIf>& what_ifs,
                          const std::vector<api::RunResult>& runs);

// How often each child that is still running says so on stderr, with its
// arguments and how long it has run ("pfsim: still running after 20.0 s: run
// gemv_stream ..."); 0: never. 10 s unless a command's --progress sets it.
void set_still_running_every(int64_t ms);

// The in-process executor: runs every spec here, one after another, each on a
// fresh die of its own (api::Session, as a child would), with what
// run_children gives: the status and summary `pfsim run-request` gives for the
// spec (a discarded summary where it prints none), and in `error_output` what
// the spec's bad input said ("pfsim: ..."; the child's other stderr lines,
// warnings and progress, are not kept). For plans whose runs need no process
// of their own (tests): no parallelism, no isolation from a crash of pfsim
// itself (users' code faulting is caught as in a child).
std::vector<ChildRun> run_in_process(const std::vector<api::RunSpec>& runs,
                                     const std::function<void(size_t, size_t)>& progress = nullptr,
                                     const std::function<void(size_t, const ChildRun&)>& finished = nullptr);

// Runs every spec, `jobs` at a time; as each child ends,
// `finished(index, result)` then `progress(done, total)` are called. Results
// are in the order of `runs`, whatever order they finish in.
std::vector<ChildRun> run_children(const std::vector<api::RunSpec>& runs, unsigned jobs,
                                   const std::function<void(size_t, size_t)>& progress = nullptr,
                                   const std::function<void(size_t, const ChildRun&)>& finished = nullptr);

}  // namespace pfsim
