// One run as data: the configuration it is built on and what it runs (a case,
// or a memory-access trace). A plan -- check's pairs, a sweep's points,
// calibrate's figures, the advisor's what-ifs -- is a list of these; an
// executor (cli/children.h: local child processes, each reading its spec as
// JSON on stdin; cli/slurm.h: a Slurm array over a batch folder) runs them and
// hands back each one's summary.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/config/config.h"
#include "session/request.h"

namespace pfsim::api {

// A configuration as it is chosen: a preset, then files, then KEY=VALUE sets,
// in that order (a later one wins).
struct ConfigChoice {
    std::string preset = Config::kDefaultPreset;
    std::vector<std::string> files;
    std::vector<std::string> sets;
    // Throws what Config throws for an unknown preset, a bad file or key.
    Config resolve() const;
};

struct RunSpec {
    ConfigChoice config;
    bool is_replay = false;
    RunRequest run;        // when !is_replay; its `progress` callback is not carried, progress_ms is
    ReplayRequest replay;  // when is_replay
    // The run in words, as a command line would say it, for progress lines
    // ("run .../vector_chain/case.toml --prefetch off --set l2.size=48MiB").
    std::string describe() const;
    bool operator==(const RunSpec& o) const;
};

// A spec and back. In JSON every field but run.target (or replay.file) may be
// left out for its default; run_spec_from_json throws BadInput naming a field
// that is missing, unknown or of the wrong type, worded as base/json_field.h
// words it: "run spec: run.prefetch: expected a boolean, got a string".
nlohmann::json to_json(const RunSpec& spec);
RunSpec run_spec_from_json(const nlohmann::json& j);

}  // namespace pfsim::api
