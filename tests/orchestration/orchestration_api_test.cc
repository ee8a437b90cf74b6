// simpler's orchestration API with its behaviour: tensor data read and written
// by the orchestrator in simulated time, heap-ring allocations, dispatch
// predicates, dependency limits, cache maintenance, and bad input. One kernel
// and one orchestration; a scalar picks the scenario.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

namespace fs = std::filesystem;
using pfsim::test::pfsim;
using pfsim::test::Result;
using pfsim::test::tmp;

const bool kCache = [] {
    setenv("PFSIM_CACHE_DIR", pfsim::test::shared_cache().c_str(), 1);
    return true;
}();

// args: 0 buf (int32 x 16), 1 role, 2 value.
const char* kKernel = R"(#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    volatile __gm__ int32_t* buf = reinterpret_cast<volatile __gm__ int32_t*>(t->buffer.addr) + t->start_offset;
    const int32_t value = static_cast<int32_t>(args[2]);
    switch (args[1]) {
        case 0: {  // 5 us of work, then buf[0] = value
            const uint64_t until = get_sys_cnt() + 250;
            while (get_sys_cnt() < until) {}
            buf[0] = value;
            break;
        }
        case 1: buf[1] = buf[0]; break;       // copy
        case 2: buf[3] += value; break;       // add
        case 3: while (buf[15] == 0) {} break;  // waits for what nobody writes
        case 5: buf[0] += 1; t->start_offset += 1; break;  // adds 1, then moves its own descriptor
        default: break;
    }
    dcci(buf, ENTIRE_DATA_CACHE, CACHELINE_OUT);
}
)";

const char* kOrch = R"(#include "pto_orchestration_api.h"
#include "aicpu/cache_maintenance.h"
extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) { return {3}; }
static const uint32_t kAt0[1] = {0}, kAt1[1] = {1}, kAt3[1] = {3};
static PTO2TaskId task(const ChipTensor& buf, int role, int value, int func = 0) {
    CoreTaskArgs a;
    a.add_inout(buf);
    a.add_scalar(role, value);
    return rt_submit_aiv_task(func, a).task_id();
}
extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& buf = args.tensor(0).ref();
    const int scenario = static_cast<int>(args.scalar(0));
    const int value = static_cast<int>(args.scalar(1));
    switch (scenario) {
        case 0: case 1: {  // read what a task wrote, then submit that many copies
            task(buf, 0, value);
            const int32_t n = scenario == 0 ? get_tensor_data<int32_t>(buf, 1, kAt0)
                                            : buf.data_as<int32_t>()[0];  // no wait: not yet written
            LOG_INFO("read %d", n);
            for (int i = 0; i < n; ++i) task(buf, 1, 0);
            break;
        }
        case 2: case 3: {  // overwrite what a task wrote, then copy it
            task(buf, 0, value);
            if (scenario == 2) set_tensor_data(buf, 1, kAt0, int32_t{7});
            else buf.data_as<int32_t>()[0] = 7;  // no wait: the task writes after
            task(buf, 1, 0);
            LOG_INFO("final %d", get_tensor_data<int32_t>(buf, 1, kAt1));
            break;
        }
        case 4: {  // a count in a heap-ring tensor picks which of two tasks runs
            uint32_t shape[1] = {16};
            TensorCreateInfo ci(shape, 1, DataType::INT32);
            TaskOutputTensors count = alloc_tensors(ci);
            set_tensor_data(count.get_ref(0), 1, kAt0, int32_t{0});
            const PTO2TaskId writer = task(count.get_ref(0), 0, value);
            for (int k = 0; k < 2; ++k) {
                CoreTaskArgs a;
                a.add_inout(buf);
                a.set_dependencies(&writer, 1);  // the predicate's producer
                a.add_scalar(2, k == 0 ? 1 : 10);
                CoreTaskPredicate p;
                p.operand = {&count.get_ref(0), 1, {0}};
                p.op = k == 0 ? PredicateOp::GT : PredicateOp::EQ;
                p.target = 0;
                a.set_predicate(p);
                rt_submit_aiv_task(0, a);
            }
            LOG_INFO("final %d", get_tensor_data<int32_t>(buf, 1, kAt3));
            break;
        }
        case 5: {
            ChipTensor none{};
            none.ndims = 1;
            none.shapes[0] = 1;
            get_tensor_data(none, 1, kAt0);  // LINE nobody produced
            break;
        }
        case 6: {
            int32_t local = 1;
            uint32_t shape[1] = {1};
            ChipTensor host = make_tensor_external(&local, shape, 1, DataType::INT32);
            CoreTaskArgs a;
            a.add_inout(buf);
            a.add_scalar(1, 0);
            CoreTaskPredicate p;
            p.operand = {&host, 1, {0}};
            p.op = PredicateOp::NE;
            a.set_predicate(p);
            rt_submit_aiv_task(0, a);  // LINE predicate outside GM
            break;
        }
        case 7: {
            uint32_t shape[1] = {1u << 29};  // 2 GiB of int32, the heap ring holds 1 GiB
            TensorCreateInfo ci(shape, 1, DataType::INT32);
            alloc_tensors(ci);  // LINE beyond the heap
            break;
        }
        case 8: {  // one task depending on `value` earlier ones
            std::vector<PTO2TaskId> ids;
            for (int i = 0; i < value; ++i) ids.push_back(rt_submit_dummy_task(CoreTaskArgs{}).task_id());
            CoreTaskArgs a;
            a.set_dependencies(ids.data(), value);
            rt_submit_dummy_task(a);  // LINE many dependencies
            break;
        }
        case 9:
            task(buf, 3, 0);
            get_tensor_data(buf, 1, kAt0);  // LINE waits forever
            break;
        case 10: {  // poll GM while a task runs
            task(buf, 0, value);
            volatile int32_t* p = buf.data_as<int32_t>();
            int polls = 0;
            for (; p[0] != value; ++polls) cache_invalidate_range(const_cast<int32_t*>(p), 4);
            LOG_INFO("polls %d", polls);
            break;
        }
        case 11:
            rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "the orchestration gives up");  // LINE fatal
            task(buf, 0, value);
            break;
        case 12:  // two tasks with the early-resolve hint
            for (int i = 0; i < 2; ++i) {
                CoreTaskArgs a;
                a.add_inout(buf);
                a.add_scalar(1, 0);
                a.set_allow_early_resolve(true);
                rt_submit_aiv_task(0, a);
            }
            break;
        case 13: {  // poll for what nobody writes
            volatile int32_t* p = buf.data_as<int32_t>();
            while (p[0] != 99) cache_invalidate_range(const_cast<int32_t*>(p), 4);  // LINE polls forever
            break;
        }
        case 14: {  // a sync-start cohort of `value` vector blocks
            CoreTaskArgs a;
            a.add_inout(buf);
            a.add_scalar(4, 0);
            a.launch_spec.set_block_num(value);
            a.launch_spec.set_require_sync_start(true);
            rt_submit_aiv_task(0, a);  // LINE cohort
            break;
        }
        case 15: {  // a CoreTaskArgsWithDeps<2> given `value` dependencies
            CoreTaskArgsWithDeps<2> a;
            for (int i = 0; i < value; ++i) a.add_dep(rt_submit_dummy_task(CoreTaskArgs{}).task_id());
            rt_submit_dummy_task(a);  // LINE with deps
            break;
        }
        case 17: {  // one task of `value` vector blocks, each waiting for what nobody writes
            CoreTaskArgs a;
            a.add_inout(buf);
            a.add_scalar(3, 0);
            a.launch_spec.set_block_num(value);
            rt_submit_aiv_task(0, a);
            break;
        }
        case 16:  // `value` tasks on the same tensor, each moving its descriptor after it added
            for (int i = 0; i < value; ++i) task(buf, 5, 0);
            LOG_INFO("final %d", get_tensor_data<int32_t>(buf, 1, kAt0));
            break;
        default: break;
    }
}
)";

// The sources live in one folder (compiled once), a case file per run.
std::string user_case(const std::string& name, int scenario, int value) {
    const std::string dir = tmp("orchestration_api");
    if (!fs::exists(dir + "/o.cpp")) {
        fs::create_directories(dir);
        std::ofstream(dir + "/k.cpp") << kKernel;
        std::ofstream(dir + "/o.cpp") << kOrch;
    }
    std::ofstream(dir + "/" + name + ".toml") << R"(
enable_sdma = false
[orchestration]
source = "o.cpp"
[[incores]]
func_id = 0
source = "k.cpp"
core_type = "aiv"
[[tensors]]
name = "buf"
dtype = "int32"
shape = [16]
[[scalars]]
name = "scenario"
value = )" + std::to_string(scenario) + R"(
[[scalars]]
name = "value"
value = )" + std::to_string(value) + "\n";
    return dir + "/" + name + ".toml";
}

// "o.cpp:N" for the line of kOrch carrying `marker`.
std::string line_of(const std::string& marker) {
    const std::string text = kOrch;
    const size_t at = text.find(marker);
    EXPECT_NE(at, std::string::npos) << marker;
    return "o.cpp:" + std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

nlohmann::json run_json(const std::string& name, int scenario, int value, const std::string& extra = "") {
    const Result r = pfsim("run " + user_case(name, scenario, value) + " --json" + extra);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
    return j;
}

bool logged(const nlohmann::json& j, const std::string& text) {
    for (const auto& line : j["log"]) {
        if (line.get<std::string>().find(text) != std::string::npos) return true;
    }
    return false;
}

TEST(TensorData, TheOrchestratorReadsWhatATaskWroteOnceItCompletedAndActsOnIt) {
    const auto j = run_json("read", 0, 3);
    EXPECT_TRUE(logged(j, "read 3")) << j["log"];
    ASSERT_EQ(j["tasks"].size(), 4u);  // the writer and three copies
    // The copies were submitted after the read: the writer's end, then the
    // read's orch.tensor_data_cost (1 us), then a submission (0.5 us) and a dispatch.
    EXPECT_GE(j["tasks"][1]["start_ns"].get<double>(), j["tasks"][0]["end_ns"].get<double>() + 1500);
    // Control: the same read through the pointer, without waiting, sees the
    // value before the task ran and submits nothing.
    const auto raw = run_json("read_raw", 1, 3);
    EXPECT_TRUE(logged(raw, "read 0")) << raw["log"];
    EXPECT_EQ(raw["tasks"].size(), 1u);
}

TEST(TensorArguments, AKernelThatMovesItsDescriptorMovesNoOtherTasks) {
    // The three submissions pass equal descriptors, which the graph keeps once; each kernel
    // gets its task's own copy (the board's task payload), so each adds at element 0.
    // Control: kernels given the graph's shared descriptor add at elements 0, 1, 2 ("final 1").
    const auto j = run_json("own_descriptor", 16, 3);
    EXPECT_TRUE(logged(j, "final 3")) << j["log"];
}

TEST(TensorData, AWriteWaitsForTheProducerSoItIsNotOverwritten) {
    EXPECT_TRUE(logged(run_json("write", 2, 3), "final 7"));
    // Control: written through the pointer at once, the task's later write wins.
    EXPECT_TRUE(logged(run_json("write_raw", 3, 3), "final 3"));
}

TEST(Predicate, AFalsePredicateRetiresItsTaskWithoutACoreAndATrueOneRuns) {
    // count = 5: the GT 0 task adds 1, the EQ 0 task is skipped.
    const auto j = run_json("pred_gt", 4, 5);
    EXPECT_TRUE(logged(j, "final 1")) << j["log"];
    const auto& t = j["tasks"];
    ASSERT_EQ(t.size(), 4u);  // the allocation, the writer, two predicated tasks
    EXPECT_EQ(t[2]["deps"], nlohmann::json::array({1}));  // the count's producer
    EXPECT_FALSE(t[2].contains("skipped"));
    EXPECT_EQ(t[2]["cores"].size(), 1u);
    EXPECT_TRUE(t[3]["skipped"].get<bool>());
    EXPECT_EQ(t[3]["cores"].size(), 0u);
    // The twin: count = 0 runs the other one.
    const auto z = run_json("pred_eq", 4, 0);
    EXPECT_TRUE(logged(z, "final 10")) << z["log"];
    EXPECT_TRUE(z["tasks"][2]["skipped"].get<bool>());
    EXPECT_FALSE(z["tasks"][3].contains("skipped"));
}

TEST(Dependencies, SimplersLimitsHoldAtTheirDefaults) {
    // 391 (simpler's dep_gen_chain) run, and 16382: with the consumer, the
    // 16383 tasks of the outer scope the default task window (16384) holds.
    for (int n : {391, 16382}) {
        const auto j = run_json("deps" + std::to_string(n), 8, n);
        ASSERT_EQ(j["tasks"].size(), static_cast<size_t>(n + 1));
        EXPECT_EQ(j["tasks"][n]["deps"].size(), static_cast<size_t>(n));
    }
    // One more can never fit while the scope is open: simpler's scope deadlock,
    // naming the task, the line and the code (the pool's own limits:
    // tests/python/test_rings.py).
    const Result over = pfsim("run " + user_case("deps_over", 8, 16383));
    EXPECT_EQ(over.status, 2);
    EXPECT_NE(over.err.find("fatal 1 (PTO2_ERROR_SCOPE_DEADLOCK) at " + line_of("LINE many dependencies") +
                            ": task 16383 (dummy): its scope already holds 16383 tasks"),
              std::string::npos)
        << over.err;
}

TEST(CacheMaintenance, APollingOrchestratorSeesTheKernelsWriteAsTimePasses) {
    // The writer takes ~5 us after its dispatch; each poll costs orch.tensor_data_cost.
    const auto j = run_json("poll", 10, 3);
    const auto k = run_json("poll_fast", 10, 3, " --set orch.tensor_data_cost=0.25us");
    int slow = -1, fast = -1;
    for (const auto& line : j["log"]) sscanf(line.get<std::string>().c_str(), "INFO %*[^:]: polls %d", &slow);
    for (const auto& line : k["log"]) sscanf(line.get<std::string>().c_str(), "INFO %*[^:]: polls %d", &fast);
    EXPECT_GE(slow, 4) << j["log"];
    EXPECT_GE(fast, 3 * slow) << k["log"];  // four times the polls in the same time
}

TEST(Hints, AnEarlyResolveHintIsModelledWithoutAWarning) {
    // Early dispatch is modelled on idle cores and busy cores' pending slots; the
    // one case it does not model (a sync-start consumer that fits no one scheduler
    // thread) is warned by the scheduler when it happens:
    // tests/python/test_scheduler.py shows that warning and its absence.
    const Result hinted = pfsim("run " + user_case("early", 12, 0));
    EXPECT_EQ(hinted.status, 0) << hinted.err;
    EXPECT_EQ(hinted.err.find("set_allow_early_resolve"), std::string::npos) << hinted.err;
}

TEST(BadInput, EachIsNamedWithItsTaskOrCallAndItsLine) {
    const struct {
        int scenario;
        int status;
        std::string message;
    } cases[] = {
        {5, 2, "fatal 5 (PTO2_ERROR_INVALID_ARGS) at " + line_of("LINE nobody produced") +
                   ": get_tensor_data: the tensor has no buffer (address 0)"},
        {6, 2, "fatal 5 (PTO2_ERROR_INVALID_ARGS) at " + line_of("LINE predicate outside GM") +
                   ": task 0 (aiv, func 0): set_predicate: the element at 0x"},
        {7, 2, "fatal 2 (PTO2_ERROR_HEAP_RING_DEADLOCK) at " + line_of("LINE beyond the heap") +
                   ": task 0 (dummy): the runtime's heap ring (orch.heap_bytes"},
        {9, 1, "get_tensor_data at " + line_of("LINE waits forever") + " waits for task 0 (aiv, func 0) (submitted at " +
                   line_of("return rt_submit_aiv_task(func, a)") + "), which can never complete"},
        {13, 1, "cache maintenance at " + line_of("LINE polls forever") +
                    ": the graph has stopped while the orchestration is still polling"},
        {11, 2, "fatal 9 (PTO2_ERROR_EXPLICIT_ORCH_FATAL) at " + line_of("LINE fatal") + ": the orchestration gives up"},
    };
    for (const auto& c : cases) {
        const Result r = pfsim("run " + user_case("bad" + std::to_string(c.scenario), c.scenario, 3) +
                               " --set orch.time_limit=50us");
        EXPECT_EQ(r.status, c.status) << c.scenario << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.scenario << "\n" << r.err;
        if (c.status == 2) {
            EXPECT_TRUE(r.out.empty()) << r.out;
        }
    }
}

// The time limit's message names the first eight kernels still running (none is in a
// flag wait here: each polls GM) and counts the rest; eight are named with no count.
TEST(BadInput, TheTimeLimitNamesEightKernelsStillRunningAndCountsTheRest) {
    // The list after "still running: " and how many kernels it names.
    const auto running = [](int blocks) {
        const Result r = pfsim("run " + user_case("polling" + std::to_string(blocks), 17, blocks) +
                               " --set orch.time_limit=20us");
        EXPECT_EQ(r.status, 1) << r.err;
        const size_t at = r.err.find("; still running: ");
        EXPECT_NE(at, std::string::npos) << r.err;
        const std::string list = at == std::string::npos ? "" : r.err.substr(at, r.err.find('\n', at) - at);
        int named = 0;
        for (size_t p = list.find(" on die.aiv"); p != std::string::npos; p = list.find(" on die.aiv", p + 1)) ++named;
        return std::make_pair(list, named);
    };
    const auto [twelve, of_twelve] = running(12);
    EXPECT_EQ(of_twelve, 8) << twelve;
    EXPECT_EQ(twelve.rfind(" and 4 more"), twelve.size() - std::string(" and 4 more").size()) << twelve;
    // Control: eight running kernels are all named, with no count after them.
    const auto [eight, of_eight] = running(8);
    EXPECT_EQ(of_eight, 8) << eight;
    EXPECT_EQ(eight.find(" more"), std::string::npos) << eight;
}

TEST(BadInput, ASyncStartCohortWiderThanTheDieIsRefusedNamingItsTaskAndLine) {
    const Result wide = pfsim("run " + user_case("cohort49", 14, 49));
    EXPECT_EQ(wide.status, 2) << wide.err;
    EXPECT_NE(wide.err.find("fatal 7 (PTO2_ERROR_REQUIRE_SYNC_START_INVALID) at " + line_of("LINE cohort") +
                            ": task 0 (aiv, func 0): launch_spec.set_require_sync_start(true) with block_num 49 > "
                            "the die's 48 vector cores"),
              std::string::npos)
        << wide.err;
    EXPECT_TRUE(wide.out.empty()) << wide.out;
    // Control: a cohort as wide as the die starts, every block on its own core.
    const auto whole = run_json("cohort48", 14, 48);
    ASSERT_EQ(whole["tasks"].size(), 1u);
    EXPECT_EQ(whole["tasks"][0]["cores"].size(), 48u);
}

TEST(BadInput, MoreDependenciesThanACoreTaskArgsWithDepsHoldsAreNamedWithTheTaskAndLine) {
    const Result over = pfsim("run " + user_case("withdeps3", 15, 3));
    EXPECT_EQ(over.status, 2) << over.err;
    EXPECT_NE(over.err.find("fatal 5 (PTO2_ERROR_INVALID_ARGS) at " + line_of("LINE with deps") + ": task 3 (dummy): "),
              std::string::npos)
        << over.err;
    EXPECT_NE(over.err.find("CoreTaskArgsWithDeps: more dependencies than its MAX_DEP_COUNT"), std::string::npos)
        << over.err;
    // Control: as many as it holds order the task after each of them.
    const auto held = run_json("withdeps2", 15, 2);
    ASSERT_EQ(held["tasks"].size(), 3u);
    EXPECT_EQ(held["tasks"][2]["deps"], nlohmann::json::array({0, 1}));
}

}  // namespace
