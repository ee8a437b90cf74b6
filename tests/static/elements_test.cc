// The onboard header's 16-bit float conversions against their definitions,
// for every bit pattern: value = (-1)^s x m x 2^(e - bias - mant), by ldexp.
#include <cmath>
#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "pto/pfsim_elements.hpp"

namespace {

float by_definition(uint32_t bits, int mant, int exp) {
    const uint32_t sign = (bits >> (mant + exp)) & 1, e = (bits >> mant) & ((1u << exp) - 1);
    const uint32_t m = bits & ((1u << mant) - 1);
    const int bias = (1 << (exp - 1)) - 1;
    float v;
    if (e == (1u << exp) - 1) {
        v = m ? NAN : INFINITY;
    } else if (e == 0) {
        v = std::ldexp(static_cast<float>(m), 1 - bias - mant);
    } else {
        v = std::ldexp(static_cast<float>(m | (1u << mant)), static_cast<int>(e) - bias - mant);
    }
    return sign ? -v : v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b)); }

TEST(Elements, EveryHalfWidensToItsValue) {
    for (uint32_t b = 0; b < 65536; ++b) {
        pto::half h;
        h.bits = static_cast<uint16_t>(b);
        const float f = h;
        ASSERT_TRUE(same_bits(f, by_definition(b, 10, 5))) << std::hex << b;
        if (!std::isnan(f)) {
            ASSERT_EQ(pto::half(f).bits, b) << std::hex << b;  // and narrows back to itself
        }
    }
}

TEST(Elements, EveryNarrowFormatWidensToItsValue) {
    // bf16's layout, and the fp8 ones, through the generic path (bf16 itself widens by a shift).
    for (auto [mant, exp] : {std::pair{7, 8}, std::pair{3, 4}, std::pair{2, 5}}) {
        for (uint32_t b = 0; b < (1u << (mant + exp + 1)); ++b) {
            ASSERT_TRUE(same_bits(pto::detail::float_of_bits(b, mant, exp), by_definition(b, mant, exp)))
                << mant << "/" << exp << " " << std::hex << b;
        }
    }
}

}  // namespace
