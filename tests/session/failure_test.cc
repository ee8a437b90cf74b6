// A failed request's kind as the device protocol names it (session/failure.h).
#include "session/failure.h"

#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "runtime/worker.h"
#include "session/case_file.h"
#include "session/request.h"

namespace pfsim::api {
namespace {

template <typename E>
Failure failure_of(const E& e) {
    try {
        throw e;
    } catch (...) {
        return failure_in_flight();
    }
}

Failure failure_of_parsing(const char* text) {
    try {
        const nlohmann::json parsed = nlohmann::json::parse(text);
        return {"parsed", parsed.dump()};
    } catch (...) {
        return failure_in_flight();
    }
    return {};
}

TEST(FailureInFlight, NamesEachErrorOfTheLayersBelowByItsKind) {
    const Failure compile = failure_of(CompileError("k.cpp:3: error"));
    EXPECT_EQ(compile.kind, "compile");
    EXPECT_EQ(compile.message, "k.cpp:3: error");
    EXPECT_EQ(failure_of(LoadError("k.cpp: no symbol")).kind, "bad_input");
    EXPECT_EQ(failure_of(BadInput("x")).kind, "bad_input");
    EXPECT_EQ(failure_of(CaseError("c.toml:2: key")).kind, "bad_input");
    const Failure runtime = failure_of(rt::RuntimeError("PTO2_ERROR_INVALID_ARGS"));
    EXPECT_EQ(runtime.kind, "runtime");
    EXPECT_TRUE(runtime.from_runtime);
    const Failure refused = failure_of(std::runtime_error("no space left"));
    EXPECT_EQ(refused.kind, "runtime");
    EXPECT_FALSE(refused.from_runtime);
    EXPECT_FALSE(compile.from_runtime);
}

TEST(FailureInFlight, RethrowsWhatIsPfsimsOwnFault) {
    EXPECT_THROW(failure_of(std::logic_error("bug")), std::logic_error);
    EXPECT_THROW(failure_of(std::invalid_argument("not a BadInput")), std::invalid_argument);
    EXPECT_THROW(failure_of_parsing("{"), nlohmann::json::exception);
}

}  // namespace
}  // namespace pfsim::api
