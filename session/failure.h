// What a failed request is, named for a client: the kind the device protocol
// replies with (docs/python.md) and the message to show, so that front-ends
// classify the session's, the loader's and the runtime's errors without
// knowing their types.
#pragma once

#include <string>

namespace pfsim::api {

struct Failure {
    std::string kind;     // "compile", "bad_input" or "runtime"
    std::string message;
    bool from_runtime = false;  // an rt::RuntimeError: the runtime refused, or users' code faulted as it ran
};

// The failure the exception being handled is. Call it only inside a catch
// handler. A compile error is "compile"; a load error, a bad input or a bad
// case is "bad_input"; a fault of the user's code at run time and any other
// std::runtime_error (what the environment refused) are "runtime". Anything
// else (a std::logic_error, a JSON type error) is pfsim's own fault and is
// rethrown.
Failure failure_in_flight();

}  // namespace pfsim::api
