// The prefetch runtime on the simulated die: host-side rules (prefetch-protocol.md
// §5 items 5-10) and kernel semantics (items 11-19).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/sdma_request.h"
#include "pto/pto-inst.hpp"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

using rt::KernelLaunch;
using rt::LaunchResult;
using rt::LaunchSpec;
using rt::Worker;
using rt::WorkerOptions;

constexpr uint64_t kMiB = 1 << 20;

// What the test kernels report, written straight into host memory.
struct Probe {
    void* workspace[80][4] = {};  // per core id: kinds 0, 1, -1, 2
    uint64_t handle[128] = {};
    bool done[128] = {};
    bool test_early = true, test_late = false, earlier_done = false;
    uint64_t post_ps[128] = {};   // core time each post took
    uint64_t record_after = 0;
    int calls = 0;
};

Probe* probe_of(int64_t* args) { return reinterpret_cast<Probe*>(args[0]); }
void* workspace_of(int64_t* args) { return rt::get_dma_workspace(args, rt::DMA_WORKSPACE_SDMA); }

// args: 0 Probe, 1 GM address, 2 bytes per post, 3 posts, 4 1 = use a null
// workspace, 5 bytes of the first post (when non-zero)
void post_and_wait(int64_t* args) {
    Probe* p = probe_of(args);
    ++p->calls;
    pto::PrefetchAsyncContext ctx(args[4] ? nullptr : workspace_of(args));
    const uint64_t addr = static_cast<uint64_t>(args[1]), bytes = static_cast<uint64_t>(args[2]);
    const int posts = static_cast<int>(args[3]);
    std::vector<rt::AsyncEvent> events;
    const uint64_t first = args[5] ? static_cast<uint64_t>(args[5]) : bytes;
    for (int i = 0; i < posts; ++i) {
        const uint64_t t0 = current_core().now_ps();
        const uint64_t at = i == 0 ? addr : addr + first + (i - 1) * bytes;
        events.push_back(rt::prefetch_async(at, i == 0 ? first : bytes, ctx));
        p->post_ps[i] = current_core().now_ps() - t0;
        p->handle[i] = events.back().handle;
    }
    for (int i = 0; i < posts; ++i) p->done[i] = events[i].Wait(ctx.session);
    if (ctx.session.valid) {
        current_core().peek(rt::WorkspaceLayout::post_done(ctx.session.workspace, ctx.session.group, 0),
                            &p->record_after, 8);
    }
}

void record_workspace(int64_t* args) {
    Probe* p = probe_of(args);
    const uint32_t id = current_core().core_id();
    int k = 0;
    for (int kind : {0, 1, -1, 2}) p->workspace[id][k++] = rt::get_dma_workspace(args, kind);
}

// args: 0 Probe, 1 address. Big post A then small post B; Test and in-order checks.
void order_and_test(int64_t* args) {
    Probe* p = probe_of(args);
    pto::PrefetchAsyncContext ctx(workspace_of(args));
    const uint64_t addr = static_cast<uint64_t>(args[1]);
    rt::AsyncEvent a = rt::prefetch_async(addr, 4 * kMiB, ctx);
    rt::AsyncEvent b = rt::prefetch_async(addr + 4 * kMiB, 4096, ctx);
    p->test_early = b.Test(ctx.session);  // the engine cannot have finished yet
    p->done[1] = b.Wait(ctx.session);
    const uint64_t polls_before = ctx.session.done_post_id;
    p->earlier_done = a.Test(ctx.session) && polls_before >= (a.handle & ((1ull << 58) - 1));
    p->test_late = b.Test(ctx.session);
}

// Session rebuilt on the same core: ids restart at 1 and the record with them.
void rebuild_session(int64_t* args) {
    Probe* p = probe_of(args);
    const uint64_t addr = static_cast<uint64_t>(args[1]);
    pto::PrefetchAsyncContext first(workspace_of(args));
    for (int i = 0; i < 3; ++i) p->done[i] = rt::prefetch_async(addr + i * 4096, 4096, first).Wait(first.session);
    p->handle[0] = rt::prefetch_async(addr, 4096, first).handle;  // id 4
    first.session.done_post_id = 0;
    p->done[3] = rt::AsyncEvent{p->handle[0]}.Wait(first.session);
    pto::PrefetchAsyncContext second(workspace_of(args));
    rt::AsyncEvent e = rt::prefetch_async(addr, 4096, second);
    p->handle[1] = e.handle;
    p->done[4] = e.Wait(second.session);
    current_core().peek(rt::WorkspaceLayout::post_done(second.session.workspace, second.session.group, 0),
                        &p->record_after, 8);
    // An event of the first session waited with the second: polls the second's
    // record (now 1) for id 4 and gives up - undefined on hardware, not an error.
    p->done[5] = rt::AsyncEvent{p->handle[0]}.Wait(second.session);
}

void prefetch_from_cube(int64_t* args) {
    pto::PrefetchAsyncContext ctx(workspace_of(args));
    rt::prefetch_async(1 << 24, 4096, ctx);
}

void pl_style(int64_t* args) {
    Probe* p = probe_of(args);
    pl::prefetch::Context ctx = pl::prefetch::make_context();
    pl::prefetch::Tensor src{static_cast<uint64_t>(args[1]), 4, {1, 1, 4096}};
    pl::prefetch::Event evt = pl::prefetch::async_prefetch(src, ctx);
    p->handle[0] = evt.handle;
    p->done[0] = pl::prefetch::wait(evt, pl::prefetch::session(ctx));
}

void ub_overflow(int64_t*) {
    pto::Tile<pto::TileType::Vec, float, 1, 2048> t;  // 8 KiB
    pto::TASSIGN(t, 190 * 1024);                       // 190 + 8 > 192 KiB
}

void vector_tile_on_cube(int64_t*) {
    pto::Tile<pto::TileType::Vec, float, 1, 64> t;
    pto::TASSIGN(t, 0);
}

// args: 0 Probe, 1 GM address. post_ps[0] = a 64 KiB load that misses, [1] the
// same load again (hits); [2] and [3] a load and a store without a flag between
// them (the store runs beside the load; [2] also warms the destination), [4]
// the same with wait_flag(MTE2 -> MTE3) (the store runs after the load).
void load_timing(int64_t* args) {
    Probe* p = probe_of(args);
    using Block = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 1, 16384>, pto::Stride<1, 1, 1, 1, 1>>;
    using T = pto::Tile<pto::TileType::Vec, float, 1, 16384>;
    Block g(reinterpret_cast<__gm__ float*>(args[1]));
    Block out(reinterpret_cast<__gm__ float*>(args[1] + (1 << 20)));
    T t;
    pto::TASSIGN(t, 0x100);
    for (int i = 0; i < 2; ++i) {
        const uint64_t t0 = current_core().now_ps();
        pto::TLOAD(t, g);
        pto::pipe_barrier(pto::PIPE_ALL);
        p->post_ps[i] = current_core().now_ps() - t0;
    }
    for (int i = 2; i < 5; ++i) {
        const uint64_t t0 = current_core().now_ps();
        pto::TLOAD(t, g);
        if (i == 4) {
            pto::set_flag(pto::PIPE_MTE2, pto::PIPE_MTE3, pto::EVENT_ID0);
            pto::wait_flag(pto::PIPE_MTE2, pto::PIPE_MTE3, pto::EVENT_ID0);
        }
        pto::TSTORE(out, t);
        pto::pipe_barrier(pto::PIPE_ALL);
        p->post_ps[i] = current_core().now_ps() - t0;
    }
}

// args: 0 Probe, 1 device pointer and 2 GM address of 64 rows of 512 floats,
// 1024 floats apart (a TLOAD moves them one row at a time). Vector core 0 loads
// the rows; vector core 1 writes -1 over the first float of rows 0 and 63 once
// SystemC time reaches kLateWritePs. post_ps: [0] the write's time, [1] and [2]
// when the load began and had all its data; done: [0] row 0 read -1, [1] row 63 did.
constexpr uint64_t kLateWritePs = 400000;
void rows_and_a_late_write(int64_t* args) {
    Probe* p = probe_of(args);
    CoreOps& core = current_core();
    if (core.subblock_idx() == 1) {
        core.spend(kLateWritePs);  // catches SystemC time up to it
        const float mark = -1;
        p->post_ps[0] = core.now_ps();
        core.scalar_write(static_cast<uint64_t>(args[2]), &mark, 4);
        core.scalar_write(static_cast<uint64_t>(args[2]) + 63 * 1024 * 4, &mark, 4);
        return;
    }
    using Rows = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 64, 512>, pto::Stride<1, 1, 1, 1024, 1>>;
    using T = pto::Tile<pto::TileType::Vec, float, 64, 512>;
    Rows g(reinterpret_cast<__gm__ float*>(args[1]));
    T t;
    pto::TASSIGN(t, 0);
    p->post_ps[1] = core.now_ps();
    pto::TLOAD(t, g);
    pto::pipe_barrier(pto::PIPE_ALL);
    p->post_ps[2] = core.now_ps();
    p->done[0] = t.data()[0] == -1;
    p->done[1] = t.data()[63 * 512] == -1;
}

// args: 0 Probe, 1 a GM address 1 KiB before GM's end. A 2 KiB store from
// there: its lines in GM are written, then the line past the end is an error.
void store_past_gm_end(int64_t* args) {
    std::vector<float> values(512);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i + 1);
    current_core().store(static_cast<uint64_t>(args[1]), reinterpret_cast<const uint8_t*>(values.data()), 2048);
}

// Platforms keep a reference to their configuration.
const Config& config(const std::vector<std::string>& sets) {
    static std::vector<std::unique_ptr<Config>> keep;
    keep.push_back(std::make_unique<Config>(test::config_with(sets)));
    return *keep.back();
}

class Runtime : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (normal_) return;
        normal_ = new SimPlatform("normal", config({}));
        no_provider_ = new SimPlatform("no_provider", config({"sdma.provider=none"}));
        shallow_ = new SimPlatform("shallow", config({"sdma.queue_depth=16"}));
        // (The RTL front-end is built for 48 channels: this one stays on the TLM front-end.)
        few_channels_ = new SimPlatform("few_channels", config({"sdma.channels=8", "sdma.frontend=tlm"}));
    }
    static WorkerOptions sdma(bool warmup = true) {
        WorkerOptions o;
        o.enable_sdma = true;
        o.warmup = warmup;
        return o;
    }
    static KernelLaunch launch(rt::KernelEntry entry, Probe* probe, std::vector<int64_t> more = {},
                               LaunchSpec spec = LaunchSpec{1, 1, false}, bool uses_sdma = true) {
        KernelLaunch l;
        l.name = "test";
        l.entries = {entry, entry};
        l.spec = spec;
        l.uses_sdma = uses_sdma;
        l.args = {reinterpret_cast<int64_t>(probe)};
        l.args.insert(l.args.end(), more.begin(), more.end());
        return l;
    }
    // A fresh GM region of `bytes` on `platform`.
    static int64_t region(rt::Platform& platform, uint64_t bytes) {
        return static_cast<int64_t>(platform.gm_alloc(bytes));
    }
    static SimPlatform *normal_, *no_provider_, *shallow_, *few_channels_;
};
SimPlatform* Runtime::normal_ = nullptr;
SimPlatform* Runtime::no_provider_ = nullptr;
SimPlatform* Runtime::shallow_ = nullptr;
SimPlatform* Runtime::few_channels_ = nullptr;

// §5 item 5
TEST_F(Runtime, SdmaKernelOnAWorkerWithoutSdmaIsRefusedBeforeAnythingRuns) {
    Worker w(*normal_, WorkerOptions{});
    Probe probe;
    const uint64_t doorbells = normal_->soc().sdma.stats().doorbells;
    try {
        w.run(launch(&post_and_wait, &probe, {region(*normal_, kMiB), 4096, 1, 0, 0}));
        FAIL() << "no error";
    } catch (const rt::RuntimeError& e) {
        EXPECT_STREQ(e.what(), "ChipWorker was created without enable_sdma=True");
    }
    EXPECT_EQ(probe.calls, 0);
    EXPECT_EQ(normal_->soc().sdma.stats().doorbells, doorbells);
}

// §5 item 6
TEST_F(Runtime, NoProviderFailsInitialisationAndRollsBack) {
    try {
        Worker w(*no_provider_, sdma());
        FAIL() << "no error";
    } catch (const rt::RuntimeError& e) {
        EXPECT_STREQ(e.what(), "async-DMA workspace provisioning (mask=1) failed with code -1");
    }
    EXPECT_EQ(no_provider_->live_sdma_queues(), 0u);
    // The same platform still runs ordinary workers.
    Worker plain(*no_provider_, WorkerOptions{});
    Probe probe;
    EXPECT_TRUE(plain.run(launch(&record_workspace, &probe, {}, LaunchSpec{1, 1, false}, false)).ok());
}

// §5 item 7, and teardown
TEST_F(Runtime, ProvisioningTwiceOrWithUnsupportedBitsIsAnError) {
    {
        Worker w(*normal_, sdma());
        EXPECT_EQ(normal_->live_sdma_queues(), 48u);
        EXPECT_EQ(w.provision_dma_workspace(1), -1);
        EXPECT_EQ(w.last_error(), "already provisioned");
    }
    EXPECT_EQ(normal_->live_sdma_queues(), 0u);  // teardown released every channel
    Worker plain(*normal_, WorkerOptions{});
    EXPECT_EQ(plain.provision_dma_workspace(2), -1);
    EXPECT_EQ(plain.last_error(), "unsupported mask");
}

// §5 items 8 and 9
TEST_F(Runtime, EveryCoreSeesTheSameWorkspaceForKindZeroOnly) {
    Worker w(*normal_, sdma());
    auto probe = std::make_unique<Probe>();
    const LaunchResult r = w.run(launch(&record_workspace, probe.get(), {}, LaunchSpec{24, 2, true}, false));
    ASSERT_TRUE(r.ok()) << r.first_error();
    ASSERT_EQ(r.cores.size(), 72u);
    const void* ws = reinterpret_cast<void*>(normal_->device_pointer(w.dma_workspace(0)));
    ASSERT_NE(ws, nullptr);
    for (const rt::CoreTiming& c : r.cores) {
        EXPECT_EQ(probe->workspace[c.core_id][0], ws) << c.core_id;
        for (int k = 1; k < 4; ++k) EXPECT_EQ(probe->workspace[c.core_id][k], nullptr) << c.core_id;
    }
    Worker plain(*shallow_, WorkerOptions{});
    auto none = std::make_unique<Probe>();
    ASSERT_TRUE(plain.run(launch(&record_workspace, none.get(), {}, LaunchSpec{2, 2, false}, false)).ok());
    for (int id = 0; id < 80; ++id) EXPECT_EQ(none->workspace[id][0], nullptr);
}

// §5 item 10
TEST_F(Runtime, WarmupPassRemovesTheColdChannelCost) {
    auto time_first_prefetch = [](Worker& w, rt::Platform& p) {
        Probe probe;
        const LaunchResult r = w.run(launch(&post_and_wait, &probe, {region(p, kMiB), 4096, 1, 0, 0}));
        EXPECT_TRUE(r.ok() && probe.done[0]);
        return r.kernel_time_ps;
    };
    uint64_t cold = 0, warm = 0;
    {
        Worker w(*normal_, sdma(false));
        EXPECT_FALSE(w.warmup().ran);
        cold = time_first_prefetch(w, *normal_);
    }
    {
        Worker w(*normal_, sdma(true));
        EXPECT_EQ(w.warmup().warmed, 48u);
        EXPECT_EQ(w.warmup().declined + w.warmup().unreached, 0u);
        // 48 channels x 92 us, serialised in the engine, from 8 cores: ~4.4 ms.
        EXPECT_GT(w.warmup().time_ps, 48 * 92000000ull);
        EXPECT_LT(w.warmup().time_ps, 48 * 92000000ull * 11 / 10);
        warm = time_first_prefetch(w, *normal_);
    }
    EXPECT_GT(cold, 92000000u);
    EXPECT_LT(warm, 10000000u);
}

TEST_F(Runtime, WarmupDeclinesAChannelWhoseQueueIsNotIdle) {
    Worker w(*normal_, sdma(false));
    const uint64_t record = rt::WorkspaceLayout::channel_info(w.dma_workspace(0), 5);
    const uint32_t head = 1;
    normal_->gm_write(record, &head, 4);  // head != tail: not idle
    ASSERT_EQ(w.warm_channels(), 0);
    EXPECT_EQ(w.warmup().warmed, 47u);
    EXPECT_EQ(w.warmup().declined, 1u);
}

// §5 items 11, 12, 14 and the handle encoding
TEST_F(Runtime, PostSplitsIntoOneMiBRequestsPlusAFlagCopy) {
    WorkerOptions o = sdma();
    o.kernel.request_bytes = kMiB;  // PTO-ISA before 7ddaa823 (preset a2a3-2026-07)
    Worker w(*normal_, o);
    Probe probe;
    const uint64_t addr = static_cast<uint64_t>(region(*normal_, 4 * kMiB));
    const SdmaStats before = normal_->soc().sdma.stats();
    rt::ChannelRecord rec;
    normal_->gm_read(rt::WorkspaceLayout::channel_info(w.dma_workspace(0), 0), &rec, sizeof rec);
    const LaunchResult r = w.run(launch(&post_and_wait, &probe, {static_cast<int64_t>(addr), 5 * kMiB / 2, 1, 0, 0}));
    ASSERT_TRUE(r.ok()) << r.first_error();
    EXPECT_TRUE(probe.done[0]);
    EXPECT_EQ(probe.handle[0], (uint64_t{1} << 58) | 1);
    const SdmaStats& after = normal_->soc().sdma.stats();
    EXPECT_EQ(after.prefetch_requests - before.prefetch_requests, 3u);
    EXPECT_EQ(after.copy_requests - before.copy_requests, 1u);
    EXPECT_EQ(after.prefetch_bytes - before.prefetch_bytes, 5 * kMiB / 2);
    EXPECT_EQ(probe.record_after, 1u);
    // The ring holds what the protocol says, from the tail the session read.
    const uint32_t lengths[] = {1 << 20, 1 << 20, 1 << 19, 8};
    for (uint32_t i = 0; i < 4; ++i) {
        uint8_t raw[kSdmaRequestBytes];
        normal_->gm_read(rec.sq_base + ((rec.sq_tail + i) % rec.sq_depth) * kSdmaRequestBytes, raw, sizeof raw);
        const SdmaRequest q = SdmaRequest::decode(raw);
        EXPECT_EQ(q.type, kSdmaType);
        EXPECT_EQ(q.length, lengths[i]) << i;
        EXPECT_EQ(q.opcode, i < 3 ? kSdmaOpCachePrefetch : kSdmaOpCopy) << i;
        EXPECT_EQ(q.task_id, i) << i;
        EXPECT_EQ(q.kernel_credit, 240);
        const uint64_t expected = i < 3 ? addr + i * kMiB : rt::WorkspaceLayout::flag_slot(w.dma_workspace(0), 0, 1);
        EXPECT_EQ(q.src, expected) << i;
        EXPECT_EQ(q.dst, i < 3 ? 0 : rt::WorkspaceLayout::post_done(w.dma_workspace(0), 0, 0)) << i;
    }
}

// prefetch-protocol.md §7: today's data requests carry up to 64 MiB
TEST_F(Runtime, PostSplitsInto64MiBRequestsByDefault) {
    Worker w(*normal_, sdma());
    Probe probe;
    const uint64_t addr = static_cast<uint64_t>(region(*normal_, 100 * kMiB));
    const SdmaStats before = normal_->soc().sdma.stats();
    rt::ChannelRecord rec;
    normal_->gm_read(rt::WorkspaceLayout::channel_info(w.dma_workspace(0), 0), &rec, sizeof rec);
    ASSERT_TRUE(w.run(launch(&post_and_wait, &probe, {static_cast<int64_t>(addr), 100 * kMiB, 1, 0, 0})).ok());
    EXPECT_TRUE(probe.done[0]);
    const SdmaStats& after = normal_->soc().sdma.stats();
    EXPECT_EQ(after.prefetch_requests - before.prefetch_requests, 2u);
    EXPECT_EQ(after.prefetch_bytes - before.prefetch_bytes, 100 * kMiB);
    const uint32_t lengths[] = {64 << 20, 36 << 20, 8};
    for (uint32_t i = 0; i < 3; ++i) {
        uint8_t raw[kSdmaRequestBytes];
        normal_->gm_read(rec.sq_base + ((rec.sq_tail + i) % rec.sq_depth) * kSdmaRequestBytes, raw, sizeof raw);
        EXPECT_EQ(SdmaRequest::decode(raw).length, lengths[i]) << i;
    }
}

// §5 items 12 and 14: in-order completion, Test, and the poll budget
TEST_F(Runtime, WaitingOnALaterEventCompletesEarlierOnes) {
    Worker w(*normal_, sdma());
    Probe probe;
    ASSERT_TRUE(w.run(launch(&order_and_test, &probe, {region(*normal_, 8 * kMiB)})).ok());
    EXPECT_FALSE(probe.test_early);
    EXPECT_TRUE(probe.done[1]);
    EXPECT_TRUE(probe.earlier_done);
    EXPECT_TRUE(probe.test_late);
}

TEST_F(Runtime, WaitGivesUpAfterThePollBudget) {
    WorkerOptions o = sdma();
    o.kernel.poll_limit = 5;
    Worker w(*normal_, o);
    Probe probe;
    const LaunchResult r = w.run(launch(&post_and_wait, &probe, {region(*normal_, 8 * kMiB), 8 * kMiB, 1, 0, 0}));
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(probe.done[0]);  // 8 MiB take ~35 us; 5 polls take ~1 us
    EXPECT_LT(r.kernel_time_ps, 20000000u);
}

// §5 item 13
TEST_F(Runtime, HandleZeroCasesCompleteAtOnceWithoutRequests) {
    WorkerOptions o = sdma();
    o.kernel.request_bytes = kMiB;
    Worker w(*shallow_, o);  // ring depth 16: at most 15 requests of 1 MiB per post
    const uint64_t addr = static_cast<uint64_t>(region(*shallow_, 16 * kMiB));
    struct Case {
        const char* what;
        int64_t addr, bytes, null_ws;
        bool zero;
    } cases[] = {
        {"null workspace", static_cast<int64_t>(addr), 4096, 1, true},
        {"zero bytes", static_cast<int64_t>(addr), 0, 0, true},
        {"null source", 0, 4096, 0, true},
        {"16 MiB: 16 + 1 requests exceed the ring", static_cast<int64_t>(addr), 16 * kMiB, 0, true},
        {"14 MiB: 14 + 1 requests fill the ring exactly", static_cast<int64_t>(addr), 14 * kMiB, 0, false},
    };
    for (const Case& c : cases) {
        Probe probe;
        const uint64_t requests = shallow_->soc().sdma.stats().requests;
        ASSERT_TRUE(w.run(launch(&post_and_wait, &probe, {c.addr, c.bytes, 1, c.null_ws, 0})).ok()) << c.what;
        EXPECT_EQ(probe.handle[0] == 0, c.zero) << c.what;
        EXPECT_TRUE(probe.done[0]) << c.what;
        EXPECT_EQ(shallow_->soc().sdma.stats().requests == requests, c.zero) << c.what;
    }
}

// §5 item 15
TEST_F(Runtime, SixtyFifthPostBlocksUntilTheFirstIsDone) {
    Worker w(*normal_, sdma());
    auto probe = std::make_unique<Probe>();
    // Post 1 moves 64 MiB (~240 us of engine time); posts 2..65 move 4 KiB each.
    // GM addresses are reused after a free and the L2 keeps lines by address, so
    // the region lies past a 1 GiB gap, where no earlier test prefetched: a
    // resident region would only pass the engine's residency check.
    region(*normal_, 1024 * kMiB);
    const int64_t fresh = region(*normal_, 65 * kMiB);
    ASSERT_FALSE(normal_->soc().l2.resident(static_cast<uint64_t>(fresh)));
    ASSERT_FALSE(normal_->soc().l2.resident(static_cast<uint64_t>(fresh) + 64 * kMiB - 1));
    const LaunchResult r = w.run(launch(&post_and_wait, probe.get(), {fresh, 4096, 65, 0, 64 * kMiB}));
    ASSERT_TRUE(r.ok()) << r.first_error();
    for (int i = 0; i < 65; ++i) {
        EXPECT_NE(probe->handle[i], 0u) << i;
        EXPECT_TRUE(probe->done[i]) << i;
    }
    // Posts 2..64 take a microsecond or two of core time each; the 65th reuses
    // the first post's flag slot and blocks until post 1 is observed done.
    uint64_t slowest = 0, posted = 0;
    for (int i = 1; i < 64; ++i) slowest = std::max(slowest, probe->post_ps[i]);
    for (int i = 0; i < 64; ++i) posted += probe->post_ps[i];
    EXPECT_LT(slowest, 3000000u);
    const uint64_t engine = static_cast<uint64_t>(64.0 * kMiB / 280e9 * 1e12);  // post 1 alone
    EXPECT_GT(probe->post_ps[64], engine - posted - 20000000);
    EXPECT_GT(probe->post_ps[64], 100000000u);
}

// §5 items 16 and 18
TEST_F(Runtime, RebuildingASessionRestartsIdsAndMismatchIsNotDetected) {
    Worker w(*normal_, sdma());
    Probe probe;
    const LaunchResult r = w.run(launch(&rebuild_session, &probe, {region(*normal_, kMiB)}));
    ASSERT_TRUE(r.ok()) << r.first_error();
    EXPECT_TRUE(probe.done[0] && probe.done[1] && probe.done[2] && probe.done[3]);
    EXPECT_EQ(probe.handle[0] & 0xFF, 4u);
    EXPECT_EQ(probe.handle[1] & 0xFF, 1u);  // restarted at 1
    EXPECT_TRUE(probe.done[4]);
    EXPECT_EQ(probe.record_after, 1u);      // the shared record restarted too
    EXPECT_FALSE(probe.done[5]);            // the mismatched wait gave up
    for (const rt::CoreTiming& c : r.cores) EXPECT_TRUE(c.violations.empty());
}

// §5 item 17
TEST_F(Runtime, ChannelGroupIsTheClusterIndex) {
    Worker w(*few_channels_, sdma());  // 8 channels: clusters 8.. have no group
    auto probe = std::make_unique<Probe>();
    const LaunchResult r = w.run(launch(&post_and_wait, probe.get(), {region(*few_channels_, 4 * kMiB), 4 * kMiB, 1, 0, 0},
                                        LaunchSpec{4, 2, false}));
    ASSERT_TRUE(r.ok()) << r.first_error();
    // Both vector cores of a cluster post on the cluster's group: a warning.
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_NE(r.warnings[0].find("channel group"), std::string::npos);
    const SdmaStats& s = few_channels_->soc().sdma.stats();
    EXPECT_GT(s.requests, 0u);
    for (unsigned c = 0; c < 8; ++c) EXPECT_EQ(few_channels_->soc().sdma.channel(c).error, SdmaError::None);
}

TEST_F(Runtime, GroupBeyondTheChannelsIsANoOp) {
    Worker w(*few_channels_, sdma());
    auto probe = std::make_unique<Probe>();
    // Run on clusters 0..9 with one vector core each; record the last core's handle.
    struct Only {
        static void kernel(int64_t* args) {
            if (current_core().block_idx() == 9) post_and_wait(args);
        }
    };
    ASSERT_TRUE(w.run(launch(&Only::kernel, probe.get(), {region(*few_channels_, kMiB), 4096, 1, 0},
                             LaunchSpec{10, 1, false})).ok());
    EXPECT_EQ(probe->handle[0], 0u);
    EXPECT_TRUE(probe->done[0]);
}

// §5 item 19: prefetch disabled (the CPU-simulation semantics)
TEST_F(Runtime, DisabledPrefetchIsANoOpThatCompletes) {
    WorkerOptions o = sdma();
    o.kernel.prefetch_enabled = false;
    Worker w(*normal_, o);
    Probe probe;
    const uint64_t requests = normal_->soc().sdma.stats().requests;
    ASSERT_TRUE(w.run(launch(&post_and_wait, &probe, {region(*normal_, kMiB), 4096, 1, 0, 0})).ok());
    EXPECT_EQ(probe.handle[0], 0u);
    EXPECT_TRUE(probe.done[0]);
    EXPECT_EQ(normal_->soc().sdma.stats().requests, requests);
}

TEST_F(Runtime, PrefetchFromACubeCoreIsAnError) {
    Worker w(*normal_, sdma());
    Probe probe;
    const LaunchResult r = w.run(launch(&prefetch_from_cube, &probe, {}, LaunchSpec{1, 0, true}));
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.first_error().find("cube core"), std::string::npos) << r.first_error();
}

TEST_F(Runtime, PlPrefetchSurfaceAndItsShapeRules) {
    Worker w(*normal_, sdma());
    Probe probe;
    ASSERT_TRUE(w.run(launch(&pl_style, &probe, {region(*normal_, kMiB)})).ok());
    EXPECT_NE(probe.handle[0], 0u);
    EXPECT_TRUE(probe.done[0]);
    using rt::TensorView;
    EXPECT_EQ(rt::flat_prefetch_bytes(TensorView{4096, 4, {128}}), 512u);
    EXPECT_EQ(rt::flat_prefetch_bytes(TensorView{4096, 4, {1, 128}}), 512u);
    EXPECT_EQ(rt::flat_prefetch_bytes(TensorView{4096, 2, {1, 1, 128}}), 256u);
    auto message = [](const TensorView& t) {
        try {
            rt::flat_prefetch_bytes(t);
        } catch (const rt::PrefetchError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message(TensorView{4096, 4, {4, 32}}).find("flat contiguous logical 1D"), std::string::npos);
    EXPECT_NE(message(TensorView{4096, 4, {1, -1}}).find("dimension 1 is dynamic"), std::string::npos);
    EXPECT_NE(message(TensorView{4096, 4, {}}).find("rank-0"), std::string::npos);
}

TEST_F(Runtime, UnifiedBufferIsEnforced) {
    Worker w(*normal_, WorkerOptions{});
    Probe probe;
    const LaunchResult r = w.run(launch(&ub_overflow, &probe, {}, LaunchSpec{1, 1, false}, false));
    EXPECT_NE(r.first_error().find("tile at UB offset 0x2f800 + 8192 bytes exceeds the 192 KiB UB"), std::string::npos)
        << r.first_error();
    const LaunchResult cube = w.run(launch(&vector_tile_on_cube, &probe, {}, LaunchSpec{1, 0, true}, false));
    EXPECT_NE(cube.first_error().find("a cube core has no UB buffer"), std::string::npos) << cube.first_error();
}

TEST_F(Runtime, LoadsThatHitAreFasterAndFlagsOrderPipes) {
    Worker w(*normal_, WorkerOptions{});
    Probe probe;
    const auto gm = static_cast<uint64_t>(region(*normal_, 2 << 20));
    ASSERT_TRUE(w.run(launch(&load_timing, &probe, {static_cast<int64_t>(normal_->device_pointer(gm))},
                             LaunchSpec{1, 1, false}, false)).ok());
    const uint64_t miss = probe.post_ps[0], hit = probe.post_ps[1];
    // The transfer's set-up (330 cycles, ~178 ns), then 64 KiB at 110 B/cycle,
    // 1.85 GHz: ~322 ns when every line hits; misses pay GM round trips with 32
    // lines in flight.
    EXPECT_GT(hit, 450000u);
    EXPECT_LT(hit, 600000u);
    EXPECT_GT(miss, 2 * hit);
    // Without the flag the store runs beside the load; with it, after.
    EXPECT_LT(probe.post_ps[3] + 200000, probe.post_ps[4]);
}

// A TLOAD moves row by row, each row's values at its own call, and no row is
// called more than core.quantum before it starts (Core::hold_within_quantum,
// once per transfer): a write made between two rows' calls is seen by the later
// row only. One hold for the instruction's first row would call the last row
// with the first, ahead of the write (the check's negative control: merged
// holds read row 63 as it was).
TEST_F(Runtime, EachRowOfATransferSeesWritesMadeUntilItsCall) {
    Worker w(*normal_, WorkerOptions{});
    Probe probe;
    const auto gm = static_cast<uint64_t>(region(*normal_, 64 * 1024 * 4));
    std::vector<float> rows(64 * 1024);
    for (int r = 0; r < 64; ++r) rows[r * 1024] = static_cast<float>(r + 1);
    normal_->gm_write(gm, rows.data(), rows.size() * 4);
    ASSERT_TRUE(w.run(launch(&rows_and_a_late_write, &probe,
                             {static_cast<int64_t>(normal_->device_pointer(gm)), static_cast<int64_t>(gm)},
                             LaunchSpec{1, 2, false}, false)).ok());
    const Config& cfg = normal_->config();
    const uint64_t write = probe.post_ps[0], began = probe.post_ps[1];
    // The case the check needs: the load begins before the write, and its last
    // row starts (after the set-up and 63 rows of 2 KiB at the load's rate, at
    // the earliest) more than a quantum after it.
    const uint64_t last_row = began + cfg.time("core.transfer_setup") +
                              static_cast<uint64_t>(63 * 2048 * 1e12 / cfg.bandwidth("core.load_bandwidth"));
    ASSERT_LT(began + 100000, write);
    ASSERT_GT(last_row, write + cfg.time("core.quantum") + 50000);
    ASSERT_GT(probe.post_ps[2], last_row);
    EXPECT_FALSE(probe.done[0]);  // row 0 was called before the write
    EXPECT_TRUE(probe.done[1]);   // row 63 after it
}

// A tile move's lines take their bytes in runs (Core::move), and a move that
// fails at a line outside GM has moved the lines before it, as one line at a
// time would (negative control: without the run's move before the error, GM's
// last KiB stays as it was and the check fails).
TEST_F(Runtime, AMoveThatFailsPastGmEndHasMovedTheLinesBeforeIt) {
    Worker w(*normal_, WorkerOptions{});
    Probe probe;
    const uint64_t end = normal_->config().bytes("gm.size");
    const LaunchResult r =
        w.run(launch(&store_past_gm_end, &probe, {static_cast<int64_t>(end - 1024)}, LaunchSpec{1, 1, false}, false));
    EXPECT_NE(r.first_error().find("write to 0x"), std::string::npos) << r.first_error();
    EXPECT_NE(r.first_error().find("outside GM"), std::string::npos) << r.first_error();
    std::vector<float> got(256);
    normal_->gm_read(end - 1024, got.data(), 1024);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], static_cast<float>(i + 1)) << "element " << i;
}

TEST_F(Runtime, HostCopiesTakeNoSimulatedTimeOrBandwidth) {
    // A kernel right after the host wrote 64 MiB runs as fast as one after nothing:
    // host copies happen before a launch and occupy no GM channel.
    Worker w(*normal_, WorkerOptions{});
    auto time_load = [&](uint64_t host_bytes) {
        const uint64_t gm = static_cast<uint64_t>(region(*normal_, 4 << 20));
        if (host_bytes) {
            std::vector<uint8_t> junk(host_bytes, 7);
            normal_->gm_write(static_cast<uint64_t>(region(*normal_, host_bytes)), junk.data(), junk.size());
        }
        const uint64_t before = normal_->now_ps();
        Probe probe;
        EXPECT_TRUE(w.run(launch(&load_timing, &probe, {static_cast<int64_t>(normal_->device_pointer(gm))},
                                 LaunchSpec{1, 1, false}, false)).ok());
        EXPECT_EQ(normal_->now_ps() - before > 0, true);
        return probe.post_ps[0];
    };
    const uint64_t quiet = time_load(0);
    // (Equal but for where the regions fall on GM channels; 64 MiB through the
    // channels would add ~40 us of queueing.)
    EXPECT_LT(time_load(64 << 20), quiet + 1000000);
}

// SimPlatform::gm_reserve (a device's runtime slots, session/runtime_slots.h): GM carved
// from the top, below earlier reservations, that gm_alloc never hands out.
TEST_F(Runtime, ReservedGmIsNeverHandedOutByGmAlloc) {
    SimPlatform& p = *shallow_;
    const uint64_t page = SimPlatform::kAllocAlign;
    const uint64_t top = p.gm_reserve(100);
    EXPECT_EQ(top, p.config().bytes("gm.size") - page);
    const uint64_t lowest = p.gm_reserve(page + 1);
    EXPECT_EQ(lowest, top - 2 * page);
    const uint64_t first = p.gm_alloc(1);
    const uint64_t room = lowest - (first + page);  // what is left between the stack and the reservations
    // Negative control: were gm_alloc's limit still gm.size, this allocation would reach the reservations.
    EXPECT_THROW(p.gm_alloc(room + 1), std::runtime_error);
    EXPECT_EQ(p.gm_alloc(room), first + page);
    EXPECT_THROW(p.gm_reserve(1), std::runtime_error);
    p.gm_free(first);
}

}  // namespace
}  // namespace pfsim
