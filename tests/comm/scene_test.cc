// Two-rank scenes of pfsim's own (tests/comm/scene): each rank's orchestration
// and kernels, compiled at run time as users' are, run on its own die of one
// simulation (call_ranks over SimDies), with a CommContext per rank whose
// windows are in each die's GM.
//   exchange: rank r TPUTs its input into the peer's window and TNOTIFYs the
//             peer's signal; another task of rank r TWAITs its own signal and
//             adds one to its window: out_r = in_(1-r) + 1.
//   fetch:    rank r's SDMA engine fetches the peer's window (send_request_entry,
//             SdmaTget; the task completes when the copy has), a dependent task
//             adds one: result_r = window_(1-r) + 1 (simpler's
//             sdma_async_completion_demo, in pfsim's own words).
//   lonely:   only the waiting task: nobody notifies, each rank's wait stops at
//             orch.time_limit naming the signal (the negative control of exchange).
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "session/graph_result.h"
#include "session/case_runner.h"
#include "include/platform_comm/comm_context.h"
#include "loader/compiler.h"
#include "runtime/platform/sim/sim_dies.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

constexpr int kElems = 1024;  // scene.h's
constexpr uint64_t kWindowBytes = kElems * 4 + 64;

std::string source(const std::string& name) {
    return std::filesystem::absolute("tests/comm/scene/" + name).string();
}

CallableSpec callable(const std::string& function) {
    CallableSpec c;
    c.orchestration = source("exchange_orch.cpp");
    c.function = function;
    c.config_function = "exchange_config";
    const char* kernels[] = {"put_notify.cpp", "wait_add.cpp", "sdma_get.cpp", "add_one.cpp"};
    for (int32_t id = 0; id < 4; ++id) c.incores.push_back(IncoreSpec{id, source(kernels[id]), true, ""});
    c.include_dirs = {source("")};
    return c;
}

CallTensor floats(const std::vector<float>& v) {
    CallTensor t;
    t.dtype = rt::DataType::FLOAT32;
    t.shape = {static_cast<uint32_t>(v.size())};
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

std::vector<float> values(const CallTensor& t) {
    std::vector<float> v(t.data.size() / 4);
    std::memcpy(v.data(), t.data.data(), t.data.size());
    return v;
}

std::vector<float> input_of(uint32_t rank) {
    std::vector<float> v(kElems);
    for (int i = 0; i < kElems; ++i) v[static_cast<size_t>(i)] = static_cast<float>(rank * 1000 + i % 251) / 4;
    return v;
}

class Scene : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (dies_) return;
        cfg_ = new Config(test::config_with({"orch.time_limit=200us"}));
        dies_ = new SimDies(*cfg_, 2, "rank");
        test::elaborate();
        compiler_ = new KernelCompiler();
    }

    // The scene `function` on both ranks with tensors[r] and a fresh window
    // per rank (holding `window_data[r]` when given).
    std::vector<CallResult> run(const std::string& function, std::vector<std::vector<CallTensor>>& tensors,
                                const std::vector<std::vector<float>>& window_data = {}) {
        const LoadedCallable loaded = load_callable(callable(function), *compiler_);
        std::vector<std::unique_ptr<rt::Worker>> workers;
        for (uint32_t r = 0; r < 2; ++r) {
            workers.push_back(std::make_unique<rt::Worker>(dies_->die(r), api::worker_options(*cfg_, true, true, false, false)));
        }
        uint64_t window[2], ctx[2];
        for (uint32_t r = 0; r < 2; ++r) {
            SimPlatform& die = dies_->die(r);
            window[r] = die.gm_alloc(kWindowBytes);
            std::vector<uint8_t> bytes(kWindowBytes, 0);
            if (!window_data.empty()) std::memcpy(bytes.data(), window_data[r].data(), window_data[r].size() * 4);
            die.gm_write(window[r], bytes.data(), bytes.size());
            dies_->set_comm_window(r, window[r], kWindowBytes);
        }
        for (uint32_t r = 0; r < 2; ++r) {
            CommContext c{};
            c.rankId = r;
            c.rankNum = 2;
            c.winSize = kWindowBytes;
            for (uint32_t k = 0; k < 2; ++k) c.windowsIn[k] = dies_->device_pointer(k, window[k]);
            ctx[r] = dies_->die(r).gm_alloc(sizeof c);
            dies_->die(r).gm_write(ctx[r], &c, sizeof c);
        }
        std::vector<RankCall> calls;
        for (uint32_t r = 0; r < 2; ++r) {
            RankCall c;
            c.callable = &loaded;
            c.tensors = &tensors[r];
            c.scalars = {dies_->device_pointer(r, ctx[r])};
            c.platform = &dies_->die(r);
            c.worker = workers[r].get();
            c.heap_bytes = 1 << 20;
            calls.push_back(c);
        }
        return call_ranks(calls, [] { return dies_->end_graphs(); });
    }

    static Config* cfg_;
    static SimDies* dies_;
    static KernelCompiler* compiler_;
};
Config* Scene::cfg_ = nullptr;
SimDies* Scene::dies_ = nullptr;
KernelCompiler* Scene::compiler_ = nullptr;

TEST_F(Scene, ExchangeThroughWindowsAndSignals) {
    std::vector<std::vector<CallTensor>> tensors(2);
    for (uint32_t r = 0; r < 2; ++r) tensors[r] = {floats(input_of(r)), floats(std::vector<float>(kElems, 0))};
    const LinkStats before = dies_->die(0).soc().link.stats();
    const std::vector<CallResult> results = run("exchange_orchestration", tensors);
    for (uint32_t r = 0; r < 2; ++r) {
        ASSERT_TRUE(results[r].graph.ok()) << "rank " << r << ": " << results[r].graph.first_error();
        std::vector<float> expected = input_of(1 - r);
        for (float& x : expected) x += 1;
        EXPECT_EQ(values(tensors[r][1]), expected) << "rank " << r;
    }
    // Rank 0's put and notify crossed its link.
    EXPECT_EQ(dies_->die(0).soc().link.stats().write_bytes - before.write_bytes, uint64_t{kElems} * 4 + 4);
}

TEST_F(Scene, AWaitNobodyNotifiesStopsEachRankNamingItsSignal) {
    std::vector<std::vector<CallTensor>> tensors(2);
    for (uint32_t r = 0; r < 2; ++r) tensors[r] = {floats(input_of(r)), floats(std::vector<float>(kElems, 0))};
    const std::vector<CallResult> results = run("lonely_orchestration", tensors);
    for (uint32_t r = 0; r < 2; ++r) {
        const std::string e = results[r].graph.first_error();
        EXPECT_NE(e.find("the graph did not finish within orch.time_limit"), std::string::npos) << e;
        EXPECT_NE(e.find("block 0 on rank" + std::to_string(r) + ".aiv0"), std::string::npos) << e;
        // the rank, the task, its kernel and the TWAIT's source line, the signal and its (missing) writer
        EXPECT_NE(e.find("wait_add.cpp) at wait_add.cpp:11 in TWAIT on the signal at GM"), std::string::npos) << e;
        EXPECT_NE(e.find(" for >= 1 (it holds 0; no TNOTIFY wrote it)"), std::string::npos) << e;
    }
}

TEST_F(Scene, SdmaFetchCompletesItsTaskWhenTheCopyHas) {
    std::vector<std::vector<CallTensor>> tensors(2);
    for (uint32_t r = 0; r < 2; ++r) {
        tensors[r] = {floats(std::vector<float>(kElems, 0)), floats(std::vector<float>(kElems, 0))};
    }
    const SdmaStats before = dies_->die(1).soc().sdma.stats();
    const std::vector<CallResult> results = run("fetch_orchestration", tensors, {input_of(0), input_of(1)});
    for (uint32_t r = 0; r < 2; ++r) {
        ASSERT_TRUE(results[r].graph.ok()) << "rank " << r << ": " << results[r].graph.first_error();
        EXPECT_EQ(values(tensors[r][0]), input_of(1 - r)) << "rank " << r;
        std::vector<float> expected = input_of(1 - r);
        for (float& x : expected) x += 1;
        EXPECT_EQ(values(tensors[r][1]), expected) << "rank " << r;
        // The consumer started after the copy's task completed.
        EXPECT_GE(results[r].graph.tasks[1].start_ps, results[r].graph.tasks[0].end_ps);
    }
    EXPECT_EQ(dies_->die(1).soc().sdma.stats().copy_requests - before.copy_requests, 2u);  // the data and its flag
}

}  // namespace
}  // namespace pfsim
