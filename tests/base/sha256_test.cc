// SHA-256: the known digests (FIPS 180-4's examples), and the host-instruction
// path (SHA-NI, where the host has it) equal to the portable code for every
// length of tail and across many blocks.
#include "base/sha256.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace pfsim {
namespace {

std::string of(const std::string& text) {
    return sha256_hex(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

TEST(Sha256, KnownDigests) {
    EXPECT_EQ(of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(of(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, HostInstructionsAgreeWithPortableCode) {
    std::mt19937_64 random(7);
    std::vector<uint8_t> data(3 * 1024 * 1024 + 77);
    for (uint8_t& b : data) b = static_cast<uint8_t>(random());
    for (uint64_t n = 0; n <= 300; ++n) {
        EXPECT_EQ(sha256_hex(data.data() + 3, n), sha256_hex_portable(data.data() + 3, n)) << n << " bytes";
    }
    EXPECT_EQ(sha256_hex(data.data(), data.size()), sha256_hex_portable(data.data(), data.size()));
    // Negative control: one bit changed changes the digest of both.
    const std::string before = sha256_hex(data.data(), data.size());
    data[data.size() / 2] ^= 1;
    EXPECT_NE(sha256_hex(data.data(), data.size()), before);
    EXPECT_NE(sha256_hex_portable(data.data(), data.size()), before);
}

}  // namespace
}  // namespace pfsim
