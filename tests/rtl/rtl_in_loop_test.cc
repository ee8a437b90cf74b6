// Whole kernels with the RTL blocks in the loop (pfsim run --set
// sdma.frontend=rtl --set l2.tags=rtl) against the TLM model: outputs
// bit-identical, L2 and SDMA counts identical, kernel time within 5 %; and the
// --waves option.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

using pfsim::test::pfsim;
using pfsim::test::Result;
using pfsim::test::slurp;
using pfsim::test::tmp;

const char* kRtl = " --set sdma.frontend=rtl --set l2.tags=rtl";

nlohmann::json run_json(const std::string& args) {
    const Result r = pfsim("run " + args + " --json");
    EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
    return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

class RtlInTheLoop : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlInTheLoop, MatchesTheTlmModel) {
    const std::string kernel = GetParam();
    const nlohmann::json tlm = run_json(kernel);
    const nlohmann::json rtl = run_json(kernel + kRtl);
    ASSERT_TRUE(tlm.contains("outputs") && rtl.contains("outputs"));
    EXPECT_TRUE(rtl["reference_equal"].get<bool>());
    ASSERT_EQ(rtl["outputs"].size(), tlm["outputs"].size());
    for (size_t i = 0; i < tlm["outputs"].size(); ++i) {
        EXPECT_EQ(rtl["outputs"][i]["sha256"], tlm["outputs"][i]["sha256"]) << tlm["outputs"][i]["name"];
    }
    for (const char* key : {"hits", "misses", "writebacks", "prefetch_lines", "prefetch_resident"}) {
        EXPECT_EQ(rtl["l2"][key], tlm["l2"][key]) << "l2." << key;
    }
    for (const char* key : {"requests", "prefetch_bytes", "copy_bytes", "request_fetch_bytes", "channel_errors"}) {
        EXPECT_EQ(rtl["sdma"][key], tlm["sdma"][key]) << "sdma." << key;
    }
    const double a = tlm["kernel_time_ns"].get<double>(), b = rtl["kernel_time_ns"].get<double>();
    EXPECT_LE(std::fabs(b - a), 0.05 * a) << "TLM " << a << " ns, RTL " << b << " ns";
}

INSTANTIATE_TEST_SUITE_P(Kernels, RtlInTheLoop,
                         ::testing::Values("prefetch_demo", "prefetch_wait", "no_gain", "matmul_tiled",
                                           "gather_rows --arg indices=64", "gemv_stream --arg rows=3072"),
                         [](const auto& info) { return info.param.substr(0, info.param.find(' ')); });

TEST(RtlInTheLoop, CheckPassesWithTheRtl) {
    const Result r = pfsim(std::string("check prefetch_demo matmul_tiled") + kRtl);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(RtlInTheLoop, SameRunSameSummaryAndTrace) {
    const std::string args = std::string("run gather_rows --arg indices=16 --json") + kRtl;
    const Result a = pfsim(args + " --trace " + tmp("a.json"));
    const Result b = pfsim(args + " --trace " + tmp("b.json"));
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_EQ(slurp(tmp("a.json")), slurp(tmp("b.json")));
}

TEST(Waves, VcdHoldsTheFrontEndSignals) {
    const std::string vcd = tmp("frontend.vcd");
    const Result r = pfsim("run prefetch_demo --set sdma.frontend=rtl --waves " + vcd);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string text = slurp(vcd);
    EXPECT_NE(text.find("$scope module sdma_frontend"), std::string::npos);
    EXPECT_NE(text.find(" mem_req_valid "), std::string::npos);
    EXPECT_NE(text.find(" take_valid "), std::string::npos);
    EXPECT_GT(text.size(), 10000u);
}

TEST(Waves, BothBlocksWriteOneFstFileEach) {
    const std::string base = tmp("both");
    const Result r = pfsim("run prefetch_demo" + std::string(kRtl) + " --waves " + base + ".fst");
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char* block : {".sdma_frontend.fst", ".l2_tags.fst"}) {
        const std::string f = slurp(base + block);
        EXPECT_GT(f.size(), 1000u) << block;
        EXPECT_EQ(f.find("$scope"), std::string::npos) << block << " is text, not FST";
    }
}

TEST(Waves, BadRequestsAreRefusedWithExitTwo) {
    Result r = pfsim("run prefetch_demo --waves " + tmp("x.vcd"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("--waves needs an RTL block"), std::string::npos) << r.err;
    r = pfsim("run prefetch_demo --set l2.tags=rtl --waves " + tmp("x.txt"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("must end in .vcd or .fst"), std::string::npos) << r.err;
    r = pfsim("run prefetch_demo --set l2.tags=rtl --waves /nonexistent/dir/x.vcd");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/nonexistent/dir/x.vcd"), std::string::npos) << r.err;
    r = pfsim("run prefetch_demo --set l2.tags=rtl --set l2.ways=16 --set l2.size=128MiB");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("l2.tags = rtl"), std::string::npos) << r.err;
    // The L2 tests' small build is theirs (tests/support/rtl_tags_small.cc), not the product's.
    r = pfsim("run prefetch_demo --set l2.tags=rtl --set l2.size=64KiB --set l2.ways=4 --set l2.slices=4");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("no RTL build of the tags has this configuration's geometry (4 slices, 32 sets"),
              std::string::npos) << r.err;
    r = pfsim("run prefetch_demo --set sdma.frontend=rtl --set sdma.channels=8");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("built for 48 channels"), std::string::npos) << r.err;
}

}  // namespace
