// The field's MoE shape on two dies (a2a3-hardware.md, "Field measurements":
// warming the expert weights made the expert FFN faster and the all-to-all
// combine slower, because the warm and the all-to-all queue on one SDMA
// engine). One step of rank 0, in one launch of six blocks (block b on
// cluster b, so SDMA channel group b):
//   block 0      dispatch: TGET_ASYNC of rank 1's tokens; then, once the FFN
//                is done, combine: TPUT_ASYNC of the expert outputs into rank
//                1's window (both on one session, group 0)
//   block 1      the warm on its own queue: TPREFETCH_ASYNC of this step's
//                expert weights, then of the next step's, waited at the end
//                (group 1: another channel of the same engine)
//   or block 0   the warm on the copies' queue: the same posts on block 0's
//                session right after the dispatch, not waited (group 0)
//   blocks 2-5   the expert FFN: after the dispatch, each streams its quarter
//                of this step's weights through UB and writes a sum
// Each phase's time is read on the cores (dispatch, FFN, combine). With the
// warm against without, the FFN gains either way; the combine loses only when
// it queues behind the warm's requests in one ring: beside them on another
// channel its link, not its share of the engine, paces it. The outputs are
// the same bit for bit. Rank 1 holds the tokens and the combine's window.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/sdma/sdma_completion_kernel.h"
#include "pto/pto-inst.hpp"
#include "runtime/platform/device.h"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/worker.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

using namespace pto;
using comm::NotifyOp;
using comm::WaitCmp;

constexpr int kTileElems = 4096;                        // 16 KiB of floats
constexpr uint64_t kTokenBytes = 512 << 10;             // dispatched, and combined back
constexpr uint64_t kWeightBytes = 8 << 20;              // this step's expert weights
constexpr uint64_t kNextWeightBytes = 24 << 20;         // the next step's, warmed after them
constexpr uint64_t kWarmChunk = 4 << 20;                // one TPREFETCH_ASYNC
constexpr int kFfnBlocks = 4;

using Tokens = GlobalTensor<float, Shape<1, 1, 1, 1, kTokenBytes / 4>, Stride<1, 1, 1, 1, 1>>;
using Chunk = GlobalTensor<float, Shape<1, 1, 1, 1, kWarmChunk / 4>, Stride<1, 1, 1, 1, 1>>;
using Piece = GlobalTensor<float, Shape<1, 1, 1, 1, kTileElems>, Stride<1, 1, 1, 1, 1>>;
using Signal = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, Stride<1, 1, 1, 1, 1>>;
using Vec = Tile<TileType::Vec, float, 1, kTileElems>;
using Scratch = Tile<TileType::Vec, uint8_t, 1, SDMA_SCRATCH_ALIGNMENT>;

// args: 0 rank 1's tokens, 1 dispatched (local), 2 expert outputs (local),
// 3 rank 1's combine window, 4 weights (this step's, then the next step's),
// 5 signals (int32: dispatched, FFN blocks done), 6 times (uint64 ps: dispatch
// start/end, FFN start/end per block, combine start/end), 7 the warm (Warm)
enum Time { kDispatchStart, kDispatchEnd, kCombineStart, kCombineEnd, kFfnStart, kFfnEnd = kFfnStart + kFfnBlocks };

template <typename T>
T* arg(int64_t* args, int i) {
    return reinterpret_cast<T*>(args[i]);
}

void stamp(int64_t* args, int which) { arg<uint64_t>(args, 6)[which] = rt::current_device().now_ps(); }

// Where the warm is posted (args[7]).
enum Warm { kNoWarm, kWarmOnItsOwnQueue, kWarmOnTheCopiesQueue };

// This step's expert weights, then the next step's, one post per chunk: the last post's event.
comm::AsyncEvent warm_weights(int64_t* args, PrefetchAsyncContext& ctx) {
    comm::AsyncEvent last;
    for (uint64_t at = 0; at < kWeightBytes + kNextWeightBytes; at += kWarmChunk) {
        last = TPREFETCH_ASYNC(Chunk(arg<float>(args, 4) + at / 4), ctx);
    }
    return last;
}

void moe_step(int64_t* args) {
    const int32_t block = get_block_idx();
    __gm__ uint8_t* workspace = static_cast<__gm__ uint8_t*>(rt::get_dma_workspace(args, rt::DMA_WORKSPACE_SDMA));
    Signal dispatched(arg<int32_t>(args, 5)), ffn_done(arg<int32_t>(args, 5) + 1);
    if (block == 0) {
        Scratch scratch;
        TASSIGN(scratch, 0x0);
        // One session for the copies and, in one-queue mode, the warm (the context's).
        PrefetchAsyncContext ctx(workspace);
        comm::AsyncSession& session = ctx.session;
        comm::BuildAsyncSession(scratch, workspace, session);
        Tokens peer_tokens(arg<float>(args, 0)), local(arg<float>(args, 1));
        stamp(args, kDispatchStart);
        comm::TGET_ASYNC(local, peer_tokens, session).Wait(session);
        stamp(args, kDispatchEnd);
        if (args[7] == kWarmOnTheCopiesQueue) warm_weights(args, ctx);  // fire and forget, behind the dispatch
        comm::TNOTIFY(dispatched, 1, NotifyOp::AtomicAdd);
        comm::TWAIT(ffn_done, kFfnBlocks, WaitCmp::GE);
        Tokens out(arg<float>(args, 2)), window(arg<float>(args, 3));
        stamp(args, kCombineStart);
        comm::TPUT_ASYNC(window, out, session).Wait(session);
        stamp(args, kCombineEnd);
    } else if (block == 1) {
        if (args[7] != kWarmOnItsOwnQueue) return;
        PrefetchAsyncContext ctx(workspace);
        warm_weights(args, ctx).Wait(ctx.session);
    } else {
        const int k = block - 2;
        comm::TWAIT(dispatched, 1, WaitCmp::GE);
        stamp(args, kFfnStart + k);
        Vec acc, w;
        TASSIGN(acc, 0x0);
        TASSIGN(w, kTileElems * 4);
        TLOAD(acc, Piece(arg<float>(args, 1) + k * kTileElems));
        const uint64_t quarter = kWeightBytes / kFfnBlocks;
        for (uint64_t at = k * quarter; at < (k + 1) * quarter; at += kTileElems * 4) {
            TLOAD(w, Piece(arg<float>(args, 4) + at / 4));
            set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
            wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
            TADD(acc, acc, w);
            set_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
            wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
        }
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(Piece(arg<float>(args, 2) + k * kTileElems), acc);
        pipe_barrier(PIPE_ALL);
        stamp(args, kFfnEnd + k);
        comm::TNOTIFY(ffn_done, 1, NotifyOp::AtomicAdd);
    }
}

struct Step {
    double dispatch_us, ffn_us, combine_us;
    uint64_t comm_copies;
    double comm_prefetch_wait_us;  // rank 0's engine: its copies' wait behind prefetches in their ring
    std::vector<float> combined;  // what rank 1's window received
};

class Moe : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (dies_) return;
        static const Config cfg = test::config_with({});
        dies_ = new SimDies(cfg, 2, "moe");
        test::elaborate();
    }
    static Step step(Warm warm) {
        SimDies& d = *dies_;
        SimPlatform& r0 = d.die(0);
        SimPlatform& r1 = d.die(1);
        rt::WorkerOptions o;
        o.enable_sdma = true;
        o.warmup = true;  // channels warm before the step, as on a running device
        o.kernel.request_bytes = 1 << 20;
        rt::Worker w(r0, o);
        auto floats = [](SimPlatform& die, uint64_t bytes, float scale) {
            const uint64_t gm = die.gm_alloc(bytes);
            std::vector<float> v(bytes / 4);
            for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 613) * scale;
            die.gm_write(gm, v.data(), bytes);
            return gm;
        };
        const uint64_t tokens = floats(r1, kTokenBytes, 0.25f), window = floats(r1, kTokenBytes, 0);
        const uint64_t dispatched = floats(r0, kTokenBytes, 0), outputs = floats(r0, kTokenBytes, 0);
        const uint64_t weights = floats(r0, kWeightBytes + kNextWeightBytes, 1.0f / 64);
        const uint64_t signals = floats(r0, 64, 0), times = floats(r0, 4096, 0);
        rt::KernelLaunch l;
        l.name = "moe_step";
        l.entries.aiv = &moe_step;
        l.spec = rt::LaunchSpec{2 + kFfnBlocks, 1, false};
        l.uses_sdma = true;
        l.args = {static_cast<int64_t>(d.device_pointer(1, tokens)), static_cast<int64_t>(d.device_pointer(0, dispatched)),
                  static_cast<int64_t>(d.device_pointer(0, outputs)), static_cast<int64_t>(d.device_pointer(1, window)),
                  static_cast<int64_t>(d.device_pointer(0, weights)), static_cast<int64_t>(d.device_pointer(0, signals)),
                  static_cast<int64_t>(d.device_pointer(0, times)), warm};
        const SdmaStats before = r0.soc().sdma.stats();
        const rt::LaunchResult r = w.run(l);
        const SdmaStats& after = r0.soc().sdma.stats();
        EXPECT_TRUE(r.ok()) << r.first_error();
        std::vector<uint64_t> t(kFfnEnd + kFfnBlocks);
        r0.gm_read(times, t.data(), t.size() * 8);
        Step s;
        s.dispatch_us = static_cast<double>(t[kDispatchEnd] - t[kDispatchStart]) / 1e6;
        s.combine_us = static_cast<double>(t[kCombineEnd] - t[kCombineStart]) / 1e6;
        uint64_t first = ~uint64_t{0}, last = 0;
        for (int k = 0; k < kFfnBlocks; ++k) {
            first = std::min(first, t[kFfnStart + k]);
            last = std::max(last, t[kFfnEnd + k]);
        }
        s.ffn_us = static_cast<double>(last - first) / 1e6;
        s.comm_copies = after.comm_copies - before.comm_copies;
        s.comm_prefetch_wait_us = static_cast<double>(after.comm_prefetch_wait - before.comm_prefetch_wait) / 1e6;
        s.combined.resize(kTokenBytes / 4);
        r1.gm_read(window, s.combined.data(), kTokenBytes);
        const char* names[] = {"no warm", "warm on its own queue", "warm on the copies' queue"};
        std::printf("moe step, %s: dispatch %.1f us, expert FFN %.1f us, combine %.1f us; %llu comm copies waited "
                    "%.1f us behind prefetches\n", names[warm], s.dispatch_us, s.ffn_us, s.combine_us,
                    static_cast<unsigned long long>(s.comm_copies), s.comm_prefetch_wait_us);
        w.finalize();
        return s;
    }
    static SimDies* dies_;
};
SimDies* Moe::dies_ = nullptr;

TEST_F(Moe, TheWarmSpeedsTheExpertFfnAndSlowsTheCombineBehindItInOneQueue) {
    // The dies and their L2 persist from step to step, as on a running device, and
    // each step's buffers take the GM the step before freed: the warm behind the
    // copies goes before the other warm, so that the next step's weights it warms
    // are not resident yet (a warm of resident lines only passes the engine's
    // residency check, sdma.resident_check_bandwidth).
    const Step cold = step(kNoWarm);
    const Step behind = step(kWarmOnTheCopiesQueue);
    const Step beside = step(kWarmOnItsOwnQueue);
    EXPECT_EQ(beside.combined, cold.combined);
    EXPECT_EQ(behind.combined, cold.combined);
    for (const Step* warm : {&beside, &behind}) EXPECT_LT(warm->ffn_us, cold.ffn_us * 0.75);
    // Beside the warm the combine keeps its time (the control); behind it, it waits for it.
    EXPECT_NEAR(beside.combine_us, cold.combine_us, cold.combine_us * 0.1);
    EXPECT_GT(behind.combine_us, cold.combine_us * 2);
    EXPECT_NEAR(behind.dispatch_us, cold.dispatch_us, cold.dispatch_us * 0.1);  // posted before the warm
    // The engine's counter says why: behind the warm the combine's copies waited for its
    // prefetches about as long as the combine lost; without the warm, or beside it, they
    // waited for none (the control).
    for (const Step* s : {&cold, &beside, &behind}) EXPECT_EQ(s->comm_copies, 2u);  // dispatch, combine
    EXPECT_EQ(cold.comm_prefetch_wait_us, 0);
    EXPECT_EQ(beside.comm_prefetch_wait_us, 0);
    EXPECT_NEAR(behind.comm_prefetch_wait_us, behind.combine_us - cold.combine_us,
                (behind.combine_us - cold.combine_us) * 0.1);
}

}  // namespace
}  // namespace pfsim
