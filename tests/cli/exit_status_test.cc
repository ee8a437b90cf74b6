// run_guarded: every exception a command can throw becomes one message on the
// stream it is given and a documented exit status; nothing escapes.
#include "cli/exit_status.h"

#include <new>
#include <sstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "session/run.h"
#include "cli/options.h"
#include "model/config/config.h"
#include "replay/trace.h"

namespace {

struct Outcome {
    int status;
    std::string message;
};

template <typename Throw>
Outcome guarded(Throw&& thrower) {
    std::ostringstream err;
    const int status = pfsim::run_guarded([&]() -> int { thrower(); return 0; }, err);
    return {status, err.str()};
}

TEST(ExitStatus, TheCommandsOwnStatusPassesThrough) {
    std::ostringstream err;
    EXPECT_EQ(pfsim::run_guarded([] { return 1; }, err), 1);
    EXPECT_EQ(pfsim::run_guarded([] { return 0; }, err), 0);
    EXPECT_EQ(err.str(), "");
}

TEST(ExitStatus, BadInputIsTwoWithItsMessage) {
    Outcome o = guarded([] { throw pfsim::UsageError("--jobs takes a positive count"); });
    EXPECT_EQ(o.status, pfsim::kExitBadInput);
    EXPECT_EQ(o.message, "pfsim: --jobs takes a positive count\n");
    o = guarded([] { throw pfsim::api::BadInput("gemv_stream: rows too large"); });
    EXPECT_EQ(o.status, 2);
    EXPECT_EQ(o.message, "pfsim: gemv_stream: rows too large\n");
    o = guarded([] { throw pfsim::ConfigError("l2.ways: must be at least 1"); });
    EXPECT_EQ(o.status, 2);
    EXPECT_EQ(o.message, "pfsim: configuration error: l2.ways: must be at least 1\n");
    o = guarded([] { throw pfsim::TraceError("t.trace:3: bad address"); });
    EXPECT_EQ(o.status, 2);
    EXPECT_EQ(o.message, "pfsim: trace error: t.trace:3: bad address\n");
}

TEST(ExitStatus, WhatTheMachineRefusedIsTwo) {
    Outcome o = guarded([] { throw std::runtime_error("cannot write /dev/full"); });
    EXPECT_EQ(o.status, 2);
    EXPECT_EQ(o.message, "pfsim: error: cannot write /dev/full\n");
    o = guarded([] { throw std::bad_alloc(); });
    EXPECT_EQ(o.status, 2);
    EXPECT_NE(o.message.find("pfsim: out of memory"), std::string::npos) << o.message;
}

TEST(ExitStatus, AnythingElseIsAnInternalErrorNamedAsSuch) {
    Outcome o = guarded([] { throw std::logic_error("vector::_M_range_check"); });
    EXPECT_EQ(o.status, pfsim::kExitInternal);
    EXPECT_EQ(o.message.rfind("pfsim: internal error: vector::_M_range_check", 0), 0u) << o.message;
    EXPECT_NE(o.message.find("please report"), std::string::npos);
    o = guarded([] { (void)nlohmann::json("abc").get<double>(); });  // a JSON type error
    EXPECT_EQ(o.status, 3);
    EXPECT_NE(o.message.find("type must be number"), std::string::npos) << o.message;
    o = guarded([] { throw 42; });
    EXPECT_EQ(o.status, 3);
    EXPECT_NE(o.message.find("unknown type"), std::string::npos) << o.message;
}

TEST(ExitStatus, ASystemCReportIsAnInternalError) {
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    Outcome o = guarded([] { SC_REPORT_ERROR("/pfsim/test", "a port left unbound"); });
    EXPECT_EQ(o.status, 3);
    EXPECT_EQ(o.message.rfind("pfsim: internal error: SystemC: ", 0), 0u) << o.message;
    EXPECT_NE(o.message.find("a port left unbound"), std::string::npos) << o.message;
}

}  // namespace
