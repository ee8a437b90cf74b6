// The kernel side's state is each die's own (rt::KernelSide): the options its
// worker armed it with (what-ifs, injected faults), the what-if counts, and
// the prefetch observers. Two dies run together in one simulation, each with
// its worker armed differently -- die 0 first, then die 1, the order in which
// one process-wide state would have kept die 1's -- and each posts one
// prefetch: each behaves and counts as its own worker said. The control: die
// 0 given what one shared state would have held (die 1's options) behaves as
// die 1, and the first test's check tells.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pfsim_kernel_abi.h"
#include "pto/pto-inst.hpp"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/prefetch.h"
#include "runtime/worker.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

// Every kernel call's source line, as the loader's symbolizer would name it.
constexpr const char* kSite = "kernel_side_test.cpp:7";

// args: 0 the SDMA workspace (a device pointer), 1 the GM address of 4 KiB to
// prefetch; 2 set to the prefetch's event handle (0: dropped).
void post_and_wait(int64_t* args) {
    pto::PrefetchAsyncContext ctx(reinterpret_cast<const void*>(args[0]));
    const rt::AsyncEvent e = rt::prefetch_async(static_cast<uint64_t>(args[1]), 4096, ctx);
    args[2] = static_cast<int64_t>(e.handle);
    (void)e.Wait(ctx.session);
}

void nothing(int64_t*) {}

// Counts the posts it is told about.
struct PostCounter : rt::PrefetchObserver {
    uint64_t posts = 0;
    void posted(const rt::PrefetchAsyncContext&, uint64_t, uint64_t, uint64_t, uint64_t) override { ++posts; }
};

// What one die's post did.
struct Outcome {
    uint64_t handle = 0;
    std::map<std::string, uint64_t> dropped;  // the die's dropped_site_counts
    std::vector<std::string> violations;      // the protocol checker's, on its core
};

class KernelSide : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        static const Config cfg = test::config_with({});
        dies_ = new SimDies(cfg, 2, "kside");
        test::elaborate();
        rt::WorkerOptions o;
        o.enable_sdma = true;
        o.warmup = false;
        for (uint32_t r = 0; r < 2; ++r) workers_.push_back(new rt::Worker(dies_->die(r), o));
    }

    void SetUp() override {
        kernel_source_line = [](const std::vector<void*>&) { return std::string(kSite); };
        for (rt::Worker* w : workers_) {
            w->set_site_what_ifs({}, {});
            w->set_skip_wait(false);
        }
    }
    void TearDown() override { kernel_source_line = nullptr; }

    // A launch arms its die's kernel side with its worker's options: die 0, then die 1.
    static void arm_both() {
        for (rt::Worker* w : workers_) {
            rt::KernelLaunch arm;
            arm.name = "nothing";
            arm.entries.aiv = &nothing;
            ASSERT_TRUE(w->run(arm).ok());
        }
    }

    // Both dies at once, one vector core each posting one prefetch.
    static std::vector<Outcome> post_on_both() {
        std::vector<std::vector<int64_t>> args(2);
        std::vector<SimDies::Launch> launches;
        for (uint32_t r = 0; r < 2; ++r) {
            const uint64_t ws = workers_[r]->dma_workspace(rt::DMA_WORKSPACE_SDMA);
            args[r] = {static_cast<int64_t>(dies_->device_pointer(r, ws)),
                       static_cast<int64_t>(dies_->die(r).gm_alloc(4096)), -1};
            SimDies::Launch l;
            l.rank = r;
            l.entries.aiv = &post_and_wait;
            l.spec = rt::LaunchSpec{1, 1, false};
            l.args_per_core = {args[r].data()};
            launches.push_back(l);
        }
        const std::vector<rt::LaunchResult> results = dies_->launch(launches);
        std::vector<Outcome> out(2);
        for (uint32_t r = 0; r < 2; ++r) {
            EXPECT_TRUE(results[r].ok()) << results[r].first_error();
            out[r].handle = static_cast<uint64_t>(args[r][2]);
            out[r].dropped = dies_->die(r).kernel_side().dropped_site_counts;
            for (const rt::CoreTiming& c : results[r].cores) {
                out[r].violations.insert(out[r].violations.end(), c.violations.begin(), c.violations.end());
            }
        }
        return out;
    }

    // Die 0 drops kSite's prefetches (--drop-prefetch), die 1 does not.
    static void drop_on_die0() {
        workers_[0]->set_site_what_ifs({kSite}, {});
        arm_both();
    }

    // Die 0 dropped and counted its post; die 1 posted and counted nothing.
    static void expect_drop_on_die0_only(const std::vector<Outcome>& o) {
        EXPECT_EQ(o[0].handle, 0u);
        EXPECT_EQ(o[0].dropped, (std::map<std::string, uint64_t>{{kSite, 1}}));
        EXPECT_NE(o[1].handle, 0u);
        EXPECT_EQ(o[1].dropped, (std::map<std::string, uint64_t>{}));
    }

    static SimDies* dies_;
    static std::vector<rt::Worker*> workers_;
};
SimDies* KernelSide::dies_ = nullptr;
std::vector<rt::Worker*> KernelSide::workers_;

TEST_F(KernelSide, AWhatIfIsItsDiesOwnAndCountedThere) {
    drop_on_die0();
    expect_drop_on_die0_only(post_on_both());
}

// The control: die 0 with the options one process-wide state would have kept
// (die 1's, armed last) posts, and the check above fails on it.
TEST_F(KernelSide, SharedOptionsWouldFailTheCheck) {
    drop_on_die0();
    dies_->die(0).kernel_side().options = dies_->die(1).kernel_side().options;
    const std::vector<Outcome> o = post_on_both();
    EXPECT_NE(o[0].handle, 0u);
    EXPECT_EQ(o[0].dropped, (std::map<std::string, uint64_t>{}));
}

// An injected fault (--inject skip-wait) on die 1: its wait returns before the
// post is done, which the protocol checker reports there; die 0's does not.
TEST_F(KernelSide, AnInjectedFaultIsItsDiesOwn) {
    workers_[1]->set_skip_wait(true);
    arm_both();
    const std::vector<Outcome> o = post_on_both();
    EXPECT_EQ(o[0].violations, std::vector<std::string>{});
    ASSERT_EQ(o[1].violations.size(), 1u);
    EXPECT_NE(o[1].violations[0].find("wait returned true for post 1"), std::string::npos) << o[1].violations[0];
}

// Setting the what-ifs again starts the die's counts afresh (a run's are its own).
TEST_F(KernelSide, SettingTheWhatIfsClearsTheirCounts) {
    drop_on_die0();
    ASSERT_EQ(post_on_both()[0].dropped.size(), 1u);
    workers_[0]->set_site_what_ifs({kSite}, {});
    EXPECT_EQ(dies_->die(0).kernel_side().dropped_site_counts, (std::map<std::string, uint64_t>{}));
}

// An observer of die 0 is told of die 0's post, not of die 1's.
TEST_F(KernelSide, AnObserverWatchesItsDieOnly) {
    arm_both();
    PostCounter counter;
    dies_->die(0).kernel_side().add_observer(&counter);
    const std::vector<Outcome> o = post_on_both();
    dies_->die(0).kernel_side().remove_observer(&counter);
    ASSERT_NE(o[0].handle, 0u);
    ASSERT_NE(o[1].handle, 0u);
    EXPECT_EQ(counter.posts, 1u);
}

}  // namespace
}  // namespace pfsim
