// What `pfsim device` reads from its requests (JSON lines, docs/python.md),
// shared by the one-die session (device_command.cc) and the several-die one
// (device_ranks.cc). Each reads its request through a Field (base/json_field.h):
// a missing or mistyped field is a FieldError naming its path ("request.tasks:
// expected a boolean, got a number"); other bad input is api::BadInput.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/json_field.h"
#include "session/device_ranks.h"
#include "session/case_runner.h"
#include "model/config/config.h"

namespace pfsim {

// A "register" request's callable: orchestration {source, function, config},
// incores [{func_id, source, core_type}], include_dirs.
CallableSpec callable_of(const Field& request);
// A tensor's dtype and shape, checked against its "bytes".
CallTensor tensor_of(const Field& tensor, const std::string& what);

// `pfsim device --ranks N`: the session of N dies; std::invalid_argument for
// a count that is not a number SimDies takes.
std::unique_ptr<api::RankSession> make_rank_session(const Config& cfg, const std::string& count, bool enable_sdma);
// One request to it: register, alloc, free, write, read, run_ranks.
nlohmann::json serve_ranks(api::RankSession& ranks, const Config& cfg, const Field& request);

}  // namespace pfsim
