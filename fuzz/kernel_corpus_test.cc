// The kernel corpus (fuzz/kernels/): users' code that misbehaves -- faults,
// loops, prints, exits, throws -- each run through `pfsim run --json` in a copy
// of the shipped prefetch_demo case with its kernel, orchestration (orch_*) or
// [golden] source (golden_*) replaced. The guarantee (docs/testing.md): pfsim
// ends with exit 1 and one JSON summary on stdout whose `error` names the source,
// (for a kernel) the task, block and core, and what went wrong (the corpus
// file's `// expect:` line), and the trace so far is a whole document; nothing
// the code prints reaches stdout. A file
// expecting PASS is the negative control: it prints, yet passes with exit 0.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

namespace fs = std::filesystem;
using pfsim::test::pfsim;
using pfsim::test::Result;
using pfsim::test::slurp;
using pfsim::test::tmp;

const bool kCache = [] {
    setenv("PFSIM_CACHE_DIR", pfsim::test::shared_cache().c_str(), 1);
    return true;
}();

std::vector<std::string> corpus() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator("fuzz/kernels")) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string expectation(const std::string& text) {
    const size_t at = text.find("// expect: ");
    return at == std::string::npos ? "" : text.substr(at + 11, text.find('\n', at) - at - 11);
}

// prefetch_demo's case file in a folder of its own, with `file` in the place its
// name says; the case file's path. The sources `file` does not replace are the
// shipped ones, named by absolute path: one object each for the whole corpus,
// not one per file.
std::string case_with(const std::string& file) {
    const std::string dir = tmp("corpus/" + fs::path(file).stem().string());
    fs::remove_all(dir);
    const std::string kernel = "kernels/aiv/kernel_prefetch_copy.cpp";
    const std::string orchestration = "kernels/orchestration/prefetch_demo_orch.cpp";
    std::string replaced = kernel;
    if (file.rfind("orch_", 0) == 0) replaced = orchestration;
    if (file.rfind("golden_", 0) == 0) replaced = "golden.cpp";
    std::string toml = slurp("cases/prefetch_demo/case.toml");
    const std::string shipped = fs::absolute("cases/prefetch_demo").string() + "/";
    for (const std::string& source : {kernel, orchestration}) {
        if (source == replaced) continue;
        const size_t at = toml.find("\"" + source + "\"");
        toml.replace(at + 1, source.size(), shipped + source);
    }
    if (replaced == "golden.cpp") {
        toml.replace(toml.find("golden = \"src\"\n"), 15, "");
        toml += "\n[golden]\nsource = \"golden.cpp\"\n";
    }
    fs::create_directories(fs::path(dir + "/" + replaced).parent_path());
    std::ofstream(dir + "/" + replaced) << slurp("fuzz/kernels/" + file);
    std::ofstream(dir + "/case.toml") << toml;
    return dir + "/case.toml";
}

class KernelCorpus : public testing::TestWithParam<std::string> {};

TEST_P(KernelCorpus, EndsInANamedReportWithStdoutAJsonDocument) {
    const std::string file = GetParam();
    const std::string expect = expectation(slurp("fuzz/kernels/" + file));
    ASSERT_FALSE(expect.empty()) << file << " has no // expect: line";
    const std::string case_file = case_with(file);
    const std::string trace = fs::path(case_file).parent_path().string() + "/trace.json";
    const Result r = pfsim("run " + case_file + " --json --timeout 1 --trace " + trace);
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "stdout is not one JSON document:\n" << r.out << "\n" << r.err;
    if (expect == "PASS") {
        EXPECT_EQ(r.status, 0) << r.err;
        EXPECT_FALSE(j.contains("error")) << j["error"];
        EXPECT_NE(j.value("user_stdout", "").find("hello from the kernel\nwritten to fd 1\n"), std::string::npos) << r.out;
        EXPECT_NE(r.err.find("hello from the kernel"), std::string::npos) << r.err;
        return;
    }
    EXPECT_EQ(r.status, 1) << r.err;
    const std::string error = j.value("error", "");
    EXPECT_NE(error.find(expect), std::string::npos) << error;
    if (file.rfind("orch_", 0) == 0) {
        EXPECT_NE(error.find("prefetch_demo_orch.cpp: prefetch_demo_orchestration: "), std::string::npos) << error;
    } else if (file.rfind("golden_", 0) == 0) {
        EXPECT_NE(error.find("golden.cpp: compute_golden: "), std::string::npos) << error;
    } else {
        EXPECT_NE(error.find("task 0 (aiv, func 0) block 0 on die.aiv0 ("), std::string::npos) << error;
        EXPECT_NE(error.find("kernel_prefetch_copy.cpp"), std::string::npos) << error;
    }
    EXPECT_NE(r.err.find(error), std::string::npos) << "stderr does not name the failure:\n" << r.err;
    EXPECT_FALSE(nlohmann::json::parse(slurp(trace), nullptr, false).is_discarded()) << "the trace so far: " << trace;
}

// Items 5 and 9 through `check` and `sweep`, whose runs are child processes: a
// kernel that prints passes, stdout one JSON document (sweep: the CSV) and the
// text on stderr (check: and in the row) (it was "the run printed no summary";
// then the text was lost); an endless one
// fails at the host-time limit set by its configuration key (it was "still
// running" forever), naming the task, core, source and line.
TEST(KernelCorpusCheck, APrintingKernelPassesAndAnEndlessOneEndsAtTheHostTimeLimit) {
    const Result prints = pfsim("check " + case_with("prints.cpp") + " --json");
    EXPECT_EQ(prints.status, 0) << prints.err;
    const auto p = nlohmann::json::parse(prints.out, nullptr, false);
    ASSERT_FALSE(p.is_discarded()) << "stdout is not one JSON document:\n" << prints.out;
    EXPECT_EQ(p["kernels"][0]["verdict"], "pass") << prints.out;
    EXPECT_NE(p["kernels"][0].value("user_stdout", "").find("hello from the kernel\n"), std::string::npos) << prints.out;
    EXPECT_NE(prints.err.find("prefetch_demo (prefetch off): users' code printed to stdout"), std::string::npos) << prints.err;
    const Result sweep = pfsim("sweep " + case_with("prints.cpp") + " --grid l2.ways=12");
    EXPECT_EQ(sweep.status, 0) << sweep.err;
    EXPECT_EQ(sweep.out.rfind("l2.ways,time_off_ns,time_on_ns,gain_pct,l2_hit_rate_off,l2_hit_rate_on,error\n12,", 0), 0u)
        << sweep.out;
    EXPECT_EQ(sweep.out.find("hello"), std::string::npos) << sweep.out;
    EXPECT_NE(sweep.err.find("l2.ways=12 (prefetch on): users' code printed to stdout (shown here, not on pfsim's stdout):\n"
                             "hello from the kernel\n"),
              std::string::npos)
        << sweep.err;
    const Result endless = pfsim("check " + case_with("endless_loop.cpp") + " --json --set orch.host_time_limit=1s");
    EXPECT_EQ(endless.status, 1) << endless.err;
    const auto e = nlohmann::json::parse(endless.out, nullptr, false);
    ASSERT_FALSE(e.is_discarded()) << "stdout is not one JSON document:\n" << endless.out;
    EXPECT_EQ(e["kernels"][0]["verdict"], "fail");
    EXPECT_NE(e["kernels"][0].value("reason", "").find(
                  "prefetch off: task 0 (aiv, func 0) block 0 on die.aiv0 ("),
              std::string::npos)
        << e["kernels"][0];
    EXPECT_NE(e["kernels"][0].value("reason", "").find(
                  "kernel_prefetch_copy.cpp:8: kernel still running at the host-time limit (orch.host_time_limit = 1 s"),
              std::string::npos)
        << e["kernels"][0];
}

INSTANTIATE_TEST_SUITE_P(Corpus, KernelCorpus, testing::ValuesIn(corpus()),
                         [](const testing::TestParamInfo<std::string>& info) {
                             return fs::path(info.param).stem().string();
                         });

}  // namespace
