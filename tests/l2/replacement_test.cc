// The L2's replacement policies (model/l2/replacement_*.cc): each one's order
// by hand-worked sequences, the tag store's use of them, the registry against
// the configuration, and the whole L2 under each: values kept, victims chosen
// by the policy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "hw/sdma_request.h"
#include "model/config/params.h"
#include "model/l2/lanes16.h"
#include "model/l2/replacement.h"
#include "model/l2/tag_store.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

// Fills ways 0..n-1 of set 0 with demand fills, in order.
void fill(ReplacementPolicy& p, unsigned n) {
    for (unsigned w = 0; w < n; ++w) p.insert(0, w, Fill::Demand);
}

TEST(Lru, TheLeastRecentlyUsedWayIsTheVictim) {
    auto p = make_replacement("lru", 2, 4);
    fill(*p, 4);
    EXPECT_EQ(p->victim(0), 0u);
    p->touch(0, 0, Fill::Demand);  // order now 1 2 3 0
    EXPECT_EQ(p->victim(0), 1u);
    p->touch(0, 1, Fill::Prefetch);  // a prefetch hit counts as a use: 2 3 0 1
    EXPECT_EQ(p->victim(0), 2u);
    p->insert(0, 2, Fill::Prefetch);  // and a prefetch fill enters as the most recent: 3 0 1 2
    EXPECT_EQ(p->victim(0), 3u);
    EXPECT_EQ(p->victim(1), 0u);  // sets are independent
}

TEST(LruPrefetchLru, APrefetchFillEntersAsTheLeastRecent) {
    auto p = make_replacement("lru_prefetch_lru", 1, 4);
    fill(*p, 4);  // 0 1 2 3
    p->insert(0, 0, Fill::Prefetch);  // replaces way 0 and stays least recent
    EXPECT_EQ(p->victim(0), 0u);
    p->insert(0, 1, Fill::Prefetch);  // a later prefetch is older still: 1 0 2 3
    EXPECT_EQ(p->victim(0), 1u);
    p->touch(0, 1, Fill::Demand);  // a core uses it: the most recent, 0 2 3 1
    EXPECT_EQ(p->victim(0), 0u);
    p->touch(0, 0, Fill::Demand);
    EXPECT_EQ(p->victim(0), 2u);
    p->insert(0, 2, Fill::Demand);  // demand fills as in LRU: 3 1 0 2
    EXPECT_EQ(p->victim(0), 3u);
}

// Against a list of the ways, most recent first, over random uses and fills:
// sets of 1, 5, 12 and 16 ways (places in bytes, updated 16 at once), 17 (in
// bytes, one by one), 300 (in 16 bits) and 70,000 (in 32 bits). The middle of
// three sets is used; its neighbours stay untouched. The list starts as an
// untouched set's order, way 0 the least recent: filling the ways in order
// ends in the same order, and at 70,000 ways costs 70,000 inserts of 70,000
// places each (over a minute under the sanitizers).
TEST(Lru, EveryWidthMatchesARecencyListOverRandomOperations) {
    for (const std::string name : {"lru", "lru_prefetch_lru"}) {
        for (const unsigned ways : {1u, 5u, 12u, 16u, 17u, 300u, 70000u}) {
            auto p = make_replacement(name, 3, ways);
            std::vector<unsigned> order;  // most recent first
            for (unsigned w = ways; w-- > 0;) order.push_back(w);
            std::mt19937 rng(ways);
            const int ops = ways > 1000 ? 300 : 3000;
            for (int op = 0; op < ops; ++op) {
                const unsigned victim = p->victim(1);
                ASSERT_EQ(victim, order.back()) << name << ", " << ways << " ways, operation " << op;
                const bool fill = rng() % 2;
                const unsigned way = fill ? victim : static_cast<unsigned>(rng() % ways);
                const Fill by = rng() % 3 == 0 ? Fill::Prefetch : Fill::Demand;
                order.erase(std::find(order.begin(), order.end(), way));
                if (fill && by == Fill::Prefetch && name == "lru_prefetch_lru") {
                    p->insert(1, way, by);
                    order.push_back(way);
                } else {
                    fill ? p->insert(1, way, by) : p->touch(1, way, by);
                    order.insert(order.begin(), way);
                }
            }
            EXPECT_EQ(p->victim(0), 0u) << name << ", " << ways << " ways: the set before is untouched";
            EXPECT_EQ(p->victim(2), 0u) << name << ", " << ways << " ways: the set after is untouched";
        }
    }
}

TEST(Srrip, AgesTheSetAndReplacesTheFirstDistantWay) {
    auto p = make_replacement("srrip", 1, 4);
    fill(*p, 4);                   // RRPV 2 2 2 2
    p->touch(0, 0, Fill::Demand);  // 0 2 2 2
    EXPECT_EQ(p->victim(0), 1u);   // aged to 1 3 3 3
    p->insert(0, 1, Fill::Demand);  // 1 2 3 3
    EXPECT_EQ(p->victim(0), 2u);
    p->insert(0, 2, Fill::Prefetch);  // 1 2 3 3: a prefetch enters distant
    EXPECT_EQ(p->victim(0), 2u);
    p->touch(0, 2, Fill::Prefetch);  // a prefetch hit is no evidence of reuse
    EXPECT_EQ(p->victim(0), 2u);
    p->touch(0, 2, Fill::Demand);  // a core's is: 1 2 0 3
    EXPECT_EQ(p->victim(0), 3u);
    p->insert(0, 3, Fill::Demand);  // 1 2 0 2
    EXPECT_EQ(p->victim(0), 1u);    // aged to 2 3 1 3
    p->insert(0, 1, Fill::Demand);  // 2 2 1 3
    EXPECT_EQ(p->victim(0), 3u);
}

TEST(Replacement, TheRegistryIsTheConfigurationsChoiceAndRefusesOthers) {
    ASSERT_NE(find_param("l2.replacement"), nullptr);
    EXPECT_EQ(replacement_policies(), find_param("l2.replacement")->choices);
    EXPECT_THROW(make_replacement("plru", 4, 4), std::invalid_argument);
    for (const std::string& name : replacement_policies()) {
        EXPECT_EQ(test::config_with({"l2.replacement=" + name}).choice("l2.replacement"), name);
    }
    EXPECT_THROW(test::config_with({"l2.replacement=plru"}), ConfigError);
}

TEST(Replacement, TheTagsTakeAnInvalidWayBeforeAskingThePolicy) {
    TagGeometry g{1, 4, 1, 1 << 20};
    TlmTags tags(g, "lru_prefetch_lru");
    for (unsigned i = 0; i < 4; ++i) {
        const TagResult r = tags.access(0, 100 + i, false, 0, Fill::Prefetch);
        EXPECT_EQ(r.way, i);  // every fill a prefetch at the LRU end, yet ways 0..3 fill in order
        EXPECT_FALSE(r.victim_valid);
    }
    const TagResult r = tags.access(0, 200, false, 0, Fill::Demand);
    EXPECT_TRUE(r.victim_valid);
    EXPECT_EQ(r.victim_line, 103u);  // the last prefetch was the least recent
}

TEST(Replacement, TheRtlTagsRefuseAPolicyOtherThanLru) {
    try {
        make_tag_store(test::config_with({"l2.tags=rtl", "l2.replacement=srrip"}));
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("l2.replacement = srrip: the RTL tag pipeline (l2.tags = rtl) implements LRU only"),
                  std::string::npos)
            << e.what();
    }
}

// The whole L2 under each policy: 64 KiB, 4 ways, 32 sets.
const std::vector<std::string> kSmallL2 = {"l2.size=64KiB", "l2.ways=4", "l2.slices=4"};
constexpr uint64_t kRing = 60ull << 30;

class L2Replacement : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        for (const std::string& name : replacement_policies()) {
            std::vector<std::string> sets = kSmallL2;
            sets.push_back("l2.replacement=" + name);
            harness_.push_back(&test::make_harness(test::config_with(sets)));
        }
        test::elaborate();
        for (test::Harness* h : harness_) {
            h->setup_ring(0, kRing, 2048);
            h->ring(0);
        }
        test::run_until_idle();
    }
    static test::Harness& harness(const std::string& name) {
        const std::vector<std::string> names = replacement_policies();
        return *harness_.at(std::find(names.begin(), names.end(), name) - names.begin());
    }
    static std::vector<test::Harness*> harness_;
};
std::vector<test::Harness*> L2Replacement::harness_;

void prefetch(test::Harness& h, uint64_t addr, uint32_t len) {
    h.push_request(0, SdmaRequest::cache_prefetch(addr, len));
    h.ring(0);
    test::run_until_idle();
}

// Four demand lines fill a set; two prefetched lines and one more demand line
// follow. LRU lets the prefetches push two of the four out (the demand line
// the third); the other two policies keep a prefetched line least valued, so
// the second prefetch and the demand line replace the prefetched lines, and
// only the first line (the victim of the first prefetch) is gone.
TEST_F(L2Replacement, APolicyDecidesWhatAPrefetchPushesOut) {
    for (const auto& [name, kept] : std::vector<std::pair<std::string, uint64_t>>{
             {"lru", 1}, {"lru_prefetch_lru", 3}, {"srrip", 3}}) {
        test::Harness& h = harness(name);
        const L2Cache& l2 = h.soc.l2;
        const uint64_t stride = l2.sets() * l2.line_bytes(), base = 4ull << 20;
        uint32_t v = 0;
        for (uint64_t i = 0; i < 4; ++i) h.read(base + i * stride, &v, 4, test::now());
        prefetch(h, base + 4 * stride, 4);
        prefetch(h, base + 5 * stride, 4);
        h.read(base + 6 * stride, &v, 4, test::now());
        uint64_t resident = 0;
        for (uint64_t i = 0; i < 4; ++i) resident += l2.resident(base + i * stride);
        EXPECT_EQ(resident, kept) << name;
        EXPECT_FALSE(l2.resident(base)) << name;
        EXPECT_TRUE(l2.resident(base + 6 * stride)) << name;
    }
}

// Random reads, writes and prefetches over 1 MiB, 16 times the cache: every
// value read is the last one written, whatever the policy evicts.
TEST_F(L2Replacement, EveryPolicyKeepsTheValuesUnderHeavyEviction) {
    for (const std::string& name : replacement_policies()) {
        test::Harness& h = harness(name);
        const uint64_t region = 1 << 20;
        std::vector<uint8_t> flat(region, 0), buf(4096), data(4096);
        for (uint64_t a = 0; a < region; a += 4096) h.write(a, flat.data(), 4096, test::now());
        std::mt19937_64 rng(7);
        const uint64_t writebacks = h.soc.l2.stats().writebacks;
        for (int op = 0; op < 4000; ++op) {
            const uint64_t len = 1 + rng() % 2048, addr = rng() % (region - len);
            const int kind = static_cast<int>(rng() % 10);
            if (kind < 4) {
                h.read(addr, buf.data(), len, test::now());
                ASSERT_EQ(0, std::memcmp(buf.data(), flat.data() + addr, len)) << name << " op " << op;
            } else if (kind < 8) {
                for (uint64_t i = 0; i < len; ++i) data[i] = static_cast<uint8_t>(rng());
                h.write(addr, data.data(), len, test::now());
                std::memcpy(flat.data() + addr, data.data(), len);
            } else {
                prefetch(h, addr, static_cast<uint32_t>(len));
            }
        }
        for (uint64_t a = 0; a < region; a += 4096) {
            h.read(a, buf.data(), 4096, test::now());
            ASSERT_EQ(0, std::memcmp(buf.data(), flat.data() + a, 4096)) << name << " at " << a;
        }
        EXPECT_GT(h.soc.l2.stats().writebacks - writebacks, 500u) << name;  // evictions really happened
    }
}

// The 16-lane operations the tags and LRU use for sets of up to 16 ways give
// what the one-lane-at-a-time reference gives, over random lanes and masks.
TEST(Lanes16, AgreeWithTheReferenceLoops) {
    std::mt19937 rng(16);
    for (int round = 0; round < 20000; ++round) {
        alignas(64) uint32_t tags[lanes16::kLanes];
        alignas(16) uint8_t places[lanes16::kLanes], mask[lanes16::kLanes];
        for (unsigned w = 0; w < lanes16::kLanes; ++w) {
            tags[w] = rng() % 4;  // small values, so lanes often match
            places[w] = static_cast<uint8_t>(rng() % 16);
            mask[w] = rng() % 4 ? 0xff : 0;
        }
        const uint32_t tag = rng() % 4;
        const auto place = static_cast<uint8_t>(rng() % 16);
        ASSERT_EQ(lanes16::equal(tags, tag), lanes16::portable::equal(tags, tag)) << round;
        ASSERT_EQ(lanes16::equal(places, place), lanes16::portable::equal(places, place)) << round;
        uint8_t a[lanes16::kLanes], b[lanes16::kLanes];
        std::copy(places, places + lanes16::kLanes, a);
        std::copy(places, places + lanes16::kLanes, b);
        lanes16::increment_below(a, place, mask);
        lanes16::portable::increment_below(b, place, mask);
        ASSERT_TRUE(std::equal(a, a + lanes16::kLanes, b)) << round;
        lanes16::decrement_above(a, place, mask);
        lanes16::portable::decrement_above(b, place, mask);
        ASSERT_TRUE(std::equal(a, a + lanes16::kLanes, b)) << round;
    }
}

}  // namespace
}  // namespace pfsim

