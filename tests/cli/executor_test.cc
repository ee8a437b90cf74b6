// The in-process executor (cli/children.h run_in_process) against the child
// it stands in for: each spec of a plan -- runs of shipped cases with prefetch
// on and off and another configuration, a replay, a case whose orchestration
// keeps a static, bad input -- gives the status and summary `pfsim run-request`
// gives, byte for byte, though all of them run in this one process.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/children.h"
#include "loader/shared_object.h"
#include "runtime/platform/sim/sim_context.h"
#include "session/run.h"
#include "session/run_spec.h"
#include "tests/support/pfsim_cli.h"

namespace pfsim {
namespace {

namespace fs = std::filesystem;

// vector_chain with an orchestration that logs how many times it was called
// in this process: 1 in a fresh process, more where its object stayed loaded.
std::string counting_case() {
    const fs::path dir = test::tmp("counting");
    fs::remove_all(dir);
    fs::copy("cases/vector_chain", dir, fs::copy_options::recursive);
    const fs::path orch = dir / "kernels/orchestration/vector_chain_orch.cpp";
    std::string text = test::slurp(orch.string());
    const std::string entry = "void aicpu_orchestration_entry(const ChipTaskArgs& args) {";
    const size_t at = text.find(entry);
    EXPECT_NE(at, std::string::npos);
    text.insert(at + entry.size(), "\n    static int calls = 0;\n    LOG_INFO(\"call %d in this process\", ++calls);");
    std::ofstream(orch) << text;
    return (dir / "case.toml").string();
}

api::RunSpec run_of(const std::string& target, bool prefetch, std::vector<std::string> sets = {}) {
    api::RunSpec spec;
    spec.run.target = target;
    spec.run.prefetch = prefetch;
    spec.config.sets = std::move(sets);
    return spec;
}

// The child's answer to `spec`: `pfsim run-request` with the spec on stdin.
ChildRun child_run(const api::RunSpec& spec) {
    const std::string file = test::write_file("spec.json", api::to_json(spec).dump());
    const test::Result r = test::pfsim("run-request < " + file);
    ChildRun c;
    c.status = r.status;
    c.summary = nlohmann::json::parse(r.out, nullptr, false);
    c.error_output = r.err;
    return c;
}

std::vector<std::string> log_of(const nlohmann::json& summary) {
    std::vector<std::string> calls;
    for (const auto& line : summary.value("log", nlohmann::json::array())) {
        if (line.get<std::string>().find("in this process") != std::string::npos) calls.push_back(line);
    }
    return calls;
}

TEST(InProcess, EachSpecGivesWhatItsChildGivesByteForByte) {
    const std::string counting = counting_case();
    std::vector<api::RunSpec> plan = {run_of("prefetch_demo", true), run_of("prefetch_demo", false),
                                      run_of("vector_chain", true, {"l2.size=48MiB"}), run_of(counting, true),
                                      run_of(counting, true), run_of("no_such_case", true)};
    api::RunSpec replay;
    replay.is_replay = true;
    replay.replay.file = fs::absolute("traces/examples/stream_prefetch.trace").string();
    replay.replay.label = "stream_prefetch.trace";
    replay.replay.verify = true;
    plan.insert(plan.begin() + 2, replay);
    // Two cases whose sanitizer reports name their kernels' lines: the second
    // case's kernels may load where the first's were.
    for (const char* name : {"weight_warm", "gemv_stream"}) {
        plan.push_back(run_of(name, true));
        plan.back().run.sanitize = true;
    }

    std::vector<size_t> finished;
    const std::vector<ChildRun> here = run_in_process(plan, nullptr, [&](size_t i, const ChildRun&) { finished.push_back(i); });
    ASSERT_EQ(here.size(), plan.size());
    EXPECT_EQ(finished, (std::vector<size_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
    for (size_t i = 0; i < plan.size(); ++i) {
        SCOPED_TRACE(plan[i].describe());
        const ChildRun child = child_run(plan[i]);
        EXPECT_EQ(here[i].status, child.status);
        EXPECT_EQ(here[i].summary.dump(2), child.summary.dump(2));
    }
    EXPECT_EQ(here[0].status, 0);
    EXPECT_FALSE(here[0].summary.is_discarded() || here[0].summary.is_null());
    EXPECT_TRUE(here[2].summary.contains("verify"));
    EXPECT_NE(here[8].summary.dump().find("kernel_gemv.cpp:"), std::string::npos);
    // The static starts afresh in each run, as in each child.
    EXPECT_EQ(log_of(here[4].summary), std::vector<std::string>{"INFO aicpu_orchestration_entry: call 1 in this process"});
    EXPECT_EQ(log_of(here[5].summary), log_of(here[4].summary));
    // Bad input: exit 2, no summary, the message naming the case.
    EXPECT_EQ(here[6].status, 2);
    EXPECT_TRUE(here[6].summary.is_discarded());
    EXPECT_NE(here[6].error_output.find("pfsim: unknown kernel 'no_such_case'"), std::string::npos) << here[6].error_output;
}

// The control: a fresh simulation context alone lets a second die be built,
// but the orchestration's object stays loaded and its static counts on --
// what the session's unloading of kernels prevents above.
TEST(InProcess, WithoutUnloadingTheKernelsAStaticCarriesOver) {
    const std::string counting = counting_case();
    const Config cfg = api::RunSpec{}.config.resolve();
    std::vector<std::vector<std::string>> calls;
    for (int i = 0; i < 2; ++i) {
        fresh_simulation_context();
        const api::RunResult r = api::run(cfg, run_of(counting, true).run);
        std::vector<std::string> lines;
        for (const std::string& l : r.log) {
            if (l.find("in this process") != std::string::npos) lines.push_back(l);
        }
        calls.push_back(lines);
    }
    unload_kernels();
    EXPECT_EQ(calls[0], std::vector<std::string>{"INFO aicpu_orchestration_entry: call 1 in this process"});
    EXPECT_EQ(calls[1], std::vector<std::string>{"INFO aicpu_orchestration_entry: call 2 in this process"});
}

}  // namespace
}  // namespace pfsim
