// What an exception leaving a command means to the user: one message on
// stderr (never stdout: it carries --json documents) and the exit status.
#pragma once

#include <functional>
#include <ostream>

namespace pfsim {

// Statuses beyond a command's own 0 (success) and 1 (a check failed).
constexpr int kExitBadInput = 2;  // usage, configuration, trace, kernel or case input; what the machine refused
constexpr int kExitInternal = 3;  // a fault of pfsim's own: the message asks for a report

// Runs `command` and returns its status. What it throws is written to `err`
// as "pfsim: ..." and becomes kExitBadInput for bad input (UsageError,
// api::BadInput, ConfigError, TraceError), for what the environment refused
// (any other std::runtime_error: a file system error, an unusable compiler)
// and for running out of memory (std::bad_alloc: the input asks for more than
// this machine has); anything else (std::logic_error, a JSON type error, a
// SystemC report, a non-standard exception) is an internal error, kExitInternal.
int run_guarded(const std::function<int()>& command, std::ostream& err);

}  // namespace pfsim
