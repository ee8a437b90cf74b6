// A die's SDMA channel groups are its own: which core posted on which group
// during a launch (the shared-group warning, the ring-tail check of
// runtime/prefetch.cc) is kept by each die. Two dies running together, each
// with one core posting on group 0 of its own engine -- a different core on
// each (asymmetric layouts), their workspaces at the same GM address -- share
// no group and get no warning. The control: two cores of one die posting on
// one group are warned about.
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pto/pto-inst.hpp"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/prefetch.h"
#include "runtime/worker.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

// args: 0 the SDMA workspace (a device pointer), 1 the GM address of 4 KiB to
// prefetch, 2 non-zero: this core posts (on its block's channel group).
void post_when_asked(int64_t* args) {
    if (!args[2]) return;
    pto::PrefetchAsyncContext ctx(reinterpret_cast<const void*>(args[0]));
    rt::AsyncEvent e = rt::prefetch_async(static_cast<uint64_t>(args[1]), 4096, ctx);
    (void)e.Wait(ctx.session);
}

void nothing(int64_t*) {}

class ChannelGroups : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        static const Config cfg = test::config_with({});
        dies_ = new SimDies(cfg, 2, "groups");
        test::elaborate();
        rt::WorkerOptions o;
        o.enable_sdma = true;
        o.warmup = false;
        for (uint32_t r = 0; r < 2; ++r) {
            workers_.push_back(new rt::Worker(dies_->die(r), o));
            rt::KernelLaunch arm;  // a launch arms the kernel side (its options, the die's groups)
            arm.name = "nothing";
            arm.entries.aiv = &nothing;
            ASSERT_TRUE(workers_.back()->run(arm).ok());
        }
    }

    // Rank `rank`'s launch on cluster 0's two vector cores: subblock `poster` posts.
    static SimDies::Launch on(uint32_t rank, uint32_t poster, std::vector<std::vector<int64_t>>& args) {
        SimDies& d = *dies_;
        const uint64_t ws = workers_[rank]->dma_workspace(rt::DMA_WORKSPACE_SDMA);
        const uint64_t src = d.die(rank).gm_alloc(4096);
        args = {{static_cast<int64_t>(d.device_pointer(rank, ws)), static_cast<int64_t>(src), poster == 0},
                {static_cast<int64_t>(d.device_pointer(rank, ws)), static_cast<int64_t>(src), poster == 1}};
        SimDies::Launch l;
        l.rank = rank;
        l.entries.aiv = &post_when_asked;
        l.spec = rt::LaunchSpec{1, 2, false};
        l.args_per_core = {args[0].data(), args[1].data()};
        return l;
    }

    static std::vector<std::string> shared_group_warnings(const std::vector<rt::LaunchResult>& results) {
        std::vector<std::string> found;
        for (const rt::LaunchResult& r : results) {
            EXPECT_TRUE(r.ok()) << r.first_error();
            for (const std::string& w : r.warnings) {
                if (w.find("both post on SDMA channel group") != std::string::npos) found.push_back(w);
            }
        }
        return found;
    }

    static SimDies* dies_;
    static std::vector<rt::Worker*> workers_;
};
SimDies* ChannelGroups::dies_ = nullptr;
std::vector<rt::Worker*> ChannelGroups::workers_;

TEST_F(ChannelGroups, CoresOfTwoDiesOnTheirOwnGroupZeroShareNoGroup) {
    // The old key, (workspace, group), is the same on both dies.
    ASSERT_EQ(workers_[0]->dma_workspace(rt::DMA_WORKSPACE_SDMA), workers_[1]->dma_workspace(rt::DMA_WORKSPACE_SDMA));
    std::vector<std::vector<int64_t>> a0, a1;
    const std::vector<rt::LaunchResult> r = dies_->launch({on(0, 0, a0), on(1, 1, a1)});
    EXPECT_EQ(shared_group_warnings(r), std::vector<std::string>{});
}

// The control: on one die, the cluster's two vector cores share group 0.
TEST_F(ChannelGroups, TwoCoresOfOneDieOnOneGroupAreWarnedAbout) {
    std::vector<std::vector<int64_t>> a0;
    SimDies::Launch both = on(0, 0, a0);
    a0[1][2] = 1;
    const std::vector<std::string> warned = shared_group_warnings(dies_->launch({both}));
    ASSERT_EQ(warned.size(), 1u);
    EXPECT_NE(warned[0].find("channel group 0"), std::string::npos) << warned[0];
}

// A warning belongs to the launch that raised it: a later launch of the same
// cores where only one core posts is not warned about again.
TEST_F(ChannelGroups, ALaterLaunchDoesNotRepeatAnEarlierLaunchsWarning) {
    std::vector<std::vector<int64_t>> shared, alone;
    SimDies::Launch both = on(0, 0, shared);
    shared[1][2] = 1;
    ASSERT_EQ(shared_group_warnings(dies_->launch({both})).size(), 1u);
    EXPECT_EQ(shared_group_warnings(dies_->launch({on(0, 0, alone)})), std::vector<std::string>{});
}

}  // namespace
}  // namespace pfsim
