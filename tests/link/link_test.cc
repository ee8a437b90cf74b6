// The die-to-die link (model/link/die_link.h): an SDMA copy that names a peer
// window reads or writes the peer die's GM, paying the link's latency both ways
// and its bandwidth; an address no connected die holds stops the channel as an
// address outside GM does.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "hw/sdma_request.h"
#include "model/common/peer_window.h"
#include "model/common/time.h"
#include "model/trace/recorder.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

constexpr uint64_t kRing = 1ull << 24;
constexpr uint64_t kLinkBandwidth = 56'000'000'000;  // the preset's, set again here so the test does not move with it
constexpr Tick kLatency = 1'000'000;                  // 1 us

// Dies built before elaboration: pairs linked rank 0 <-> rank 1, and a lone die.
class Link : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (!pairs_.empty()) return;
        const Config cfg = test::config_with({"link.bandwidth=56GB/s", "link.latency=1us"});
        const Config no_latency = test::config_with({"link.bandwidth=56GB/s", "link.latency=0us"});
        // Links faster than the SDMA engine (280 GB/s): the engine paces peer copies.
        const Config fast = test::config_with({"link.bandwidth=2TB/s", "link.latency=0us"});
        for (int i = 0; i < 2; ++i) {
            test::Harness& a = test::make_harness(fast);
            test::Harness& b = test::make_harness(fast);
            for (test::Harness* h : {&a, &b}) {
                h->soc.link.connect(a.soc.l2);
                h->soc.link.connect(b.soc.l2);
            }
            fast_pairs_.push_back({&a, &b});
        }
        for (int i = 0; i < 6; ++i) {
            // The last pair's link has no latency: bandwidth alone paces it.
            test::Harness& a = test::make_harness(i == 5 ? no_latency : cfg);
            test::Harness& b = test::make_harness(i == 5 ? no_latency : cfg);
            for (test::Harness* h : {&a, &b}) {
                h->soc.link.connect(a.soc.l2);
                h->soc.link.connect(b.soc.l2);
            }
            pairs_.push_back({&a, &b});
        }
        lone_ = &test::make_harness(cfg);
        // Eight dies, each linked to all: rank 7's window is where the preset's
        // alias (8 TiB) lay in the plan before.
        for (int i = 0; i < 8; ++i) eight_.push_back(&test::make_harness(test::config_with({})));
        for (test::Harness* h : eight_) {
            for (test::Harness* rank : eight_) h->soc.link.connect(rank->soc.l2);
        }
        test::elaborate();
    }
    std::pair<test::Harness*, test::Harness*> fresh_pair() { return pairs_.at(next_++); }
    std::pair<test::Harness*, test::Harness*> no_latency_pair() { return pairs_.back(); }
    static void warm(test::Harness& h, unsigned c) {
        h.setup_ring(c, kRing + c * (1ull << 20), 2048);
        h.ring(c);
        test::run_until_idle();
    }
    static std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
        std::vector<uint8_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + seed);
        return v;
    }
    // Runs one request on channel 0 of `h` (warmed); returns how long it took.
    static Tick run_one(test::Harness& h, const SdmaRequest& r) {
        const Tick t0 = test::now();
        h.push_request(0, r);
        h.ring(0);
        test::run_until_idle();
        return h.soc.sdma.channel(0).last_done - t0;
    }
    static std::vector<std::pair<test::Harness*, test::Harness*>> pairs_, fast_pairs_;
    static test::Harness* lone_;
    static std::vector<test::Harness*> eight_;
    static size_t next_;
};
std::vector<std::pair<test::Harness*, test::Harness*>> Link::pairs_;
std::vector<std::pair<test::Harness*, test::Harness*>> Link::fast_pairs_;
test::Harness* Link::lone_ = nullptr;
std::vector<test::Harness*> Link::eight_;
size_t Link::next_ = 0;

TEST_F(Link, ACopyFromAPeerWindowReadsThePeersGmAndPaysTheLink) {
    auto [a, b] = fresh_pair();
    warm(*a, 0);
    const uint64_t src = 1ull << 30, dst = 2ull << 30, n = 256 * 1024;
    const std::vector<uint8_t> data = pattern(n, 3);
    b->soc.gm.store().write(src, data.data(), n);
    const Tick local = run_one(*a, SdmaRequest::copy(dst + n, dst + 2 * n, n));  // the control: within die 0
    const Tick remote = run_one(*a, SdmaRequest::copy(peer_window(1) + src, dst, n));
    EXPECT_EQ(a->soc.sdma.channel(0).error, SdmaError::None);
    std::vector<uint8_t> back(n);
    a->soc.gm.store().read(dst, back.data(), n);
    EXPECT_EQ(back, data);
    // The bytes crossed the link at its rate, each piece paying the latency there and back.
    EXPECT_GE(remote, transfer_time(n, kLinkBandwidth) + 2 * kLatency);
    EXPECT_GT(remote, 2 * local);
    EXPECT_EQ(a->soc.link.stats().read_bytes, n);
    EXPECT_EQ(b->soc.link.stats().read_bytes, 0u);  // die 1's own link carried nothing
}

TEST_F(Link, ACopyToAPeerWindowWritesThePeersGmCoherentlyWithItsL2) {
    auto [a, b] = fresh_pair();
    warm(*a, 0);
    const uint64_t src = 1ull << 30, dst = 3ull << 30, n = 8192;
    const std::vector<uint8_t> data = pattern(n, 11);
    a->soc.gm.store().write(src, data.data(), n);
    // Die 1 holds the destination's first line in its L2 (a cached read).
    uint8_t line[512];
    b->read(dst, line, sizeof line, test::now());
    ASSERT_TRUE(b->soc.l2.resident(dst));
    run_one(*a, SdmaRequest::copy(src, peer_window(1) + dst, n));
    EXPECT_EQ(a->soc.sdma.channel(0).error, SdmaError::None);
    std::vector<uint8_t> seen(n);
    b->read(dst, seen.data(), n, test::now());  // through die 1's L2: the new bytes
    EXPECT_EQ(seen, data);
    EXPECT_EQ(a->soc.link.stats().write_bytes, n);
}

TEST_F(Link, TwoCopiesOverTheLinkShareItsBandwidth) {
    auto [a, b] = no_latency_pair();
    warm(*a, 0);
    warm(*a, 1);
    const uint64_t n = 1 << 20;
    const Tick one = run_one(*a, SdmaRequest::copy(peer_window(1) + (1ull << 30), 1ull << 31, n));
    const Tick t0 = test::now();
    a->push_request(0, SdmaRequest::copy(peer_window(1) + (1ull << 30), 1ull << 31, n));
    a->push_request(1, SdmaRequest::copy(peer_window(1) + (2ull << 30), 3ull << 30, n));
    a->ring(0);
    a->ring(1);
    test::run_until_idle();
    const Tick both = std::max(a->soc.sdma.channel(0).last_done, a->soc.sdma.channel(1).last_done) - t0;
    // The engine (280 GB/s) could run both at once; the 56 GB/s link cannot.
    EXPECT_GE(one, transfer_time(n, kLinkBandwidth));
    EXPECT_GE(both, 2 * transfer_time(n, kLinkBandwidth));
    // The second stream adds most of its time on the link (without sharing it would add next to nothing).
    EXPECT_GE(both - one, transfer_time(n, kLinkBandwidth) * 3 / 4) << "one " << one << " ps, both " << both << " ps";
    (void)b;
    EXPECT_GT(a->soc.link.stats().wait, 0u);
}

TEST_F(Link, APeerAddressNoDieHoldsStopsTheChannel) {
    auto [a, b] = fresh_pair();
    warm(*a, 0);
    // Rank 2 is not in this simulation: the source is outside GM.
    run_one(*a, SdmaRequest::copy(peer_window(2) + 4096, 1ull << 30, 4096));
    EXPECT_EQ(a->soc.sdma.channel(0).error, SdmaError::SourceOutsideGm);

    // A prefetch fills this die's L2 from its own GM: a peer source is refused.
    auto [c, d] = fresh_pair();
    warm(*c, 0);
    run_one(*c, SdmaRequest::cache_prefetch(peer_window(1) + 4096, 4096));
    EXPECT_EQ(c->soc.sdma.channel(0).error, SdmaError::SourceOutsideGm);

    // A lone die connects no peer: even rank 0's window is outside.
    warm(*lone_, 0);
    run_one(*lone_, SdmaRequest::copy(1ull << 30, peer_window(0) + 4096, 4096));
    EXPECT_EQ(lone_->soc.sdma.channel(0).error, SdmaError::DestinationOutsideGm);
    (void)b;
    (void)d;
}

// The field's mechanism (a2a3-hardware.md, pypto-lib's L2-prefetch guide: a
// weight warm slowed the all-to-all because both queue on one SDMA engine):
// a prefetch stream on die 0's engine slows die 0's peer copy; the same stream
// on die 1's engine (the control) does not.
TEST_F(Link, APrefetchOnTheSameEngineSlowsAPeerCopy) {
    auto [a, b] = fast_pairs_.at(0);
    auto [c, d] = fast_pairs_.at(1);
    for (test::Harness* h : {a, b, c, d}) {
        warm(*h, 0);
        warm(*h, 1);
    }
    const uint64_t n = 4 << 20, warm_bytes = 64 << 20;
    const SdmaRequest copy = SdmaRequest::copy(peer_window(1) + (1ull << 30), 1ull << 31, n);
    const Tick alone = run_one(*a, copy);
    // With a 64 MiB prefetch on another channel of the same engine, started together.
    auto together = [&](test::Harness& copier, test::Harness& prefetcher) {
        const Tick t0 = test::now();
        prefetcher.push_request(1, SdmaRequest::cache_prefetch(3ull << 30, warm_bytes));
        copier.push_request(0, copy);
        prefetcher.ring(1);
        copier.ring(0);
        test::run_until_idle();
        return copier.soc.sdma.channel(0).last_done - t0;
    };
    // Traced: the copy's slice is told from the prefetch's by its name, with
    // how long its pieces waited for the engine (behind the prefetch's).
    auto traced = [&](test::Harness& copier, test::Harness& prefetcher, const char* name) {
        const char* dir = std::getenv("TEST_TMPDIR");
        const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
        TraceRecorder trace(path, 1 << 20);
        copier.soc.sdma.attach_trace(&trace);
        if (&prefetcher != &copier) prefetcher.soc.sdma.attach_trace(&trace);
        const Tick took = together(copier, prefetcher);
        copier.soc.sdma.attach_trace(nullptr);
        prefetcher.soc.sdma.attach_trace(nullptr);
        trace.close();
        std::ifstream in(path);
        return std::make_pair(took, std::string(std::istreambuf_iterator<char>(in), {}));
    };
    // The engine wait the trace shows for the peer get (ns), -1 when there is no such slice.
    auto engine_wait_ns = [](const std::string& trace) {
        const size_t get = trace.find("\"name\":\"peer get\"");
        const size_t at = trace.find("\"engine_wait_ns\":", get);
        return get == std::string::npos || at == std::string::npos ? -1.0 : std::stod(trace.substr(at + 17));
    };
    const auto [shared, shared_trace] = traced(*c, *c, "shared.json");
    const auto [apart, apart_trace] = traced(*a, *b, "apart.json");  // the prefetch on the peer's engine
    EXPECT_NE(shared_trace.find("\"name\":\"prefetch\""), std::string::npos);
    EXPECT_NE(shared_trace.find("\"rank\":1"), std::string::npos);
    EXPECT_GT(engine_wait_ns(shared_trace), 0.5 * (shared - alone) / 1000.0);
    EXPECT_EQ(engine_wait_ns(apart_trace), 0.0);
    EXPECT_GT(shared, alone * 3 / 2) << "alone " << alone << " ps, with a prefetch on its engine " << shared << " ps";
    EXPECT_LT(apart, alone * 11 / 10) << "alone " << alone << " ps, with a prefetch on the peer's engine " << apart << " ps";
    EXPECT_GT(c->soc.sdma.stats().channel_switches, 0u);
    (void)d;
}

// The address plan at its limits: GM's alias at its highest offset (64 TiB) and
// gm.size at its largest (one window) meet no window of the 64 ranks, and each
// window's first and last byte belong to its rank alone. The control: the plan
// before (rank r at (r + 1) << 40) put rank 7's window on the preset's alias.
TEST(AddressPlan, NoPeerWindowMeetsGmOrItsAliasUpToTheLastRank) {
    auto meets = [](uint64_t window, uint64_t begin, uint64_t end) {
        return window < end && begin < window + kPeerWindowBytes;
    };
    auto first_meeting = [&](uint64_t (*window)(uint32_t), uint64_t alias) -> int {
        for (uint32_t r = 0; r < kMaxRanks; ++r) {
            if (meets(window(r), 0, kPeerWindowBytes) || meets(window(r), alias, alias + kPeerWindowBytes)) {
                return static_cast<int>(r);
            }
        }
        return -1;
    };
    const uint64_t preset_alias = test::config_with({}).bytes("gm.l2_cache_offset");
    ASSERT_EQ(preset_alias, uint64_t{1} << 43);
    EXPECT_EQ(first_meeting(&peer_window, kMaxL2CacheOffset), -1);
    EXPECT_EQ(first_meeting(&peer_window, preset_alias), -1);
    EXPECT_EQ(first_meeting([](uint32_t r) { return uint64_t{r + 1} << 40; }, preset_alias), 7);
    for (uint32_t r : {0u, 7u, kMaxRanks - 1}) {
        EXPECT_TRUE(in_peer_window(peer_window(r)));
        EXPECT_EQ(peer_rank(peer_window(r)), r);
        EXPECT_EQ(peer_rank(peer_window(r) + kPeerWindowBytes - 1), r);
        EXPECT_EQ(peer_offset(peer_window(r) + kPeerWindowBytes - 1), kPeerWindowBytes - 1);
    }
    EXPECT_FALSE(in_peer_window(peer_window(kMaxRanks)));  // past the last rank
    EXPECT_FALSE(in_peer_window(kMaxL2CacheOffset + kPeerWindowBytes - 1));  // the last byte of the highest alias
    EXPECT_FALSE(in_peer_window(kPeerWindowBytes - 1));                      // the last byte of the largest GM
}

// Eight dies with the preset's alias (8 TiB, where rank 7's window lay in the
// old plan): die 0's copy from rank 7's window brings rank 7's bytes, and a read
// through die 0's alias its own.
TEST_F(Link, EightDiesReachRankSevenAndTheAliasApart) {
    test::Harness& a = *eight_.front();
    test::Harness& seventh = *eight_.back();
    ASSERT_EQ(a.soc.link.ranks(), 8u);
    warm(a, 0);
    const uint64_t at = 1ull << 30, n = 8192;
    const std::vector<uint8_t> mine = pattern(n, 5), theirs = pattern(n, 9);
    a.soc.gm.store().write(at, mine.data(), n);
    seventh.soc.gm.store().write(at, theirs.data(), n);
    run_one(a, SdmaRequest::copy(peer_window(7) + at, 2ull << 30, n));
    ASSERT_EQ(a.soc.sdma.channel(0).error, SdmaError::None);
    std::vector<uint8_t> copied(n), around(n);
    a.soc.gm.store().read(2ull << 30, copied.data(), n);
    EXPECT_EQ(copied, theirs);
    EXPECT_EQ(a.soc.link.stats().read_bytes, n);
    const uint64_t links_before = a.soc.link.stats().read_bytes;
    a.read_around(at, around.data(), n, test::now());
    EXPECT_EQ(around, mine);
    EXPECT_EQ(a.soc.link.stats().read_bytes, links_before);  // the alias stays on the die
}

}  // namespace
}  // namespace pfsim
