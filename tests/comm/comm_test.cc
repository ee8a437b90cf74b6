// Two dies in one simulation (SimDies) and the instructions between ranks
// (include/pto/pfsim_comm.hpp): TPUT into a peer's GM across the link, TNOTIFY
// of a peer's signal, TWAIT until it holds, TGET from a peer; what each costs;
// and the misuse: a transfer beyond what the peer allocated, a wait nobody
// satisfies (named with the signal, its value and its last writer).
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "model/common/peer_window.h"
#include "backend/sdma/sdma_completion_kernel.h"
#include "pto/pto-inst.hpp"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/worker.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

using namespace pto;
using comm::NotifyOp;
using comm::WaitCmp;

constexpr int kElems = 4096;  // 16 KiB of floats: two 8 KiB staging tiles
using Flat = GlobalTensor<float, Shape<1, 1, 1, 1, kElems>, Stride<kElems, kElems, kElems, kElems, 1>>;
using Signal = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 1>, Stride<1, 1, 1, 1, 1>>;
using Staging = Tile<TileType::Vec, float, 1, 2048>;

template <typename T>
T* arg(int64_t* args, int i) {
    return reinterpret_cast<T*>(args[i]);
}

// args: 0 local source, 1 the peer's receive buffer, 2 the peer's signal, 3 notify value
void put_then_notify(int64_t* args) {
    Staging staging;
    TASSIGN(staging, 0x0);
    Flat dst(arg<float>(args, 1)), src(arg<float>(args, 0));
    comm::TPUT(dst, src, staging);
    Signal signal(arg<int32_t>(args, 2));
    comm::TNOTIFY(signal, static_cast<int32_t>(args[3]), NotifyOp::AtomicAdd);
}

// args: 0 local signal, 1 value waited for, 2 local receive buffer, 3 local output
void wait_then_copy(int64_t* args) {
    Signal signal(arg<int32_t>(args, 0));
    comm::TWAIT(signal, static_cast<int32_t>(args[1]), WaitCmp::GE);
    Staging staging;
    TASSIGN(staging, 0x0);
    Flat out(arg<float>(args, 3)), recv(arg<float>(args, 2));
    comm::TGET(out, recv, staging);
}

// args: 0 local output, 1 the peer's data
void get_from_peer(int64_t* args) {
    Staging staging;
    TASSIGN(staging, 0x0);
    Flat out(arg<float>(args, 0)), peer(arg<float>(args, 1));
    comm::TGET(out, peer, staging);
}

// args: 0 local source, 1 a peer buffer the copy starts in
void put_only(int64_t* args) {
    Staging staging;
    TASSIGN(staging, 0x0);
    Flat dst(arg<float>(args, 1)), src(arg<float>(args, 0));
    comm::TPUT(dst, src, staging);
}

// args: 0 local output, 1 the peer's data; an SDMA copy (send_request_entry),
// waited for inline (a plain launch has no deferred task).
void sdma_get(int64_t* args) {
    Flat out(arg<float>(args, 0)), peer(arg<float>(args, 1));
    Tile<TileType::Vec, uint8_t, 1, SDMA_SCRATCH_ALIGNMENT> scratch;
    TASSIGN(scratch, 0x0);
    auto* workspace = static_cast<__gm__ uint8_t*>(rt::get_dma_workspace(args, rt::DMA_WORKSPACE_SDMA));
    AsyncCtx ctx = get_async_ctx(args);
    send_request_entry(ctx, SdmaTget(out, peer, scratch, workspace));
}

using Scratch = Tile<TileType::Vec, uint8_t, 1, SDMA_SCRATCH_ALIGNMENT>;

__gm__ uint8_t* sdma_workspace(int64_t* args) {
    return static_cast<__gm__ uint8_t*>(rt::get_dma_workspace(args, rt::DMA_WORKSPACE_SDMA));
}

// A prefetch context and async copies on one core (one channel group).
// args: 0 local output, 1 the peer's data, 2 a local region to prefetch, 3 the order:
//   0  prefetch, send_request_entry (a session of its own), prefetch again
//   1  a session of BuildAsyncSession copies, a prefetch, the first session copies again
//   2  the control of 0: the copy posted on the context's own session
//   3  the control of 1: the copies' session built again after the prefetch
void prefetch_beside_copies(int64_t* args) {
    Flat out(arg<float>(args, 0)), peer(arg<float>(args, 1)), region(arg<float>(args, 2));
    Scratch scratch;
    TASSIGN(scratch, 0x0);
    __gm__ uint8_t* workspace = sdma_workspace(args);
    PrefetchAsyncContext ctx(workspace);
    comm::AsyncSession copies;
    switch (args[3]) {
        case 0: {
            TPREFETCH_ASYNC(region, ctx).Wait(ctx.session);
            AsyncCtx async = get_async_ctx(args);
            send_request_entry(async, SdmaTget(out, peer, scratch, workspace));
            TPREFETCH_ASYNC(region, ctx).Wait(ctx.session);
            break;
        }
        case 1:
        case 3:
            comm::BuildAsyncSession(scratch, workspace, copies);
            comm::TGET_ASYNC(out, peer, copies).Wait(copies);
            TPREFETCH_ASYNC(region, ctx).Wait(ctx.session);
            if (args[3] == 3) comm::BuildAsyncSession(scratch, workspace, copies);
            comm::TGET_ASYNC(out, peer, copies).Wait(copies);
            break;
        case 2:
            TPREFETCH_ASYNC(region, ctx).Wait(ctx.session);
            comm::TGET_ASYNC(out, peer, ctx.session).Wait(ctx.session);
            TPREFETCH_ASYNC(region, ctx).Wait(ctx.session);
            break;
    }
}

// args: 0 local output, 1 the peer's data, 2 copies posted on one session
// before the last is waited for (each of all the data).
void copies_outstanding(int64_t* args) {
    Flat out(arg<float>(args, 0)), peer(arg<float>(args, 1));
    Scratch scratch;
    TASSIGN(scratch, 0x0);
    comm::AsyncSession session;
    comm::BuildAsyncSession(scratch, sdma_workspace(args), session);
    comm::AsyncEvent last;
    for (int64_t i = 0; i < args[2]; ++i) last = comm::TGET_ASYNC(out, peer, session);
    last.Wait(session);
}

class Comm : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (pair_) return;
        static const Config cfg = test::config_with({"orch.time_limit=50us"});
        pair_ = new SimDies(cfg, 2, "pair");
        pair2_ = new SimDies(cfg, 2, "second");
        // Rings of 5 requests: a copy in 4 requests and its flag fill one.
        shallow_ = new SimDies(test::config_with({"sdma.queue_depth=5"}), 2, "shallow");
        windowed_ = new SimDies(cfg, 2, "windowed");
        test::elaborate();
    }
    // `floats` floats on `rank`'s GM, filled with `fill(i)`; returns its GM address.
    static uint64_t buffer(SimDies& dies, uint32_t rank, int floats, float (*fill)(int)) {
        SimPlatform& die = dies.die(rank);
        const uint64_t gm = die.gm_alloc(static_cast<uint64_t>(floats) * 4);
        std::vector<float> v(static_cast<size_t>(floats));
        for (int i = 0; i < floats; ++i) v[static_cast<size_t>(i)] = fill(i);
        die.gm_write(gm, v.data(), v.size() * 4);
        return gm;
    }
    static std::vector<float> read(SimDies& dies, uint32_t rank, uint64_t gm, int floats) {
        std::vector<float> v(static_cast<size_t>(floats));
        dies.die(rank).gm_read(gm, v.data(), v.size() * 4);
        return v;
    }
    static int64_t ptr(SimDies& dies, uint32_t rank, uint64_t gm) {
        return static_cast<int64_t>(dies.device_pointer(rank, gm));
    }
    static SimDies::Launch one_core(uint32_t rank, rt::KernelEntry kernel, std::vector<int64_t>& args) {
        SimDies::Launch l;
        l.rank = rank;
        l.entries.aiv = kernel;
        l.spec = rt::LaunchSpec{1, 1, false};
        l.args_per_core = {args.data()};
        return l;
    }
    static rt::KernelLaunch sdma_launch(int64_t out, int64_t peer) {
        rt::KernelLaunch l;
        l.name = "sdma_get";
        l.entries.aiv = &sdma_get;
        l.spec = rt::LaunchSpec{1, 1, false};
        l.uses_sdma = true;
        l.args = {out, peer};
        return l;
    }
    static rt::KernelLaunch sdma_launch(const char* name, rt::KernelEntry kernel, std::vector<int64_t> args) {
        rt::KernelLaunch l;
        l.name = name;
        l.entries.aiv = kernel;
        l.spec = rt::LaunchSpec{1, 1, false};
        l.uses_sdma = true;
        l.args = std::move(args);
        return l;
    }
    static rt::WorkerOptions sdma_worker(uint64_t request_bytes) {
        rt::WorkerOptions o;
        o.enable_sdma = true;
        o.warmup = false;
        o.kernel.request_bytes = request_bytes;
        return o;
    }
    static SimDies* pair_;
    static SimDies* pair2_;
    static SimDies* shallow_;
    static SimDies* windowed_;
};
SimDies* Comm::pair_ = nullptr;
SimDies* Comm::pair2_ = nullptr;
SimDies* Comm::shallow_ = nullptr;
SimDies* Comm::windowed_ = nullptr;

float source_value(int i) { return static_cast<float>(i % 977) * 0.5f; }
float zero(int) { return 0; }

TEST_F(Comm, PutNotifyWaitMovesDataBetweenDiesInOrder) {
    SimDies& d = *pair_;
    const uint64_t src = buffer(d, 0, kElems, source_value);
    const uint64_t recv = buffer(d, 1, kElems, zero), out = buffer(d, 1, kElems, zero), signal = buffer(d, 1, 1, zero);
    std::vector<int64_t> a0 = {ptr(d, 0, src), ptr(d, 1, recv), ptr(d, 1, signal), 1, 0, 0, 0, 0};
    std::vector<int64_t> a1 = {ptr(d, 1, signal), 1, ptr(d, 1, recv), ptr(d, 1, out), 0, 0, 0, 0};
    const uint64_t link_before = d.die(0).soc().link.stats().write_bytes;
    const std::vector<rt::LaunchResult> r = d.launch({one_core(0, &put_then_notify, a0), one_core(1, &wait_then_copy, a1)});
    ASSERT_TRUE(r[0].ok()) << r[0].first_error();
    ASSERT_TRUE(r[1].ok()) << r[1].first_error();
    EXPECT_EQ(read(d, 1, out, kElems), read(d, 0, src, kElems));
    int32_t s = 0;
    d.die(1).gm_read(signal, &s, 4);
    EXPECT_EQ(s, 1);
    // The data and the signal crossed die 0's link; die 1 waited for them.
    EXPECT_EQ(d.die(0).soc().link.stats().write_bytes - link_before, uint64_t{kElems} * 4 + 4);
    EXPECT_GT(r[1].cores[0].returned_ps, r[0].cores[0].returned_ps);
    // 16 KiB at 56 GB/s plus the link's latency: the put takes microseconds.
    EXPECT_GT(r[0].kernel_time_ps, transfer_time(uint64_t{kElems} * 4, 56e9) + 1'000'000);
}

TEST_F(Comm, GetReadsThePeersGmAndLocalCopiesStayOffTheLink) {
    SimDies& d = *pair_;
    const uint64_t peer = buffer(d, 1, kElems, source_value), out = buffer(d, 0, kElems, zero);
    const uint64_t local_src = buffer(d, 0, kElems, source_value), local_out = buffer(d, 0, kElems, zero);
    std::vector<int64_t> remote = {ptr(d, 0, out), ptr(d, 1, peer), 0, 0, 0, 0, 0, 0};
    const LinkStats before = d.die(0).soc().link.stats();
    const rt::LaunchResult r = d.launch({one_core(0, &get_from_peer, remote)})[0];
    ASSERT_TRUE(r.ok()) << r.first_error();
    EXPECT_EQ(read(d, 0, out, kElems), read(d, 1, peer, kElems));
    EXPECT_EQ(d.die(0).soc().link.stats().read_bytes - before.read_bytes, uint64_t{kElems} * 4);
    // The control: the same copy within die 0 crosses nothing and is faster.
    std::vector<int64_t> local = {ptr(d, 0, local_out), ptr(d, 0, local_src), 0, 0, 0, 0, 0, 0};
    const LinkStats mid = d.die(0).soc().link.stats();
    const rt::LaunchResult l = d.launch({one_core(0, &get_from_peer, local)})[0];
    ASSERT_TRUE(l.ok()) << l.first_error();
    EXPECT_EQ(read(d, 0, local_out, kElems), read(d, 0, local_src, kElems));
    EXPECT_EQ(d.die(0).soc().link.stats().read_bytes, mid.read_bytes);
    EXPECT_LT(l.kernel_time_ps * 2, r.kernel_time_ps);
}

TEST_F(Comm, APutBeyondWhatThePeerAllocatedFailsNamingIt) {
    SimDies& d = *pair2_;
    const uint64_t src = buffer(d, 0, kElems, source_value);
    const uint64_t window = buffer(d, 1, kElems / 2, zero);  // half what the put writes, and the last allocation
    std::vector<int64_t> bad = {ptr(d, 0, src), ptr(d, 1, window), 0, 0, 0, 0, 0, 0};
    const rt::LaunchResult r = d.launch({one_core(0, &put_only, bad)})[0];
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.first_error().find("TPUT: the destination"), std::string::npos) << r.first_error();
    EXPECT_NE(r.first_error().find("rank 1 allocated"), std::string::npos) << r.first_error();
    EXPECT_NE(r.first_error().find("beyond its communication window"), std::string::npos) << r.first_error();
    // The control: a window large enough takes the same put.
    const uint64_t enough = buffer(d, 1, kElems, zero);
    std::vector<int64_t> good = {ptr(d, 0, src), ptr(d, 1, enough), 0, 0, 0, 0, 0, 0};
    EXPECT_TRUE(d.launch({one_core(0, &put_only, good)})[0].ok());
}

// The communication window's size (CommContext.winSize) at its limit: a put of
// the window's exact size fits; with the window 4 bytes smaller the same put
// fails naming the window, though GM after it is allocated (the control: with
// no window set, only the allocations bound it, and the put passes).
TEST_F(Comm, APutPastTheCommunicationWindowFailsAtItsSize) {
    SimDies& d = *windowed_;
    const uint64_t src = buffer(d, 0, kElems, source_value);
    const uint64_t window = buffer(d, 1, kElems, zero);
    buffer(d, 1, kElems, zero);  // allocated after the window
    std::vector<int64_t> put = {ptr(d, 0, src), ptr(d, 1, window), 0, 0, 0, 0, 0, 0};
    d.set_comm_window(1, window, uint64_t{kElems} * 4);
    const rt::LaunchResult fits = d.launch({one_core(0, &put_only, put)})[0];
    EXPECT_TRUE(fits.ok()) << fits.first_error();
    d.set_comm_window(1, window, uint64_t{kElems} * 4 - 4);
    const rt::LaunchResult over = d.launch({one_core(0, &put_only, put)})[0];
    ASSERT_FALSE(over.ok());
    EXPECT_NE(over.first_error().find("TPUT: the destination"), std::string::npos) << over.first_error();
    EXPECT_NE(over.first_error().find("reaches past rank 1's communication window"), std::string::npos)
        << over.first_error();
    EXPECT_NE(over.first_error().find("+ 16380, CommContext.winSize)"), std::string::npos) << over.first_error();
    d.set_comm_window(1, 0, 0);
    EXPECT_TRUE(d.launch({one_core(0, &put_only, put)})[0].ok());
}

// A rank with several windows (several communication domains): a put lies in
// one of them or fails; freeing GM drops the windows from there on.
TEST_F(Comm, ARanksWindowsEachAdmitAPutWithinThem) {
    SimDies& d = *windowed_;
    const uint64_t src = buffer(d, 0, kElems, source_value);
    const uint64_t first = buffer(d, 1, kElems, zero);
    const uint64_t gap = buffer(d, 1, kElems, zero);
    const uint64_t second = buffer(d, 1, kElems, zero);
    const uint64_t bytes = uint64_t{kElems} * 4;
    d.add_comm_window(1, second, bytes);  // out of order: kept ordered by address
    d.add_comm_window(1, first, bytes);
    auto put_to = [&](uint64_t dst) {
        std::vector<int64_t> put = {ptr(d, 0, src), ptr(d, 1, dst), 0, 0, 0, 0, 0, 0};
        return d.launch({one_core(0, &put_only, put)})[0];
    };
    EXPECT_TRUE(put_to(first).ok()) << put_to(first).first_error();
    EXPECT_TRUE(put_to(second).ok()) << put_to(second).first_error();
    const rt::LaunchResult between = put_to(gap);
    ASSERT_FALSE(between.ok());
    EXPECT_NE(between.first_error().find("reaches past rank 1's communication window"), std::string::npos)
        << between.first_error();
    d.drop_comm_windows(1, gap);  // the second window goes with the GM freed from `gap` on
    EXPECT_FALSE(put_to(second).ok());
    EXPECT_TRUE(put_to(first).ok());
    d.set_comm_window(1, 0, 0);
    EXPECT_TRUE(put_to(gap).ok());  // the control: no window, the allocations bound it
}

TEST_F(Comm, AWaitNobodySatisfiesStopsNamingTheSignalAndItsLastWriter) {
    SimDies& d = *pair2_;
    const uint64_t src = buffer(d, 0, kElems, source_value);
    const uint64_t recv = buffer(d, 1, kElems, zero), out = buffer(d, 1, kElems, zero), signal = buffer(d, 1, 1, zero);
    // Rank 0 adds 1; rank 1 waits for 2: never.
    std::vector<int64_t> a0 = {ptr(d, 0, src), ptr(d, 1, recv), ptr(d, 1, signal), 1, 0, 0, 0, 0};
    std::vector<int64_t> a1 = {ptr(d, 1, signal), 2, ptr(d, 1, recv), ptr(d, 1, out), 0, 0, 0, 0};
    const uint64_t t0 = d.die(0).now_ps();
    const std::vector<rt::LaunchResult> r = d.launch({one_core(0, &put_then_notify, a0), one_core(1, &wait_then_copy, a1)});
    EXPECT_TRUE(r[0].ok()) << r[0].first_error();
    ASSERT_FALSE(r[1].ok());
    const std::string e = r[1].first_error();
    EXPECT_NE(e.find("TWAIT on the signal at GM"), std::string::npos) << e;
    EXPECT_NE(e.find(" for >= 2 (it holds 1"), std::string::npos) << e;
    EXPECT_NE(e.find("its last writer: second0.aiv0"), std::string::npos) << e;
    EXPECT_NE(e.find("added 1"), std::string::npos) << e;
    EXPECT_NE(e.find("never held: it waited orch.time_limit"), std::string::npos) << e;
    EXPECT_GE(d.die(1).now_ps() - t0, 50'000'000u);  // it polled the whole time limit
    // Nobody notifies at all: the report says so.
    const uint64_t lonely = buffer(d, 1, 1, zero);
    std::vector<int64_t> a2 = {ptr(d, 1, lonely), 1, ptr(d, 1, recv), ptr(d, 1, out), 0, 0, 0, 0};
    const rt::LaunchResult alone = d.launch({one_core(1, &wait_then_copy, a2)})[0];
    EXPECT_NE(alone.first_error().find("no TNOTIFY wrote it"), std::string::npos) << alone.first_error();
}

TEST_F(Comm, AnSdmaGetCopiesThePeersWindowOnTheEnginesQueue) {
    SimDies& d = *pair_;
    rt::Worker w(d.die(0), sdma_worker(uint64_t{64} << 20));
    const uint64_t peer = buffer(d, 1, kElems, source_value), out = buffer(d, 0, kElems, zero);
    const SdmaStats sdma = d.die(0).soc().sdma.stats();
    const LinkStats link = d.die(0).soc().link.stats();
    const rt::LaunchResult r = w.run(sdma_launch(ptr(d, 0, out), ptr(d, 1, peer)));
    ASSERT_TRUE(r.ok()) << r.first_error();
    EXPECT_EQ(read(d, 0, out, kElems), read(d, 1, peer, kElems));
    // One copy request of the data and one flag copy, on die 0's engine; the data over die 0's link.
    EXPECT_EQ(d.die(0).soc().sdma.stats().copy_requests - sdma.copy_requests, 2u);
    EXPECT_EQ(d.die(0).soc().link.stats().read_bytes - link.read_bytes, uint64_t{kElems} * 4);
    EXPECT_EQ(d.die(1).soc().sdma.stats().copy_requests, 0u);
}

TEST_F(Comm, AnSdmaCopyFillsTheQueueToItsDepthAndNoFurther) {
    SimDies& d = *shallow_;
    // 16 KiB in 4 KiB requests: 4 and the flag copy, the ring's 5 entries.
    rt::Worker w(d.die(0), sdma_worker(4096));
    const uint64_t peer = buffer(d, 1, kElems, source_value), out = buffer(d, 0, kElems, zero);
    const rt::LaunchResult fits = w.run(sdma_launch(ptr(d, 0, out), ptr(d, 1, peer)));
    ASSERT_TRUE(fits.ok()) << fits.first_error();
    EXPECT_EQ(read(d, 0, out, kElems), read(d, 1, peer, kElems));
    w.finalize();  // frees its workspace and what was allocated after it
    // 3 KiB requests: 6 and the flag, two more than the ring holds.
    rt::Worker small(d.die(0), sdma_worker(3072));
    const uint64_t out2 = buffer(d, 0, kElems, zero);
    const rt::LaunchResult over = small.run(sdma_launch(ptr(d, 0, out2), ptr(d, 1, peer)));
    ASSERT_FALSE(over.ok());
    EXPECT_NE(over.first_error().find("TGET_ASYNC: 6 requests of at most 3072 bytes and the flag copy do not fit the "
                                      "queue's ring of 5 (sdma.queue_depth)"),
              std::string::npos)
        << over.first_error();
}

// A prefetch context keeps its channel group's ring tail; a session of
// send_request_entry (or BuildAsyncSession) on the same core posting in
// between moves it. The stale post is refused naming the instruction and the
// group, in both orders; one session for both (the context's), or a session
// built after the other's post, is the control.
TEST_F(Comm, APrefetchContextAndAnotherCopySessionOnOneCoreDoNotShareARingTail) {
    SimDies& d = *pair_;
    rt::Worker w(d.die(0), sdma_worker(uint64_t{64} << 20));
    const uint64_t peer = buffer(d, 1, kElems, source_value), region = buffer(d, 0, kElems, source_value);
    auto run = [&](int64_t order) {
        const uint64_t out = buffer(d, 0, kElems, zero);
        const rt::LaunchResult r = w.run(sdma_launch(
            "prefetch_beside_copies", &prefetch_beside_copies,
            {ptr(d, 0, out), ptr(d, 1, peer), ptr(d, 0, region), order}));
        return std::make_pair(r, read(d, 0, out, kElems) == read(d, 1, peer, kElems));
    };
    const auto [prefetch_first, _0] = run(0);
    ASSERT_FALSE(prefetch_first.ok());
    const std::string e0 = prefetch_first.first_error();
    EXPECT_NE(e0.find("TPREFETCH_ASYNC: SDMA channel group 0's ring tail is 4, not the 2 this session keeps"), std::string::npos) << e0;
    EXPECT_NE(e0.find("another session of this core posted on the group since"), std::string::npos) << e0;
    const auto [copy_first, _1] = run(1);
    ASSERT_FALSE(copy_first.ok());
    EXPECT_NE(copy_first.first_error().find("TGET_ASYNC: SDMA channel group 0's ring tail is"), std::string::npos)
        << copy_first.first_error();
    for (int64_t control : {2, 3}) {
        const auto [r, copied] = run(control);
        EXPECT_TRUE(r.ok()) << "order " << control << ": " << r.first_error();
        EXPECT_TRUE(copied) << "order " << control;
    }
}

// prefetch.max_posts for copies: with at most 2 posts outstanding, two copies
// post without waiting; the third waits for the first's flag slot (one more
// polling wait); with a poll budget of 1 that wait gives up and the copy is
// refused naming the limit.
TEST_F(Comm, CopiesPostUpToMaxPostsAndTheNextWaitsForTheOldestSlot) {
    SimDies& d = *pair_;
    const uint64_t peer = buffer(d, 1, kElems, source_value);
    auto run = [&](int64_t copies, uint64_t poll_limit) {
        rt::WorkerOptions o = sdma_worker(4096);
        o.kernel.max_posts = 2;
        o.kernel.poll_limit = poll_limit;
        rt::Worker w(d.die(0), o);
        const uint64_t out = buffer(d, 0, kElems, zero);
        auto polling_waits = [&] {  // over every core of die 0
            uint64_t n = 0;
            for (uint32_t c = 0; c < d.die(0).core_count(); ++c) n += d.die(0).core(c).stats().prefetch_waits;
            return n;
        };
        const uint64_t waits = polling_waits();
        const rt::LaunchResult r = w.run(
            sdma_launch("copies_outstanding", &copies_outstanding, {ptr(d, 0, out), ptr(d, 1, peer), copies}));
        const bool copied = read(d, 0, out, kElems) == read(d, 1, peer, kElems);
        const uint64_t polled = polling_waits() - waits;
        w.finalize();
        return std::make_tuple(r, copied, polled);
    };
    const auto [at_limit, copied2, waits2] = run(2, 100000);
    ASSERT_TRUE(at_limit.ok()) << at_limit.first_error();
    EXPECT_TRUE(copied2);
    EXPECT_EQ(waits2, 1u);  // the last copy's wait only
    const auto [over, copied3, waits3] = run(3, 100000);
    ASSERT_TRUE(over.ok()) << over.first_error();
    EXPECT_TRUE(copied3);
    EXPECT_EQ(waits3, 2u);  // and the third post's wait for post 1's slot
    const auto [refused, copied_r, waits_r] = run(3, 1);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.first_error().find("TGET_ASYNC: post 3 needs the flag slot of post 1 (at most 2 posts "
                                         "outstanding, prefetch.max_posts)"),
              std::string::npos)
        << refused.first_error();
    (void)copied_r;
    (void)waits_r;
}

TEST(Dies, SeveralDiesRefuseWhatCannotReachAPeer) {
    const Config rtl = test::config_with({"sdma.frontend=rtl"});
    try {
        SimDies dies(rtl, 2, "rtl");
        FAIL() << "built";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("several dies need sdma.frontend = tlm"), std::string::npos) << e.what();
    }
    EXPECT_THROW(SimDies(test::config_with({}), 0, "none"), std::invalid_argument);
    EXPECT_THROW(SimDies(test::config_with({}), kMaxRanks + 1, "many"), std::invalid_argument);
}

}  // namespace
}  // namespace pfsim
