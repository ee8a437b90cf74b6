// Differential tests: the RTL L2 tag pipeline (rtl_stubs/l2_tags) against the
// C++ tags (TlmTags), operation by operation, and the whole L2 with each.
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/l2/rtl_tags.h"
#include "model/l2/tag_store.h"
#include "tests/support/harness.h"
#include "Vl2_tags.h"
#include "Vl2_tags_broken_lru.h"

namespace pfsim {
namespace {

constexpr Tick kPeriod = 541;  // about 1850 MHz

TagGeometry preset_geometry() { return tag_geometry(Config::from_preset()); }

struct Op {
    bool access;
    uint64_t set;
    uint64_t line;
    bool write;
};

// Random operations on a few sets, each with more lines than ways: hits, misses,
// evictions of clean and dirty lines, and lookups of absent lines.
std::vector<Op> random_ops(const TagGeometry& g, size_t n, uint32_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> sets;
    for (int i = 0; i < 24; ++i) sets.push_back(rng() % g.sets);
    sets.push_back(0);
    sets.push_back(g.sets - 1);
    std::vector<Op> ops;
    for (size_t i = 0; i < n; ++i) {
        Op op;
        op.set = sets[rng() % sets.size()];
        const uint64_t alias = rng() % (g.ways + g.ways / 2 + 2);  // lines that share the set
        op.line = (alias * g.sets + op.set) % g.lines;
        op.access = rng() % 4 != 0;
        op.write = op.access && rng() % 3 == 0;
        ops.push_back(op);
    }
    return ops;
}

std::string describe(const TagResult& r) {
    std::ostringstream s;
    s << (r.hit ? "hit" : "miss") << " way " << r.way << (r.dirty ? " dirty" : " clean");
    if (r.victim_valid) s << ", victim line " << r.victim_line << (r.victim_dirty ? " dirty" : " clean");
    return s.str();
}

// Runs `ops` on both; returns how many results differ and describes the first.
size_t differences(TagStore& rtl, TagStore& ref, const std::vector<Op>& ops, std::string* first) {
    size_t diffs = 0;
    Tick t = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
        const Op& op = ops[i];
        t += 3 * kPeriod;
        const TagResult a = op.access ? rtl.access(op.set, op.line, op.write, t, Fill::Demand) : rtl.lookup(op.set, op.line, t);
        const TagResult b = op.access ? ref.access(op.set, op.line, op.write, t, Fill::Demand) : ref.lookup(op.set, op.line, t);
        if (!(a == b) && diffs++ == 0) {
            *first = "operation " + std::to_string(i) + " (" + (op.access ? "access" : "lookup") + " set " +
                     std::to_string(op.set) + " line " + std::to_string(op.line) + "): RTL " + describe(a) +
                     ", TLM " + describe(b);
        }
    }
    return diffs;
}

TEST(L2TagsRtl, MatchesTheTlmTagsOverTwentyThousandRandomOperations) {
    const TagGeometry g = preset_geometry();
    RtlTags<Vl2_tags, VerilatedVcdC> rtl(g, kPeriod);
    TlmTags ref(g);
    const std::vector<Op> ops = random_ops(g, 20000, 1);
    std::string first;
    EXPECT_EQ(differences(rtl, ref, ops, &first), 0u) << first;
    // The stimuli reach every kind of answer.
    TlmTags probe(g);
    size_t hits = 0, dirty_victims = 0, clean_victims = 0;
    for (const Op& op : ops) {
        if (!op.access) continue;
        const TagResult r = probe.access(op.set, op.line, op.write, 0, Fill::Demand);
        hits += r.hit;
        dirty_victims += r.victim_valid && r.victim_dirty;
        clean_victims += r.victim_valid && !r.victim_dirty;
    }
    EXPECT_GT(hits, 2000u);
    EXPECT_GT(dirty_victims, 500u);
    EXPECT_GT(clean_victims, 500u);
}

TEST(L2TagsRtl, NegativeControlAnLruThatNeverUpdatesWayZeroIsCaught) {
    const TagGeometry g = preset_geometry();
    RtlTags<Vl2_tags_broken_lru, VerilatedVcdC> broken(g, kPeriod);
    TlmTags ref(g);
    std::string first;
    const size_t diffs = differences(broken, ref, random_ops(g, 20000, 1), &first);
    EXPECT_GT(diffs, 0u);
    std::cout << "broken LRU: " << diffs << " of 20000 operations differ; first: " << first << "\n";
}

// Cycle by cycle: one request per cycle, back to back (often to the same set),
// each answered exactly two edges after it was presented, as TlmTags answers the
// same operations in order.
TEST(L2TagsRtl, AnswersBackToBackRequestsTwoCyclesLaterInOrder) {
    const TagGeometry g = preset_geometry();
    ClockedModel<Vl2_tags, VerilatedVcdC> rtl("l2_tags", kPeriod, "");
    rtl.reset(2);
    uint64_t clearing = 0;
    while (!rtl.pins().req_ready) {
        rtl.cycle();
        ++clearing;
    }
    EXPECT_EQ(clearing, g.sets / g.slices);  // one set per cycle
    TlmTags ref(g);
    const std::vector<Op> ops = random_ops(g, 12000, 7);
    std::vector<TagResult> expected;
    size_t checked = 0;
    auto& p = rtl.pins();
    for (size_t cycle = 0; cycle < ops.size() + 2; ++cycle) {
        if (cycle < ops.size()) {
            const Op& op = ops[cycle];
            present_tag_request(p, g.slices, op.access, op.set, op.line, op.write);
            expected.push_back(op.access ? ref.access(op.set, op.line, op.write, 0, Fill::Demand) : ref.lookup(op.set, op.line, 0));
        } else {
            p.req_valid = 0;
        }
        rtl.cycle();
        // After this edge, the request presented on the previous cycle is answered.
        ASSERT_EQ(static_cast<bool>(p.resp_valid), cycle >= 1 && cycle - 1 < ops.size()) << "cycle " << cycle;
        if (!p.resp_valid) continue;
        const TagResult got = tag_response(p);
        ASSERT_EQ(got, expected[cycle - 1]) << "request " << cycle - 1 << ": RTL " << describe(got) << ", TLM "
                                            << describe(expected[cycle - 1]);
        ++checked;
    }
    EXPECT_EQ(checked, ops.size());
}

TEST(L2TagsRtl, RefusesAConfigurationOfAnotherGeometry) {
    try {
        make_tag_store(test::config_with({"l2.tags=rtl", "l2.ways=16", "l2.size=128 MiB"}));
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("l2.tags = rtl"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("16 ways"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace pfsim
