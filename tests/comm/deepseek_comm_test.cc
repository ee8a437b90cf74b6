// deepseek_v4_flash_decode's four communication kernels (dispatch_push,
// dispatch_wait, combine, combine_wait: pto::comm::TPUT, TNOTIFY, TWAIT,
// NotifyOp, WaitCmp), compiled from simpler's checkout unchanged, in a
// two-rank scene of pfsim's own with small shapes (tests/comm/deepseek): 4
// tokens of 4096 int8 per rank, top-6 of 64 experts (32 per rank, one block
// each), each buffer the kernels reach across ranks a communication window of
// its own with its CommContext. The outputs are checked against the golden
// below, written from what the kernels are meant to do:
//   dispatch: rank s's token i, routed (its k-th choice) to expert e = 32 d +
//     b, lands in rank d's recv_x slot 16 b + 8 s + c (c: how many of rank s's
//     routes to e came before it, in token then choice order), with
//     recv_aux[slot] = {x_norm_scale[i], weights[6 i + k], 0...} and
//     recv_route[slot] = {6 i + k, 0...}; each of the peer's 32 blocks adds 1
//     to data_arrived[peer].
//   combine: rank d's block b sends each expert output row of its compacted
//     slots (recv_meta_local counts per source rank, recv_r_route_out the
//     route) into the source rank's routed_y_buf row `route`; combine_wait
//     adds 1 to the peer's combine_arrived[me].
// The kernels are simpler's: without its checkout (PFSIM_SIMPLER_DIR, passed
// with --test_env) the test is skipped, saying so. bench/deepseek_comm.sh runs it.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "include/platform_comm/comm_context.h"
#include "loader/compiler.h"
#include "runtime/platform/sim/sim_dies.h"
#include "session/case_runner.h"
#include "session/graph_result.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

constexpr int kRanks = 2, kTokens = 4, kTopk = 6, kHidden = 4096, kLocalExperts = 32, kSlots = 32 * 16;
constexpr int kRoutes = kTokens * kTopk;

std::string simpler_kernels() {
    const char* dir = std::getenv("PFSIM_SIMPLER_DIR");
    if (!dir) return "";
    const std::string k = std::string(dir) + "/examples/a2a3/tensormap_and_ringbuffer/deepseek_v4_flash_decode/kernels/aiv/";
    return std::filesystem::exists(k + "dispatch_push.cpp") ? k : "";
}

// The host's inputs of rank s.
int32_t expert_of(int s, int i, int k) { return (i * 13 + k * 9 + s * 5) % 64; }  // 6 distinct per token
int8_t x_of(int s, int i, int e) { return static_cast<int8_t>((s * 31 + i * 17 + e) % 251 - 125); }
float scale_of(int s, int i) { return 0.5f + static_cast<float>(s) + 0.25f * static_cast<float>(i); }
float weight_of(int s, int i, int k) { return 0.125f * static_cast<float>(k + 1) + static_cast<float>(s) + 0.03125f * static_cast<float>(i); }
// Expert output row of rank d for `route` (exact in bf16): its upper 16 bits.
uint16_t y_of(int d, int route, int e) {
    const float f = static_cast<float>(d * 64 + route + e % 3);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return static_cast<uint16_t>(b >> 16);
}

// Rank s's routes to expert 32 d + b, in token then choice order (6 i + k each).
std::vector<int32_t> routes(int s, int d, int b) {
    std::vector<int32_t> r;
    for (int i = 0; i < kTokens; ++i) {
        for (int k = 0; k < kTopk; ++k) {
            if (expert_of(s, i, k) == 32 * d + b) r.push_back(i * kTopk + k);
        }
    }
    return r;
}

template <typename T>
CallTensor tensor(rt::DataType dtype, std::vector<uint32_t> shape, const std::vector<T>& v) {
    CallTensor t;
    t.dtype = dtype;
    t.shape = std::move(shape);
    t.data.resize(v.size() * sizeof(T));
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

class DeepseekComm : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (dies_ || simpler_kernels().empty()) return;
        cfg_ = new Config(test::config_with({"orch.time_limit=200us"}));
        dies_ = new SimDies(*cfg_, kRanks, "rank");
        test::elaborate();
        compiler_ = new KernelCompiler();
    }
    void SetUp() override {
        if (!dies_) GTEST_SKIP() << "needs simpler's checkout (PFSIM_SIMPLER_DIR, e.g. --test_env=PFSIM_SIMPLER_DIR=/work/simpler): "
                                    "deepseek_v4_flash_decode's kernels are simpler's, not pfsim's";
    }

    static CallableSpec callable(const std::string& function) {
        CallableSpec c;
        c.orchestration = std::filesystem::absolute("tests/comm/deepseek/ds_comm_orch.cpp").string();
        c.function = function;
        c.config_function = "ds_comm_config";
        const char* kernels[] = {"dispatch_push.cpp", "dispatch_wait.cpp", "combine.cpp", "combine_wait.cpp"};
        for (int32_t id = 0; id < 4; ++id) c.incores.push_back(IncoreSpec{id, simpler_kernels() + kernels[id], true, ""});
        return c;
    }

    // The windows of one run: per rank, each buffer the kernels reach across ranks.
    enum Window { kRecvX, kRecvAux, kRecvRoute, kDataArrived, kRoutedY, kCombineArrived, kWindows };
    struct WindowSpec {
        rt::DataType dtype;
        std::vector<uint32_t> shape;
        uint64_t bytes;
    };
    static WindowSpec window_spec(int w) {
        switch (w) {
            case kRecvX: return {rt::DataType::INT8, {kSlots, kHidden}, uint64_t{kSlots} * kHidden};
            case kRecvAux: return {rt::DataType::FLOAT32, {kSlots, 8}, uint64_t{kSlots} * 8 * 4};
            case kRecvRoute: return {rt::DataType::INT32, {kSlots, 8}, uint64_t{kSlots} * 8 * 4};
            case kRoutedY: return {rt::DataType::BFLOAT16, {kRoutes, kHidden}, uint64_t{kRoutes} * kHidden * 2};
            default: return {rt::DataType::INT32, {16}, 64};  // data_arrived, combine_arrived
        }
    }

    struct Run {
        std::vector<CallResult> results;
        uint64_t gm[kRanks][kWindows];
    };

    // Both ranks, rank 1 with `rank1_function`; the windows are read back by the test.
    Run run(const std::string& rank1_function = "ds_comm_orchestration") {
        const LoadedCallable both = load_callable(callable("ds_comm_orchestration"), *compiler_);
        const LoadedCallable other = load_callable(callable(rank1_function), *compiler_);
        Run out;
        std::vector<std::unique_ptr<rt::Worker>> workers;
        for (int r = 0; r < kRanks; ++r) {
            workers.push_back(std::make_unique<rt::Worker>(dies_->die(r), api::worker_options(*cfg_, true, true, false, false)));
        }
        uint64_t ctx[kRanks][kWindows];
        for (int r = 0; r < kRanks; ++r) {
            for (int w = 0; w < kWindows; ++w) {
                const uint64_t bytes = window_spec(w).bytes;
                out.gm[r][w] = dies_->die(r).gm_alloc(bytes);
                const std::vector<uint8_t> zeros(bytes, 0);
                dies_->die(r).gm_write(out.gm[r][w], zeros.data(), bytes);
                dies_->add_comm_window(static_cast<uint32_t>(r), out.gm[r][w], bytes);
            }
        }
        for (int r = 0; r < kRanks; ++r) {
            for (int w = 0; w < kWindows; ++w) {
                CommContext c{};
                c.rankId = static_cast<uint32_t>(r);
                c.rankNum = kRanks;
                c.winSize = window_spec(w).bytes;
                for (int k = 0; k < kRanks; ++k) c.windowsIn[k] = dies_->device_pointer(static_cast<uint32_t>(k), out.gm[k][w]);
                const uint64_t gm = dies_->die(r).gm_alloc(sizeof c);
                dies_->die(r).gm_write(gm, &c, sizeof c);
                ctx[r][w] = dies_->device_pointer(static_cast<uint32_t>(r), gm);
            }
        }
        std::vector<std::vector<CallTensor>> tensors(kRanks);
        std::vector<RankCall> calls;
        for (int r = 0; r < kRanks; ++r) {
            auto window = [&](int w) {
                CallTensor t;
                t.dtype = window_spec(w).dtype;
                t.shape = window_spec(w).shape;
                t.gm = out.gm[r][w];
                return t;
            };
            std::vector<int32_t> indices, meta(2 * kLocalExperts, 0), route_out(kSlots, 0);
            std::vector<int8_t> x;
            std::vector<float> scale, weights;
            std::vector<uint16_t> y(uint64_t{kSlots} * kHidden, 0);
            for (int i = 0; i < kTokens; ++i) {
                for (int k = 0; k < kTopk; ++k) indices.push_back(expert_of(r, i, k));
                for (int e = 0; e < kHidden; ++e) x.push_back(x_of(r, i, e));
                scale.push_back(scale_of(r, i));
                for (int k = 0; k < kTopk; ++k) weights.push_back(weight_of(r, i, k));
            }
            for (int b = 0; b < kLocalExperts; ++b) {  // the compacted slots of this rank's experts
                int off = 0;
                for (int s = 0; s < kRanks; ++s) {
                    const std::vector<int32_t> from = routes(s, r, b);
                    meta[static_cast<size_t>(s * kLocalExperts + b)] = static_cast<int32_t>(from.size());
                    for (size_t j = 0; j < from.size(); ++j) {
                        const size_t slot = static_cast<size_t>(b * 16 + off) + j;
                        route_out[slot] = from[j];
                        for (int e = 0; e < kHidden; ++e) y[slot * kHidden + static_cast<size_t>(e)] = y_of(r, from[j], e);
                    }
                    off += static_cast<int>(from.size());
                }
            }
            tensors[r] = {tensor(rt::DataType::INT32, {kTokens, kTopk}, indices), window(kRecvX),
                          tensor(rt::DataType::INT8, {kTokens, kHidden}, x), tensor(rt::DataType::FLOAT32, {kTokens}, scale),
                          tensor(rt::DataType::FLOAT32, {kTokens, kTopk}, weights), window(kRecvAux), window(kRecvRoute),
                          window(kDataArrived), tensor(rt::DataType::INT32, {2, kLocalExperts}, meta),
                          tensor(rt::DataType::INT32, {kSlots}, route_out), window(kRoutedY),
                          tensor(rt::DataType::BFLOAT16, {kSlots, kHidden}, y), window(kCombineArrived)};
            RankCall c;
            c.callable = r == 1 ? &other : &both;
            c.tensors = &tensors[r];
            c.scalars = {kTokens, static_cast<uint64_t>(r), ctx[r][kRecvX], ctx[r][kRecvAux], ctx[r][kRecvRoute],
                         ctx[r][kDataArrived], ctx[r][kRoutedY], ctx[r][kCombineArrived]};
            c.platform = &dies_->die(r);
            c.worker = workers[r].get();
            c.heap_bytes = 1 << 20;
            calls.push_back(c);
        }
        out.results = call_ranks(calls, [] { return dies_->end_graphs(); });
        return out;
    }

    template <typename T>
    static std::vector<T> read(int rank, uint64_t gm, uint64_t bytes) {
        std::vector<T> v(bytes / sizeof(T));
        dies_->die(rank).gm_read(gm, v.data(), bytes);
        return v;
    }
    void free(const Run& r) {
        for (int rank = 0; rank < kRanks; ++rank) {
            dies_->die(rank).gm_free(r.gm[rank][0]);
            dies_->drop_comm_windows(static_cast<uint32_t>(rank), r.gm[rank][0]);
        }
    }

    static Config* cfg_;
    static SimDies* dies_;
    static KernelCompiler* compiler_;
};
Config* DeepseekComm::cfg_ = nullptr;
SimDies* DeepseekComm::dies_ = nullptr;
KernelCompiler* DeepseekComm::compiler_ = nullptr;

TEST_F(DeepseekComm, DispatchAndCombineDeliverEveryRouteToItsExpertAndBack) {
    const Run r = run();
    for (int d = 0; d < kRanks; ++d) {
        ASSERT_TRUE(r.results[d].graph.ok()) << "rank " << d << ": " << r.results[d].graph.first_error();
    }
    uint64_t routed = 0;
    for (int d = 0; d < kRanks; ++d) {
        const auto x = read<int8_t>(d, r.gm[d][kRecvX], window_spec(kRecvX).bytes);
        const auto aux = read<float>(d, r.gm[d][kRecvAux], window_spec(kRecvAux).bytes);
        const auto route = read<int32_t>(d, r.gm[d][kRecvRoute], window_spec(kRecvRoute).bytes);
        std::vector<int8_t> want_x(x.size(), 0);
        std::vector<float> want_aux(aux.size(), 0);
        std::vector<int32_t> want_route(route.size(), 0);
        for (int s = 0; s < kRanks; ++s) {
            for (int b = 0; b < kLocalExperts; ++b) {
                const std::vector<int32_t> from = routes(s, d, b);
                for (size_t c = 0; c < from.size(); ++c, ++routed) {
                    const size_t slot = static_cast<size_t>(b * 16 + s * 8) + c;
                    const int i = from[c] / kTopk, k = from[c] % kTopk;
                    for (int e = 0; e < kHidden; ++e) want_x[slot * kHidden + static_cast<size_t>(e)] = x_of(s, i, e);
                    want_aux[slot * 8] = scale_of(s, i);
                    want_aux[slot * 8 + 1] = weight_of(s, i, k);
                    want_route[slot * 8] = from[c];
                }
            }
        }
        EXPECT_EQ(x, want_x) << "rank " << d << " recv_x";
        EXPECT_EQ(aux, want_aux) << "rank " << d << " recv_aux";
        EXPECT_EQ(route, want_route) << "rank " << d << " recv_route";
        std::vector<int32_t> arrived(16, 0);
        arrived[static_cast<size_t>(1 - d)] = kLocalExperts;  // each of the peer's 32 blocks, once
        EXPECT_EQ(read<int32_t>(d, r.gm[d][kDataArrived], 64), arrived) << "rank " << d;
        // combine: each of this rank's routes back from its expert's rank.
        const auto y = read<uint16_t>(d, r.gm[d][kRoutedY], window_spec(kRoutedY).bytes);
        std::vector<uint16_t> want_y(y.size());
        for (int i = 0; i < kTokens; ++i) {
            for (int k = 0; k < kTopk; ++k) {
                const int route_id = i * kTopk + k, expert_rank = expert_of(d, i, k) / 32;
                for (int e = 0; e < kHidden; ++e) {
                    want_y[static_cast<size_t>(route_id) * kHidden + static_cast<size_t>(e)] = y_of(expert_rank, route_id, e);
                }
            }
        }
        EXPECT_EQ(y, want_y) << "rank " << d << " routed_y_buf";
        std::vector<int32_t> combined(16, 0);
        combined[static_cast<size_t>(1 - d)] = 1;
        EXPECT_EQ(read<int32_t>(d, r.gm[d][kCombineArrived], 64), combined) << "rank " << d;
    }
    EXPECT_EQ(routed, uint64_t{kRanks} * kRoutes);  // every route of both ranks checked once
    free(r);
}

TEST_F(DeepseekComm, ADispatchWaitWhoseBlocksNeverNotifyStopsNamingItsSignal) {
    // The control: rank 1 leaves out its dispatch; rank 0's dispatch_wait waits for its 32 notifies in vain.
    const Run r = run("ds_no_push_orchestration");
    const std::string e = r.results[0].graph.first_error();
    EXPECT_NE(e.find("the graph did not finish within orch.time_limit"), std::string::npos) << e;
    EXPECT_NE(e.find("dispatch_wait.cpp) at dispatch_wait.cpp:"), std::string::npos) << e;
    EXPECT_NE(e.find("in TWAIT on the signal at GM"), std::string::npos) << e;
    EXPECT_NE(e.find(" for >= 32 (it holds 0; no TNOTIFY wrote it)"), std::string::npos) << e;
    free(r);
}

}  // namespace
}  // namespace pfsim
