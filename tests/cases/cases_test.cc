// Case files end to end through the pfsim binary: the shipped cases, a
// user's case written into a fresh folder, and bad input.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

namespace fs = std::filesystem;
using pfsim::test::pfsim;
using pfsim::test::Result;
using pfsim::test::tmp;

// Every run in this test shares the tests' compile cache.
const bool kCache = [] {
    setenv("PFSIM_CACHE_DIR", pfsim::test::shared_cache().c_str(), 1);
    return true;
}();

std::string put(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
}

// `text` with the first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

nlohmann::json json_of(const Result& r) {
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
}

TEST(ShippedCases, TheDemoRunsAsOneAivTaskAndCopiesExactly) {
    const Result r = pfsim("run cases/prefetch_demo/case.toml --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = json_of(r);
    ASSERT_EQ(j["tasks"].size(), 1u);
    EXPECT_EQ(j["tasks"][0]["cores"][0], "die.aiv0");
    EXPECT_EQ(j["tasks"][0]["kernels"][0], "kernel_prefetch_copy.cpp");
    EXPECT_TRUE(j["outputs"][0]["equal_reference"].get<bool>());
    EXPECT_EQ(j["sdma"]["prefetch_requests"], 1);
    EXPECT_GT(j["kernel_time_ns"].get<double>(), 0);
}

TEST(ShippedCases, CheckPassesAndAFlippedPrefetchedByteFailsIt) {
    const Result good = pfsim("check cases/prefetch_demo/case.toml");
    EXPECT_EQ(good.status, 0) << good.out << good.err;
    const Result bad = pfsim("check cases/prefetch_demo/case.toml --inject prefetch-corrupt");
    EXPECT_EQ(bad.status, 1) << bad.out;
    EXPECT_NE(bad.out.find("output out differs between prefetch off and on"), std::string::npos) << bad.out;
}

TEST(ShippedCases, DependenciesComeFromTheTensorsAcrossNestedScopes) {
    const Result r = pfsim("run cases/vector_chain/case.toml --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = json_of(r);
    ASSERT_EQ(j["tasks"].size(), 3u);
    EXPECT_EQ(j["tasks"][0]["deps"], nlohmann::json::array());
    EXPECT_EQ(j["tasks"][1]["deps"], nlohmann::json::array({0}));  // reads the allocated sum
    EXPECT_EQ(j["tasks"][2]["deps"], nlohmann::json::array({1}));  // reads the doubled sum
    for (const auto& t : j["tasks"]) EXPECT_EQ(t["cores"].size(), 4u);  // 4 blocks each
    for (int i = 1; i < 3; ++i) {
        EXPECT_GT(j["tasks"][i]["start_ns"].get<double>(), j["tasks"][i - 1]["end_ns"].get<double>());
    }
    EXPECT_TRUE(j["outputs"][0]["equal_reference"].get<bool>());
    // The cores' counters cover every task, not each core's last: a + b, then
    // the sum, then the doubled sum and a, 16384 floats each.
    EXPECT_EQ(j["cores"]["load_bytes"], (2 + 1 + 2) * 65536);
    EXPECT_EQ(j["cores"]["store_bytes"], 3 * 65536);
    EXPECT_EQ(j["cores"]["load_bytes"], j["l2"]["read_bytes"]);
    EXPECT_DOUBLE_EQ(j["lanes"]["mte2_ns"].get<double>(), j["cores"]["mte2"].get<double>() / 1e3);
}

TEST(ShippedCases, TheTraceHasALanePerCoreOfTheTasksAndAnArrowPerDependency) {
    const std::string path = tmp("chain.trace.json");
    ASSERT_EQ(pfsim("run cases/vector_chain/case.toml --trace " + path).status, 0);
    const auto t = nlohmann::json::parse(pfsim::test::slurp(path));
    const auto& events = t.is_object() ? t["traceEvents"] : t;
    int pid = -1;
    for (const auto& e : events) {
        if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "Tasks (AICPU scheduler)") pid = e["pid"];
    }
    ASSERT_GE(pid, 0);
    int slices = 0, flow_starts = 0;
    std::set<int> lanes;
    for (const auto& e : events) {
        if (e["pid"] != pid) continue;
        if (e["ph"] == "X") {
            ++slices;
            lanes.insert(e["tid"].get<int>());
        }
        if (e["ph"] == "s") ++flow_starts;
    }
    EXPECT_EQ(slices, 12);  // 3 tasks x 4 cores
    EXPECT_EQ(lanes.size(), 4u);
    EXPECT_EQ(flow_starts, 2);  // task 1 <- task 0, task 2 <- task 1
}

TEST(ShippedCases, AWarmOfTheNextTasksWeightsDuringAMatmulMakesItsLoadsHit) {
    const Result r = pfsim("check cases/weight_warm/case.toml --strict-gain --json");
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const auto row = json_of(r)["kernels"][0];
    EXPECT_GT(row["l2_hit_rate_on"].get<double>(), 0.9);
    EXPECT_LT(row["l2_hit_rate_off"].get<double>(), 0.1);
    EXPECT_LT(row["time_on_ns"].get<double>(), row["time_off_ns"].get<double>());
}

TEST(ShippedCases, TheRoutedWarmRunsWhatItsRouterChoseAndSkipsTheGatedExpert) {
    // Gate off: the runner-up's row-sum retires without a core, its row of Y keeps its zeros.
    const Result run = pfsim("run cases/routed_warm/case.toml --arg threshold=1000 --json");
    ASSERT_EQ(run.status, 0) << run.err;
    const auto tasks = json_of(run)["tasks"];
    ASSERT_EQ(tasks.size(), 6u);  // matmul, route allocation, router, warm, two row-sums
    EXPECT_FALSE(tasks[4].contains("skipped"));
    EXPECT_TRUE(tasks[5]["skipped"].get<bool>());
    const Result gated = pfsim("check cases/routed_warm/case.toml --arg threshold=1000 --json");
    EXPECT_EQ(gated.status, 0) << gated.out << gated.err;
    // Negative controls, the orchestration changed in a case file beside the
    // shipped sources: without the predicate the runner-up's sums land in Y; with
    // the route read through the pointer, without waiting for the router, the
    // wrong experts are summed. Either fails the golden.
    const std::string shipped = fs::absolute("cases/routed_warm").string();
    std::stringstream read_toml, read_orch;
    read_toml << std::ifstream(shipped + "/case.toml").rdbuf();
    read_orch << std::ifstream(shipped + "/kernels/orchestration/routed_warm_orch.cpp").rdbuf();
    std::string toml = read_toml.str();
    for (size_t at = toml.find("source = \""); at != std::string::npos; at = toml.find("source = \"", at + 1)) {
        toml.insert(at + 10, shipped + "/");
    }
    toml = replaced(toml, shipped + "/kernels/orchestration/routed_warm_orch.cpp", "o.cpp");
    const std::string dir = tmp("routed");
    put(dir + "/case.toml", toml);
    put(dir + "/o.cpp", replaced(read_orch.str(), "rowsum.set_predicate(gate);", "(void)gate;"));
    const Result unpredicated = pfsim("check " + dir + "/case.toml --arg threshold=1000");
    EXPECT_EQ(unpredicated.status, 1) << unpredicated.out << unpredicated.err;
    EXPECT_NE(unpredicated.out.find("FAIL: prefetch off: output differs from the reference"), std::string::npos)
        << unpredicated.out;
    put(dir + "/o.cpp", replaced(read_orch.str(), "get_tensor_data<int32_t>(route, 1, at)", "route.data_as<int32_t>()[slot]"));
    const Result unwaited = pfsim("check " + dir + "/case.toml");
    EXPECT_EQ(unwaited.status, 1) << unwaited.out << unwaited.err;
    EXPECT_NE(unwaited.out.find("FAIL: prefetch off: output differs from the reference"), std::string::npos)
        << unwaited.out;
}

TEST(ShippedCases, ASweepOverACaseShowsTheWarmNeedsTheEnginesBandwidth) {
    const std::string csv = tmp("warm.csv");
    const Result r = pfsim("sweep cases/weight_warm/case.toml --grid sdma.bandwidth=140GB/s,280GB/s --csv " + csv);
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream rows(pfsim::test::slurp(csv));
    std::string header, slow, fast;
    std::getline(rows, header);
    std::getline(rows, slow);
    std::getline(rows, fast);
    auto gain = [](const std::string& row) {
        std::stringstream cells(row);
        std::string cell;
        for (int i = 0; i < 4; ++i) std::getline(cells, cell, ',');
        return std::stod(cell);
    };
    // The warm is still running when the matmul ends: the row-sum misses the
    // lines it has not reached (the warm then passes the lines the row-sum read
    // first through the engine's residency check, and catches up: about 10 %).
    EXPECT_LT(gain(slow), 12.0) << slow;
    EXPECT_GT(gain(fast), 18.0) << fast;
    const Result bad = pfsim("sweep cases/weight_warm/case.toml --grid arg.size=1");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find("has no parameter 'size'"), std::string::npos) << bad.err;
}

void expect_bad(const std::string& args, const std::string& needle);

// The L2-bypass twin (cases/l2_bypass): weights streamed beside
// activations that each round reuses, in an L2 smaller than a round's weights.
// Read around the L2 -- by the hint or by the pointer moved up by
// get_l2_cache_offset(args) -- the weights leave the L2's residency as it was:
// the only lines allocated are the activations', the second round finds them
// all, and it is faster. The twin (no hint, or the no-op Normal hint) allocates
// every weight line and evicts the activations. Without an alias
// (gm.l2_cache_offset = 0) the hint loads as the twin does.
TEST(ShippedCases, WeightsReadAroundTheL2LeaveItsResidencyWhereTheTwinAllocates) {
    const std::string shape = " --arg experts=8 --arg n=512 --arg d=2048 --arg blocks=4 --set l2.size=3MiB --json";
    auto run = [&](const std::string& more) {
        const Result r = pfsim("run l2_bypass" + shape + more);
        EXPECT_EQ(r.status, 0) << r.err;
        return json_of(r);
    };
    const uint64_t x_lines = 8 * 16 * 2048 / 512, w_lines = 8 * 512 * 2048 / 512;  // per round
    const nlohmann::json twin = run(" --arg mode=0"), normal_hint = run(" --arg mode=2");
    const nlohmann::json hint = run(" --arg mode=1"), raw = run(" --arg mode=3");
    const nlohmann::json no_alias = run(" --arg mode=1 --set gm.l2_cache_offset=0");
    for (const nlohmann::json* around : {&hint, &raw}) {
        EXPECT_EQ((*around)["l2"]["bypass_lines"], 2 * w_lines);
        EXPECT_EQ((*around)["l2"]["misses"], x_lines);                 // the activations' first round only
        EXPECT_EQ((*around)["l2"]["hits"], 2 * 2 * x_lines - x_lines);  // 2 rounds of 2 n tiles load them
        EXPECT_LT((*around)["timed_pass"]["ns"].get<double>(), twin["timed_pass"]["ns"].get<double>());
    }
    EXPECT_EQ(hint["timed_pass"], raw["timed_pass"]);
    for (const nlohmann::json* allocating : {&twin, &normal_hint, &no_alias}) {
        EXPECT_EQ((*allocating)["l2"]["bypass_lines"], 0);
        EXPECT_GE((*allocating)["l2"]["misses"].get<uint64_t>(), 2 * (w_lines + x_lines));  // the activations evicted
        EXPECT_EQ((*allocating)["timed_pass"], twin["timed_pass"]);
    }
}

// The advisor tells a streamed load that evicts what other loads reuse to read
// around the L2, and measures it: the twin's weight site (read once a round,
// none of its lines read again, its allocations the activations' second-round
// misses) is advised to bypass, its what-if run with --bypass-loads is faster
// and is the run the advice reports. Not advised: the same stream in an L2
// that holds everything (nothing evicted), nor the run that already bypasses.
TEST(ShippedCases, TheAdvisorTellsAStreamThatEvictsReusedLinesToBypassAndMeasuresIt) {
    const std::string small = "l2_bypass --arg experts=8 --arg n=512 --arg d=2048 --arg blocks=4 --json";
    const Result advised = pfsim("run " + small + " --set l2.size=3MiB --advise");
    ASSERT_EQ(advised.status, 0) << advised.err;
    const auto j = json_of(advised);
    nlohmann::json bypass;
    for (const auto& a : j["advisor"]["advice"]) bypass = a["verdict"] == "bypass" ? a : bypass;
    ASSERT_FALSE(bypass.is_null()) << j["advisor"].dump();
    const std::string site = bypass["where"];
    EXPECT_EQ(site, "kernel_expert_stream.cpp:41");  // the allocating TLOAD of the weights
    for (const auto& l : j["advisor"]["load_sites"]) {
        if (l["where"] != site) continue;
        EXPECT_EQ(l["reused"], 0);
        EXPECT_EQ(l["allocated"], 2 * 8 * 512 * 2048 / 512);
        EXPECT_EQ(l["pollution_misses"], 8 * 16 * 2048 / 512);  // every activation line, missed again in round 2
    }
    const Result around = pfsim("run " + small + " --set l2.size=3MiB --bypass-loads " + site);
    ASSERT_EQ(around.status, 0) << around.err;
    EXPECT_EQ(bypass["around_ns"], json_of(around)["kernel_time_ns"]);
    EXPECT_LT(bypass["around_ns"].get<double>(), j["kernel_time_ns"].get<double>());
    EXPECT_EQ(json_of(around)["l2"]["bypass_lines"], 2 * 8 * 512 * 2048 / 512);
    for (const std::string& quiet : {small + " --advise --no-what-if", small + " --set l2.size=3MiB --arg mode=1 --advise --no-what-if"}) {
        const Result r = pfsim("run " + quiet);
        ASSERT_EQ(r.status, 0) << r.err;
        for (const auto& a : json_of(r)["advisor"]["advice"]) EXPECT_NE(a["verdict"], "bypass") << quiet << a.dump();
    }
}

TEST(ShippedCases, ParamsAreOverriddenWithArgAndSweptWithArgGrids) {
    const Result r = pfsim("run cases/weight_warm/case.toml --arg iters=20 --arg rows=1024 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = json_of(r);
    EXPECT_EQ(j["params"]["iters"], 20.0);
    EXPECT_EQ(j["params"]["rows"], 1024.0);
    EXPECT_TRUE(j["reference_equal"].get<bool>());  // the goldens follow: C = iters x 128
    expect_bad("run cases/weight_warm/case.toml --arg size=3",
               "--arg size=3: cases/weight_warm/case.toml has no parameter 'size' (params: blocks, iters, rows, work)");
    expect_bad("run cases/weight_warm/case.toml --arg rows=many", "--arg rows=many: the value is not a number");
    // check takes them too, for every case it is given: each must have the parameter.
    const Result check = pfsim("check cases/weight_warm/case.toml --arg iters=20 --arg rows=1024 --json");
    ASSERT_EQ(check.status, 0) << check.err;
    const auto c = json_of(check)["kernels"][0];
    EXPECT_EQ(c["params"]["iters"], 20.0);
    EXPECT_EQ(c["params"]["rows"], 1024.0);
    EXPECT_EQ(c["verdict"], "pass");  // C = 20 x 128 is the golden, and both runs give it
    // ... and so do the advisor's measured what-ifs: the load site warmed at no cost is the same run by hand
    // (an engine at half its rate, so that the warm falls behind the row-sum and the advisor names its loads).
    const std::string args = "cases/weight_warm/case.toml --arg iters=20 --arg rows=1024 --set sdma.bandwidth=140GB/s --json";
    const Result advised = pfsim("check " + args + " --advise");
    ASSERT_EQ(advised.status, 0) << advised.err;
    const auto advice = json_of(advised)["kernels"][0]["advisor"]["advice"][0];
    ASSERT_EQ(advice["where"], "kernel_rowsum.cpp:41");
    const Result warmed = pfsim("run " + args + " --prefetch on --warm-loads kernel_rowsum.cpp:41");
    ASSERT_EQ(warmed.status, 0) << warmed.err;
    EXPECT_EQ(advice["resident_ns"], json_of(warmed)["kernel_time_ns"]);
    expect_bad("check cases/weight_warm/case.toml cases/prefetch_demo/case.toml --arg iters=20",
               "prefetch_demo/case.toml has no parameter 'iters' (params: none)");
    const std::string csv = tmp("iters.csv");
    const Result sweep = pfsim("sweep cases/weight_warm/case.toml --grid arg.iters=10,150 --csv " + csv);
    ASSERT_EQ(sweep.status, 0) << sweep.err;
    EXPECT_NE(pfsim::test::slurp(csv).find("\n10,"), std::string::npos);
}

// core.quantum says how far a core may run ahead of SystemC time: a setting of
// the simulation, not of the chip. Held back to it, a core's scalar unit keeps
// its own time (before, it jumped to SystemC time, and a 0.25 us quantum made
// this graph 10 % slower: 91.5 against 83.0 us).
TEST(ShippedCases, TimesDoNotDependOnTheQuantumWithoutContention) {
    const std::string run = "run cases/weight_warm/case.toml --arg blocks=1 --arg rows=256 --arg iters=20 --json";
    for (const char* prefetch : {"off", "on"}) {
        std::vector<double> times;
        for (const char* quantum : {"0.25us", "1us", "2us"}) {
            const Result r = pfsim(run + " --prefetch " + prefetch + " --set core.quantum=" + quantum);
            ASSERT_EQ(r.status, 0) << r.err;
            times.push_back(json_of(r)["kernel_time_ns"].get<double>());
        }
        EXPECT_EQ(times[0], times[1]) << prefetch;
        EXPECT_EQ(times[1], times[2]) << prefetch;
    }
}

TEST(ShippedCases, TimesUnderGmContentionBarelyDependOnTheQuantum) {
    // 32 blocks stream 4 MiB each through the row-sum: GM is the bound. A
    // core's next load can start before the SystemC time its previous store held
    // it to; served at SystemC time instead, the row-sum took 122 / 112 / 99 us
    // at these quanta.
    const std::string run = "run cases/weight_warm/case.toml --prefetch off --arg blocks=32 --arg rows=8192 "
                            "--json --set core.quantum=";
    std::vector<double> times;
    for (const char* quantum : {"0.1us", "0.5us", "2us"}) {
        const Result r = pfsim(run + quantum);
        ASSERT_EQ(r.status, 0) << r.err;
        const nlohmann::json rowsum = json_of(r)["tasks"][2];
        times.push_back(rowsum["end_ns"].get<double>() - rowsum["start_ns"].get<double>());
    }
    const auto [low, high] = std::minmax_element(times.begin(), times.end());
    EXPECT_LT(*high / *low, 1.04) << times[0] << " " << times[1] << " " << times[2];
}

// A user's own case in a fresh folder: a kernel that reads its scalars from
// GM through plain pointers, an orchestration with an explicit dependency.
const char* kUserKernel = R"(#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
#include "intrinsic.h"
// out[i] = in[table[i]] for i < n, read and written through pointers.
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* table = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ int32_t* idx = reinterpret_cast<__gm__ int32_t*>(table->buffer.addr);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    for (int64_t i = 0; i < args[3]; ++i) dst[i] = src[idx[i]];
    dcci(dst, ENTIRE_DATA_CACHE, CACHELINE_OUT);
}
)";
const char* kUserOrch = R"(#include "pto_orchestration_api.h"
extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) { return {4}; }
extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs first;
    first.add_input(args.tensor(0).ref(), args.tensor(1).ref());
    first.add_output(args.tensor(2).ref());
    first.add_scalar(args.scalar(0));
    TaskOutputTensors t = rt_submit_aiv_task(7, first);
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        PTO2TaskId dep = t.task_id();
        CoreTaskArgs second;  // the same gather again; manual scope: only the explicit dependency
        second.add_input(args.tensor(0).ref(), args.tensor(1).ref());
        second.add_output(args.tensor(2).ref());
        second.add_scalar(args.scalar(0));
        second.set_dependencies(&dep, 1);
        rt_submit_aiv_task(7, second);
    }
}
)";
std::string user_case(const std::string& dir, const std::string& extra_tensor_keys = "",
                      const std::string& orch = kUserOrch, const std::string& kernel = kUserKernel) {
    put(dir + "/kernels/aiv/gather.cpp", kernel);
    put(dir + "/kernels/orchestration/orch.cpp", orch);
    return put(dir + "/case.toml", R"(
[orchestration]
source = "kernels/orchestration/orch.cpp"

[[incores]]
func_id = 7
source = "kernels/aiv/gather.cpp"
core_type = "aiv"

[[tensors]]
name = "in"
shape = [64]
init = "arange"

[[tensors]]
name = "table"
dtype = "int32"
shape = [64]
init = "arange"
start = 63
step = -1

[[tensors]]
name = "out"
shape = [64]
output = true
golden = { init = "arange", start = 63, step = -1 }
)" + extra_tensor_keys + R"(
[[scalars]]
name = "n"
value = 64
)");
}

TEST(UserCase, RunsFromItsOwnFolderWithPointerAccessesAndAManualScope) {
    const std::string path = user_case(tmp("user"));
    const Result r = pfsim("run " + path + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = json_of(r);
    EXPECT_EQ(j["kernel"], "case");
    ASSERT_EQ(j["tasks"].size(), 2u);
    EXPECT_EQ(j["tasks"][1]["deps"], nlohmann::json::array({0}));
    EXPECT_TRUE(j["outputs"][0]["equal_reference"].get<bool>()) << j["outputs"];
    // its pointer loads (64 of the table, 64 gathered) through the cores' data cache; the stores,
    // and the loads' misses a 64 B line at a time, through the L2
    EXPECT_GE(j["cores"]["dcache_hits"].get<uint64_t>() + j["cores"]["dcache_misses"].get<uint64_t>(), 2u * 64);
    EXPECT_GT(j["l2"]["hits"].get<uint64_t>() + j["l2"]["misses"].get<uint64_t>(), 64u);
    const Result check = pfsim("check " + path);
    EXPECT_EQ(check.status, 0) << check.out << check.err;
}

TEST(UserCase, AWrongGoldenFailsNamingTheTensorAndTheDifference) {
    const std::string path = user_case(tmp("golden"));
    std::string text = pfsim::test::slurp(path);
    text = replaced(text, "golden = { init = \"arange\", start = 63", "golden = { init = \"arange\", start = 64");
    put(path, text);
    const Result r = pfsim("run " + path + " --json");
    EXPECT_EQ(r.status, 1);
    const auto out = json_of(r)["outputs"][0];
    EXPECT_FALSE(out["equal_reference"].get<bool>());
    EXPECT_EQ(out["max_abs_diff"].get<double>(), 1.0);
    EXPECT_EQ(out["mismatches"], 64);
    EXPECT_NE(r.err.find("output differs from the reference"), std::string::npos) << r.err;
}

// A [golden] source: out[i] = in[table[i]] computed on the host, for a case
// whose output has no golden of its own.
const char* kGatherGolden = R"(#include "pfsim_golden.h"
extern "C" void compute_golden(pfsim::golden::Args& args) {
    const float* in = args.tensor("in").as<float>();
    const int32_t* table = args.tensor("table").as<int32_t>();
    float* out = args.tensor("out").as<float>();
    if (args.scalar("n") > 64) throw std::invalid_argument("n is at most 64");
    for (uint64_t i = 0; i < args.tensor("out").elements; ++i) out[i] = in[table[i] + OFFSET];
}
)";

std::string computed_golden_case(const std::string& dir, const std::string& golden) {
    const std::string path = user_case(dir);
    std::string text = pfsim::test::slurp(path);
    text = replaced(text, "golden = { init = \"arange\", start = 63, step = -1 }\n", "");
    put(dir + "/golden.cpp", golden);
    return put(path, text + "\n[golden]\nsource = \"golden.cpp\"\n");
}

TEST(UserCase, AComputedGoldenIsCompiledFromHostCppAndCompared) {
    const std::string right = computed_golden_case(tmp("computed"), replaced(kGatherGolden, "OFFSET", "0"));
    const Result r = pfsim("run " + right + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(json_of(r)["outputs"][0]["equal_reference"].get<bool>());
    // Negative control: a golden one element off fails the output.
    const std::string wrong = computed_golden_case(tmp("computed_wrong"), replaced(kGatherGolden, "OFFSET", "(i == 5)"));
    const Result w = pfsim("run " + wrong + " --json");
    EXPECT_EQ(w.status, 1) << w.err;
    EXPECT_EQ(json_of(w)["outputs"][0]["mismatches"], 1);
    // A golden that writes over its input after reading it: the kernel still
    // gets the case's values (the golden's writes to inputs are ignored).
    const std::string scribbling = computed_golden_case(
        tmp("computed_scribbling"),
        replaced(replaced(kGatherGolden, "OFFSET", "0"), "\n}\n",
                 "\n    float* in_again = args.tensor(\"in\").as<float>();\n"
                 "    for (uint64_t i = 0; i < args.tensor(\"in\").elements; ++i) in_again[i] = -1;\n}\n"));
    const Result s = pfsim("run " + scribbling + " --json");
    ASSERT_EQ(s.status, 0) << s.err;
    EXPECT_TRUE(json_of(s)["outputs"][0]["equal_reference"].get<bool>());
    // A golden that refuses the case's values, or lacks its symbol: exit 2, named.
    const std::string refusing = computed_golden_case(tmp("computed_refusing"), replaced(replaced(kGatherGolden, "OFFSET", "0"), "> 64", "> 8"));
    const Result f = pfsim("run " + refusing);
    EXPECT_EQ(f.status, 2);
    EXPECT_NE(f.err.find("golden.cpp: compute_golden: n is at most 64"), std::string::npos) << f.err;
    EXPECT_TRUE(f.out.empty()) << f.out;
    const std::string nameless = computed_golden_case(tmp("computed_nameless"),
                                                      replaced(replaced(kGatherGolden, "OFFSET", "0"), "compute_golden", "golden"));
    const Result n = pfsim("run " + nameless);
    EXPECT_EQ(n.status, 2);
    EXPECT_NE(n.err.find("compute_golden"), std::string::npos) << n.err;
    EXPECT_NE(n.err.find("golden.cpp"), std::string::npos) << n.err;
    const std::string typo = computed_golden_case(tmp("computed_typo"), replaced(kGatherGolden, "OFFSET", "0"));
    put(typo, replaced(pfsim::test::slurp(typo), "source = \"golden.cpp\"", "source = \"golden.cpp\"\nfunktion = \"x\""));
    const Result t = pfsim("run " + typo);
    EXPECT_EQ(t.status, 2);
    EXPECT_NE(t.err.find("golden.funktion: unknown key"), std::string::npos) << t.err;
}

TEST(Compile, AMissingCompilerOrAnUnwritableCacheIsNamed) {
    const std::string src = put(tmp("nocc") + "/k.cpp", kUserKernel);
    setenv("PFSIM_CXX", "/nonexistent/g++", 1);
    const Result missing = pfsim("compile " + src);
    const Result run = pfsim("run cases/prefetch_demo/case.toml");
    unsetenv("PFSIM_CXX");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("cannot run the compiler '/nonexistent/g++'"), std::string::npos) << missing.err;
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find("cannot run the compiler"), std::string::npos) << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
    setenv("PFSIM_CACHE_DIR", "/proc/pfsim-cache", 1);
    const Result cache = pfsim("compile " + src);
    const Result check = pfsim("check");
    setenv("PFSIM_CACHE_DIR", pfsim::test::shared_cache().c_str(), 1);
    EXPECT_EQ(cache.status, 2);
    EXPECT_NE(cache.err.find("/proc/pfsim-cache"), std::string::npos) << cache.err;
    EXPECT_EQ(check.status, 2);
    EXPECT_NE(check.err.find("pfsim: error: "), std::string::npos) << check.err;
    EXPECT_NE(check.err.find("/proc/pfsim-cache"), std::string::npos) << check.err;
}

TEST(Compile, BuildsThroughTheCacheAndReportsTheCompilersErrors) {
    const std::string dir = tmp("compile");
    const std::string src = put(dir + "/k.cpp", kUserKernel);
    fs::remove_all(dir + "/cache");  // a cold cache of its own
    setenv("PFSIM_CACHE_DIR", (dir + "/cache").c_str(), 1);
    const Result first = pfsim("compile " + src + " --core aic --json");
    ASSERT_EQ(first.status, 0) << first.err;
    EXPECT_FALSE(json_of(first)["sources"][0]["cached"].get<bool>());
    const Result again = pfsim("compile " + src + " --core aic");
    EXPECT_EQ(again.status, 0);
    EXPECT_NE(again.out.find("k.cpp (aic): ok, cached"), std::string::npos) << again.out;
    const Result orch = pfsim("compile " + put(dir + "/o.cpp", kUserOrch) + " --orchestration");
    EXPECT_EQ(orch.status, 0) << orch.err;
    const std::string bad = put(dir + "/bad.cpp", std::string(kUserKernel) + "int broken(\n");
    const Result r = pfsim("compile " + bad);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("bad.cpp:17:"), std::string::npos) << r.err;
    const Result usage = pfsim("compile " + src + " --core gpu");
    setenv("PFSIM_CACHE_DIR", pfsim::test::shared_cache().c_str(), 1);
    EXPECT_EQ(usage.status, 2);
    EXPECT_NE(usage.err.find("--core takes aiv or aic, not 'gpu'"), std::string::npos) << usage.err;
}

// Bad input: exit 2, the message on stderr naming what is at fault, stdout empty.
void expect_bad(const std::string& args, const std::string& needle) {
    const Result r = pfsim(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(UserCase, BadCaseFilesAreRefusedWithFileLineAndKey) {
    const std::string dir = tmp("bad");
    put(dir + "/unknown.toml", "[orchestration]\nsource = \"o.cpp\"\n\n[[incores]]\nfunc_id = 0\nsource = \"k.cpp\"\ncore_type = \"aiv\"\nspeed = 3\n");
    expect_bad("run " + dir + "/unknown.toml", "unknown.toml:8: incores.speed: unknown key");
    put(dir + "/dtype.toml", std::string("[orchestration]\nsource = \"o.cpp\"\n[[incores]]\nfunc_id = 0\nsource = \"k.cpp\"\n") +
                                 "core_type = \"aiv\"\n[[tensors]]\nname = \"x\"\ndtype = \"float8\"\nshape = [4]\n");
    expect_bad("run " + dir + "/dtype.toml", "dtype.toml:9: tensors.dtype: unknown dtype 'float8'");
    // A key of the wrong type is named with its line; the control: one left out is named missing.
    put(dir + "/orch.toml", "orchestration = 5\n[[incores]]\nfunc_id = 0\nsource = \"k.cpp\"\ncore_type = \"aiv\"\n");
    expect_bad("run " + dir + "/orch.toml", "orch.toml:1: orchestration: must be a table with source and function");
    put(dir + "/no_orch.toml", "[[incores]]\nfunc_id = 0\nsource = \"k.cpp\"\ncore_type = \"aiv\"\n");
    expect_bad("run " + dir + "/no_orch.toml", "no_orch.toml: orchestration: missing (a table with source and function)");
    // Values an integer tensor cannot hold: converting them would be undefined, so the case is refused.
    const std::string head = "[orchestration]\nsource = \"o.cpp\"\n[[incores]]\nfunc_id = 0\nsource = \"k.cpp\"\n"
                             "core_type = \"aiv\"\n[[tensors]]\nname = \"x\"\nshape = [4]\n";
    const std::pair<std::string, std::string> unfit[] = {
        {"dtype = \"int8\"\ninit = \"fill\"\nvalue = 1e10\n", ":12: tensors.value: the value, 1e+10, is beyond int8 (-128 to 127)"},
        {"dtype = \"uint8\"\ninit = \"arange\"\nstart = 250\nstep = 2\n",
         ":13: tensors.step: the last element (start + step x 3 = 250 + 2 x 3), 256, is beyond uint8 (0 to 255)"},
        {"dtype = \"int8\"\ninit = \"arange\"\nstart = 126\n",  // no step: init names it
         ":11: tensors.init: the last element (start + step x 3 = 126 + 1 x 3), 129, is beyond int8 (-128 to 127)"},
        {"dtype = \"int32\"\ninit = \"random\"\nlow = -1e12\n", ":12: tensors.low: the lowest value"},
        {"dtype = \"int8\"\ninit = \"random\"\nlow = -128.5\nhigh = 0\n", ":12: tensors.low: the lowest value, -129,"},
        {"dtype = \"uint16\"\ninit = \"random\"\nhigh = 70000\n", ":12: tensors.high: the highest value"},
        {"dtype = \"int64\"\ninit = \"fill\"\nvalue = nan\n", ":12: tensors.value: the value, nan,"},
    };
    for (const auto& [values, message] : unfit) {
        put(dir + "/unfit.toml", head + values);
        expect_bad("run " + dir + "/unfit.toml", "unfit.toml" + message);
    }
    // The limits themselves are fine (parsed as far as the missing sources).
    put(dir + "/fit.toml", head + "dtype = \"int8\"\ninit = \"random\"\nlow = -128\nhigh = 128\n");
    expect_bad("run " + dir + "/fit.toml", "k.cpp: cannot read the source file");
    expect_bad("run " + dir + "/missing.toml", "missing.toml: cannot read the case file");
    expect_bad("run " + dir, "unknown kernel");
    put(dir + "/syntax.toml", "[orchestration\n");
    expect_bad("run " + dir + "/syntax.toml", "syntax.toml:1:");
    expect_bad("check " + dir + "/unknown.toml", "unknown.toml:8: incores.speed");
}

TEST(UserCase, SourcesThatDoNotBuildOrLinkAreNamed) {
    // A compile error: the compiler's own message, with file and line.
    std::string kernel = kUserKernel;
    kernel = replaced(kernel, "dst[i] = src[idx[i]];", "dst[i] = src[idx[i]] + undeclared;");
    expect_bad("run " + user_case(tmp("cc"), "", kUserOrch, kernel), "gather.cpp:14:");
    // A missing source.
    const std::string dir = tmp("nosrc");
    const std::string path = user_case(dir);
    fs::remove(dir + "/kernels/aiv/gather.cpp");
    expect_bad("run " + path, "gather.cpp: cannot read the source file");
    // A missing orchestration entry.
    std::string orch = kUserOrch;
    orch = replaced(orch, "aicpu_orchestration_entry", "renamed_entry");
    expect_bad("run " + user_case(tmp("sym"), "", orch), "no symbol 'aicpu_orchestration_entry'");
    // A func_id no incore declares.
    orch = kUserOrch;
    orch = replaced(orch, "rt_submit_aiv_task(7, first)", "rt_submit_aiv_task(3, first)");
    expect_bad("run " + user_case(tmp("func"), "", orch), "task 0 (aiv, func 3): func_id 3 is not one of the callable's incores");
    // An incore submitted to the other core type.
    orch = kUserOrch;
    orch = replaced(orch, "rt_submit_aiv_task(7, first)", "rt_submit_aic_task(7, first)");
    expect_bad("run " + user_case(tmp("type"), "", orch), "is built for aiv but submitted to an aic slot");
    // Fewer arguments than expected_arg_count.
    orch = kUserOrch;
    orch = replaced(orch, "return {4};", "return {5};");
    expect_bad("run " + user_case(tmp("argc"), "", orch), "expects 5 arguments; the case gives 4");
    // A tensor after a scalar.
    orch = kUserOrch;
    orch = replaced(orch, "first.add_scalar(args.scalar(0));", "first.add_scalar(1); first.add_input(args.tensor(0).ref());");
    expect_bad("run " + user_case(tmp("order"), "", orch), "task 0 (aiv, func 7): a tensor was added after a scalar");
}

TEST(UserCase, ANpyThatDoesNotMatchItsTensorIsNamed) {
    const std::string dir = tmp("npy");
    const std::string path = user_case(dir);
    std::string text = pfsim::test::slurp(path);
    text = replaced(text, "name = \"in\"\nshape = [64]\ninit = \"arange\"", "name = \"in\"\nshape = [64]\nnpy = \"in.npy\"");
    put(path, text);
    // A float64 array of 64 elements: the tensor is float32.
    std::string npy("\x93NUMPY\x01\x00", 8);
    std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (64,), }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    npy += static_cast<char>(header.size());
    npy += '\0';
    npy += header + std::string(64 * 8, '\0');
    put(dir + "/in.npy", npy);
    expect_bad("run " + path, "tensor in: " + dir + "/in.npy holds <f8 [64], the tensor is float32");
}

TEST(UserCase, AFaultingKernelNamesTheTaskCoreAndWhy) {
    std::string kernel = kUserKernel;
    kernel = replaced(kernel, "    for (int64_t i = 0;", "    Tile<TileType::Vec, float, 1, 4096> big; TASSIGN(big, 190 * 1024);\n" "    for (int64_t i = 0;");
    const Result r = pfsim("run " + user_case(tmp("fault"), "", kUserOrch, kernel));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("task 0 (aiv, func 7) block 0 on die.aiv0 (" + tmp("fault") +
                         "/kernels/aiv/gather.cpp): gather.cpp:14: tile at UB offset"),  // the TASSIGN's line
              std::string::npos)
        << r.err;
    // A pointer into GM beyond every allocation.
    kernel = replaced(kUserKernel, "dst[i] = src[idx[i]];", "dst[i] = src[idx[i] + (1 << 24)];");
    const Result wild = pfsim("run " + user_case(tmp("wild"), "", kUserOrch, kernel));
    EXPECT_EQ(wild.status, 1);
    EXPECT_NE(wild.err.find("block 0 on die.aiv0"), std::string::npos) << wild.err;
    EXPECT_NE(wild.err.find("bytes) outside every allocation"), std::string::npos) << wild.err;
}

TEST(UserCase, AScalarAccessThroughGmsUncachedAliasIsRefusedByName) {
    // A pointer moved up by get_l2_cache_offset(args) names GM's uncached alias:
    // TLOAD reads around the L2 through it; a raw pointer access is not modelled.
    const std::string kernel = replaced(kUserKernel, "dst[i] = src[idx[i]];",
                                        "dst[i] = *reinterpret_cast<__gm__ float*>(reinterpret_cast<uint64_t>(src + idx[i]) + "
                                        "get_l2_cache_offset(args));");
    const Result r = pfsim("run " + user_case(tmp("alias"), "", kUserOrch, kernel));
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("a scalar load from GM address"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("through GM's uncached alias (gm.l2_cache_offset) is not modelled"), std::string::npos) << r.err;
    // With no alias (offset 0) the same kernel reads GM as any pointer does.
    const Result plain = pfsim("run " + tmp("alias") + "/case.toml --set gm.l2_cache_offset=0");
    EXPECT_EQ(plain.status, 0) << plain.err;
}

TEST(UserCase, AGraphThatCannotFinishStopsAtTheTimeLimitNamingWhatIsPending) {
    std::string kernel = kUserKernel;  // waits for a flag nobody sets
    kernel = replaced(kernel, "    for (int64_t i = 0;", "    volatile __gm__ int32_t* flag = idx + 1; while (*flag != 12345) {}\n" "    for (int64_t i = 0;");
    const Result r = pfsim("run " + user_case(tmp("stuck"), "", kUserOrch, kernel) + " --set orch.time_limit=200us");
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("did not finish within orch.time_limit; still pending: 2 tasks"), std::string::npos) << r.err;
}

// A race: two tasks without a dependency, the second reading what the first
// writes after 2 us of its own. Prefetch moves the first task's write, so the
// two runs disagree -- what check exists to catch.
TEST(UserCase, ARaceThatPrefetchTimingExposesFailsCheck) {
    const char* kernel = R"(#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    if (args[3] == 0) {  // the writer: prefetch its input (a few us with prefetch on), then write
        using G = GlobalTensor<float, Shape<1, 1, 1, 1, 64>, Stride<1, 1, 1, 1, 1>>;
        PrefetchAsyncContext ctx(get_dma_workspace(args, DMA_WORKSPACE_SDMA));
        TPREFETCH_ASYNC(G(reinterpret_cast<__gm__ float*>(in->buffer.addr)), ctx).Wait(ctx.session);
        dst[0] = 1.0f;
    } else {  // the reader: 2 us later, copy what it finds
        const uint64_t until = get_sys_cnt() + 100;
        while (get_sys_cnt() < until) {}
        dst[1] = dst[0];
    }
}
)";
    const char* orch = R"(#include "pto_orchestration_api.h"
extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) { return {4}; }
extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    for (int role = 0; role < 2; ++role) {
        CoreTaskArgs t;
        t.add_input(args.tensor(0).ref(), args.tensor(1).ref());
        t.add_no_dep(args.tensor(2).ref());
        t.add_scalar(role);
        rt_submit_aiv_task(7, t);
    }
}
)";
    const std::string path = user_case(tmp("race"), "", orch, kernel);
    std::string text = pfsim::test::slurp(path);
    text = replaced(text, "golden = { init = \"arange\", start = 63, step = -1 }", "golden = { init = \"zeros\" }\natol = 1");
    put(path, text);
    const Result r = pfsim("check " + path);
    EXPECT_EQ(r.status, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("output out differs between prefetch off and on"), std::string::npos) << r.out;
}

TEST(UserCase, AParameterNameThatIsNotDefinedIsNamedWithItsLine) {
    const std::string dir = tmp("params");
    const std::string path = user_case(dir);
    put(path, replaced(pfsim::test::slurp(path), "name = \"n\"\nvalue = 64", "name = \"n\"\nvalue = \"count * 2\""));
    expect_bad("run " + path, "case.toml:31: scalars.value: 'count' is not a parameter (params: none)");
}

// Deferred completion (protocol §3.5, §5 items 20-22).
TEST(Deferred, AWarmRegisteredForDeferredCompletionHoldsItsConsumersUntilTheRecordIsReached) {
    const Result deferred = pfsim("run cases/weight_warm/case_deferred.toml --json");
    ASSERT_EQ(deferred.status, 0) << deferred.err;
    const auto d = json_of(deferred)["tasks"];
    // The warm's kernel returns at once; its task completes when the 8 MiB are in (~35 us).
    EXPECT_GT(d[1]["end_ns"].get<double>() - d[1]["start_ns"].get<double>(), 20000.0);
    EXPECT_GE(d[2]["start_ns"].get<double>(), d[1]["end_ns"].get<double>());
    EXPECT_EQ(d[2]["deps"], nlohmann::json::array({0, 1}));
    // Control: the same warm not registered completes with its kernel.
    const Result plain = pfsim("run cases/weight_warm/case.toml --json");
    ASSERT_EQ(plain.status, 0) << plain.err;
    const auto p = json_of(plain)["tasks"];
    EXPECT_LT(p[1]["end_ns"].get<double>() - p[1]["start_ns"].get<double>(), 10000.0);
}

const char* kDeferredKernel = R"(#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
#include "intrinsic.h"
#include "pto_async_kernel_api.h"
// args: 0 flag (uint32 x 16), 1 role.
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    volatile __gm__ uint32_t* flag = reinterpret_cast<volatile __gm__ uint32_t*>(t->buffer.addr);
    AsyncCtx ctx = get_async_ctx(args);
    const CompletionToken counter{reinterpret_cast<uint64_t>(flag), 1, COMPLETION_ENGINE_SDMA, COMPLETION_TYPE_COUNTER, 0};
    switch (args[1]) {
        case 0:  // 65 conditions
            for (int i = 0; i < 65; ++i) register_completion_condition(ctx, counter);
            pto2::detail::defer_flush(ctx);
            break;
        case 1:  // an error written into the slab
            pto2::detail::defer_error(ctx, 101);
            pto2::detail::defer_flush(ctx);
            break;
        case 2: {  // an SDMA record condition at address 0
            const CompletionToken bad{0, 0, COMPLETION_ENGINE_SDMA, COMPLETION_TYPE_SDMA_EVENT_RECORD, 5};
            register_completion_condition(ctx, bad);
            pto2::detail::defer_flush(ctx);
            break;
        }
        case 3:  // complete once flag[0] >= 1
            save_expected_notification_counter(ctx, flag, 1);
            break;
        case 4: {  // 5 us later, set the flag
            const uint64_t until = get_sys_cnt() + 250;
            while (get_sys_cnt() < until) {}
            flag[0] = 1;
            dcci(flag, SINGLE_CACHE_LINE, CACHELINE_OUT);
            break;
        }
        default: break;  // the consumer
    }
}
)";
const char* kDeferredOrch = R"(#include "pto_orchestration_api.h"
extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) { return {2}; }
extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const uint64_t scenario = args.scalar(0);
    auto submit = [&](uint64_t role, const PTO2TaskId* dep) {
        CoreTaskArgs t;
        t.add_no_dep(args.tensor(0).ref());
        t.add_scalar(role);
        if (dep) t.set_dependencies(dep, 1);
        return rt_submit_aiv_task(0, t).task_id();
    };
    if (scenario < 3) {
        submit(scenario, nullptr);
        return;
    }
    const PTO2TaskId waiter = submit(3, nullptr);
    submit(4, nullptr);
    submit(5, &waiter);
}
)";
std::string deferred_case(const std::string& dir, int scenario) {
    put(dir + "/k.cpp", kDeferredKernel);
    put(dir + "/o.cpp", kDeferredOrch);
    return put(dir + "/case.toml", R"(
enable_sdma = false
[orchestration]
source = "o.cpp"
[[incores]]
func_id = 0
source = "k.cpp"
core_type = "aiv"
[[tensors]]
name = "flag"
dtype = "uint32"
shape = [16]
[[scalars]]
name = "scenario"
value = )" + std::to_string(scenario) + "\n");
}

TEST(Deferred, ErrorCodesAreLatchedAndNamed) {
    const std::string dir = tmp("deferred_errors");
    const struct {
        int scenario;
        const char* message;
    } cases[] = {
        {0, "scheduler error 102 (PTO2_ERROR_ASYNC_WAIT_OVERFLOW) in task 0 (aiv, func 0)"},
        {1, "scheduler error 101 (PTO2_ERROR_ASYNC_COMPLETION_INVALID) in task 0 (aiv, func 0): the kernel wrote it"},
        {2, "scheduler error 101 (PTO2_ERROR_ASYNC_COMPLETION_INVALID) in task 0 (aiv, func 0): an SDMA_EVENT_RECORD "
            "condition with address 0"},
    };
    for (const auto& c : cases) {
        const Result r = pfsim("run " + deferred_case(dir + std::to_string(c.scenario), c.scenario));
        EXPECT_EQ(r.status, 1) << c.scenario << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.scenario << "\n" << r.err;
    }
}

TEST(Deferred, ACounterConditionHoldsTheTaskUntilAnotherTaskSetsIt) {
    const Result r = pfsim("run " + deferred_case(tmp("deferred_counter"), 3) + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto t = json_of(r)["tasks"];
    // The waiter's kernel returns at once; it completes after the setter's write
    // (5 us into the setter), and its consumer starts after that.
    EXPECT_GT(t[0]["end_ns"].get<double>(), t[1]["start_ns"].get<double>() + 5000);
    EXPECT_GE(t[2]["start_ns"].get<double>(), t[0]["end_ns"].get<double>());
    // A counter nobody sets: the graph stops at the time limit, naming the waiter.
    const Result stuck = pfsim("run " + deferred_case(tmp("deferred_stuck"), 3) + " --set orch.time_limit=3us");
    EXPECT_EQ(stuck.status, 1);
    EXPECT_NE(stuck.err.find("still pending"), std::string::npos) << stuck.err;
    EXPECT_NE(stuck.err.find("task 0 (aiv, func 0)"), std::string::npos) << stuck.err;
}

}  // namespace
