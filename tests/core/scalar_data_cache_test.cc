// The scalar data cache's tags (model/core/scalar_data_cache.h): what fits at
// its limits, LRU within a set, associativity conflicts, write-back of dirty
// lines, dcci of a line and of the whole cache, and a random stream against a
// textbook LRU cache.
#include <cstdint>
#include <list>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "model/core/scalar_data_cache.h"

namespace pfsim {
namespace {

constexpr uint64_t kBytes = 16 * 1024, kLine = 64, kWays = 4;
constexpr uint64_t kLines = kBytes / kLine, kSets = kLines / kWays;

// Reads `gm`; on a miss installs its line, as the core does. True on a hit.
bool read(ScalarDataCache& c, uint64_t gm) {
    if (c.read(gm)) return true;
    uint64_t victim = 0;
    c.install(gm, &victim);
    return false;
}

TEST(ScalarDataCache, ExactlyItsLinesFitAndOneMoreEvictsTheLeastRecent) {
    ScalarDataCache c(kBytes, kLine, kWays);
    for (uint64_t i = 0; i < kLines; ++i) EXPECT_FALSE(read(c, i * kLine + 8)) << i;
    EXPECT_EQ(c.lines_held(), kLines);
    for (uint64_t i = 0; i < kLines; ++i) EXPECT_TRUE(c.read(i * kLine)) << i;  // all 256 still there
    // One more line: it evicts its set's least recent, line 0 (touched first above).
    EXPECT_FALSE(read(c, kLines * kLine));
    EXPECT_EQ(c.lines_held(), kLines);
    EXPECT_FALSE(c.read(0));
    for (uint64_t i = 1; i < kLines; ++i) EXPECT_TRUE(c.read(i * kLine)) << i;
    EXPECT_TRUE(c.read(kLines * kLine + kLine - 1));  // the whole 64 B line is in
}

TEST(ScalarDataCache, ConflictingLinesShareTheirSetsWays) {
    ScalarDataCache c(kBytes, kLine, kWays);
    const uint64_t stride = kSets * kLine;  // the same set each time
    for (uint64_t i = 0; i < kWays; ++i) EXPECT_FALSE(read(c, i * stride));
    EXPECT_TRUE(c.read(0));  // line 0 is now the most recent; line 1 the least
    EXPECT_FALSE(read(c, kWays * stride));   // a fifth line in a 4-way set
    EXPECT_FALSE(c.read(1 * stride));        // evicted: the set's least recent
    EXPECT_TRUE(c.read(0));
    EXPECT_EQ(c.lines_held(), kWays);        // the other sets stay empty
    // Negative control: a direct-mapped cache of the same size keeps only the last.
    ScalarDataCache direct(kBytes, kLine, 1);
    EXPECT_FALSE(read(direct, 0));
    EXPECT_FALSE(read(direct, kLines * kLine));
    EXPECT_FALSE(direct.read(0));
}

TEST(ScalarDataCache, StoreHitsDirtyLinesThatAreWrittenBackWhenReplaced) {
    ScalarDataCache c(kBytes, kLine, 1);
    EXPECT_FALSE(c.write(0));  // a store miss allocates nothing
    EXPECT_FALSE(c.read(0));
    uint64_t victim = 7;
    EXPECT_FALSE(c.install(0, &victim));
    EXPECT_EQ(victim, 7u);
    EXPECT_TRUE(c.write(4));
    EXPECT_TRUE(c.install(kBytes + 4, &victim));  // the same set: the dirty line goes back
    EXPECT_EQ(victim, 0u);
    EXPECT_FALSE(c.install(2 * kBytes, &victim));  // a clean one does not
}

TEST(ScalarDataCache, DcciOfALineOrTheWholeCacheEmptiesIt) {
    ScalarDataCache c(kBytes, kLine, kWays);
    for (uint64_t i = 0; i < 8; ++i) read(c, i * kLine);
    c.write(3 * kLine);
    c.write(5 * kLine + 1);
    EXPECT_FALSE(c.invalidate(2 * kLine + 10));   // clean: nothing to write back
    EXPECT_FALSE(c.read(2 * kLine));              // the next read misses
    EXPECT_TRUE(c.read(1 * kLine));               // its neighbours stay
    EXPECT_TRUE(c.invalidate(3 * kLine));         // dirty
    EXPECT_FALSE(c.invalidate(3 * kLine));        // gone
    EXPECT_EQ(c.lines_held(), 6u);
    EXPECT_EQ(c.invalidate_all(), std::vector<uint64_t>{5 * kLine});
    EXPECT_EQ(c.lines_held(), 0u);
    for (uint64_t i = 0; i < 8; ++i) EXPECT_FALSE(c.read(i * kLine));
}

// A textbook LRU cache: per set, a list of lines, most recent first.
class TextbookLru {
public:
    TextbookLru(uint64_t sets, uint64_t ways) : ways_(ways), sets_(sets) {}
    bool read(uint64_t line) {
        auto& l = sets_[line % sets_.size()];
        for (auto it = l.begin(); it != l.end(); ++it) {
            if (*it == line) {
                l.erase(it);
                l.push_front(line);
                return true;
            }
        }
        l.push_front(line);
        if (l.size() > ways_) l.pop_back();
        return false;
    }

private:
    uint64_t ways_;
    std::vector<std::list<uint64_t>> sets_;
};

TEST(ScalarDataCache, HitsAndMissesAsATextbookLruCache) {
    for (uint64_t ways : {1, 2, 4, 8}) {
        ScalarDataCache c(kBytes, kLine, ways);
        TextbookLru ref(kLines / ways, ways);
        std::mt19937_64 rng(ways);
        uint64_t hits = 0;
        for (int i = 0; i < 200000; ++i) {
            const uint64_t gm = rng() % (3 * kBytes);  // a working set three times the cache
            const bool hit = read(c, gm);
            ASSERT_EQ(hit, ref.read(gm / kLine)) << "ways " << ways << " access " << i;
            hits += hit;
        }
        EXPECT_GT(hits, 40000u);  // about a third hit: the comparison saw both outcomes
        EXPECT_LT(hits, 100000u);
    }
}

TEST(ScalarDataCache, LinesAreFoundByTheirAddressBits) {
    ScalarDataCache c(kBytes, kLine, kWays);
    EXPECT_EQ(c.line_of(kLine * 5 + 63), kLine * 5);
    EXPECT_TRUE(c.within_line(kLine * 5, kLine));
    EXPECT_TRUE(c.within_line(kLine * 5 + 60, 4));
    EXPECT_FALSE(c.within_line(kLine * 5 + 60, 8));  // it crosses into line 6
    // Lines kSets apart share a set: kWays + 1 of them evict the first.
    for (uint64_t i = 0; i <= kWays; ++i) EXPECT_FALSE(read(c, i * kSets * kLine)) << i;
    EXPECT_FALSE(c.read(0));
    EXPECT_TRUE(c.read(kSets * kLine));
}

TEST(ScalarDataCache, SizesThatAreNoPowerOfTwoAreRefused) {
    EXPECT_THROW(ScalarDataCache(kBytes, 48, kWays), std::invalid_argument);
    EXPECT_THROW(ScalarDataCache(12 * 1024, kLine, kWays), std::invalid_argument);  // 48 sets
    EXPECT_THROW(ScalarDataCache(kBytes, kLine, 3), std::invalid_argument);
    EXPECT_NO_THROW(ScalarDataCache(kBytes, kLine, 8));
}

}  // namespace
}  // namespace pfsim
