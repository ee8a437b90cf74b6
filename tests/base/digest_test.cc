// The fast digest (base/digest.h): one changed bit anywhere, a changed length
// (zeros appended), or two words swapped each change it; the same bytes give
// the same digest wherever they lie in memory; and its value is pinned (a run's
// summary carries it: the same bytes must give the same text on every build).
#include "base/digest.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace pfsim {
namespace {

std::vector<uint8_t> random_bytes(size_t n) {
    std::mt19937_64 random(11);
    std::vector<uint8_t> data(n);
    for (uint8_t& b : data) b = static_cast<uint8_t>(random());
    return data;
}

TEST(Digest, PinnedValues) {
    EXPECT_EQ(digest_hex(nullptr, 0), "e83b6b551222fd4ed004726db1950d43491ca5c8e44518e6a3d5ff908dbacdda");
    const std::string abc = "abc";
    EXPECT_EQ(digest_hex(reinterpret_cast<const uint8_t*>(abc.data()), abc.size()),
              "89ce6e57870e47c401c8fbcb54744f25f7af4ba6a6ebf42b53389c6153022fa7");
}

TEST(Digest, EveryBitFlipChangesIt) {
    std::vector<uint8_t> data = random_bytes(1000);
    std::set<std::string> seen;
    for (uint64_t n : {0, 1, 7, 8, 31, 32, 33, 64, 100, 999}) {
        seen.insert(digest_hex(data.data(), n));
    }
    EXPECT_EQ(seen.size(), 10u) << "each length its own digest";
    const std::string before = digest_hex(data.data(), data.size());
    for (size_t byte = 0; byte < data.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
            data[byte] ^= static_cast<uint8_t>(1 << bit);
            ASSERT_NE(digest_hex(data.data(), data.size()), before) << "byte " << byte << " bit " << bit;
            data[byte] ^= static_cast<uint8_t>(1 << bit);
        }
    }
    EXPECT_EQ(digest_hex(data.data(), data.size()), before);
}

TEST(Digest, ZerosOfEachLengthDiffer) {
    const std::vector<uint8_t> zeros(200, 0);
    std::set<std::string> seen;
    for (uint64_t n = 0; n <= zeros.size(); ++n) seen.insert(digest_hex(zeros.data(), n));
    EXPECT_EQ(seen.size(), zeros.size() + 1);
}

TEST(Digest, SwappedWordsChangeIt) {
    std::vector<uint8_t> data = random_bytes(4096);
    const std::string before = digest_hex(data.data(), data.size());
    // Words 8 bytes apart go to different lanes, 32 apart to the same lane.
    for (size_t other : {8, 32, 64, 2048}) {
        std::vector<uint8_t> swapped = data;
        std::swap_ranges(swapped.begin() + 16, swapped.begin() + 24, swapped.begin() + 16 + other);
        EXPECT_NE(digest_hex(swapped.data(), swapped.size()), before) << other;
    }
}

TEST(Digest, SameBytesAnywhereInMemory) {
    const std::vector<uint8_t> data = random_bytes(300);
    std::vector<uint8_t> shifted(data.size() + 5);
    std::copy(data.begin(), data.end(), shifted.begin() + 5);
    for (uint64_t n : {0, 13, 32, 299, 300}) {
        EXPECT_EQ(digest_hex(data.data(), n), digest_hex(shifted.data() + 5, n)) << n;
    }
}

}  // namespace
}  // namespace pfsim
