// A replay of a memory-access trace (replay/) on a fresh die, its summary as
// JSON (schema pfsim.summary/1, docs/trace-format.md): what `pfsim replay`
// prints and what a plan's replay runs (calibrate's working sets) read back.
//
// Contract: builds one die per call, once per process or once per replay of a
// Session (session/session.h).
// Throws TraceError for a trace file that cannot be read or a bad line, and
// for a --trace output that cannot be written; a failed replay's reason is the
// summary's `error`, a --verify mismatch its `verify.mismatches`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/config/config.h"
#include "session/request.h"

namespace pfsim::api {

nlohmann::json replay(const Config& cfg, const ReplayRequest& request);

}  // namespace pfsim::api
