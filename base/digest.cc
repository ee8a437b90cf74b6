#include "base/digest.h"

#include <cstring>

#include "base/hex.h"

namespace pfsim {

namespace {

constexpr uint64_t kMul1 = 0x9e3779b97f4a7c15;  // odd: each multiply is one-to-one
constexpr uint64_t kMul2 = 0xc2b2ae3d27d4eb4f;
constexpr uint64_t kMul3 = 0x165667b19e3779f9;

uint64_t rotl(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

// One word into a lane: one-to-one in the lane for a given word and in the
// word for a given lane, so one changed word always changes its lane.
uint64_t mix(uint64_t lane, uint64_t word) { return rotl(lane + word * kMul2, 31) * kMul1; }

// Every bit of a lane moves every bit of the result (a one-to-one map).
uint64_t finish(uint64_t x) {
    x ^= x >> 33;
    x *= kMul2;
    x ^= x >> 29;
    x *= kMul3;
    x ^= x >> 32;
    return x;
}

}  // namespace

std::string digest_hex(const uint8_t* data, uint64_t bytes) {
    // Four lanes take the words in turn (four independent chains keep the
    // host's multipliers busy); each lane ends as a quarter of the digest.
    uint64_t lane[4] = {kMul1, kMul2, kMul3, kMul1 ^ kMul2};
    uint64_t i = 0;
    for (; i + 32 <= bytes; i += 32) {
        uint64_t w[4];
        std::memcpy(w, data + i, 32);
        for (int j = 0; j < 4; ++j) lane[j] = mix(lane[j], w[j]);
    }
    uint64_t tail[4] = {0, 0, 0, 0};  // the last bytes, padded with zeros (the length tells them apart)
    if (bytes > i) std::memcpy(tail, data + i, bytes - i);
    std::string out(64, '0');
    for (int j = 0; j < 4; ++j) put_hex_digits(finish(mix(mix(lane[j], tail[j]), bytes + j)), 16, &out[16 * j]);
    return out;
}

}  // namespace pfsim
