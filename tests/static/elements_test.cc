// The onboard header's 16-bit float conversions against their definitions,
// for every bit pattern: value = (-1)^s x m x 2^(e - bias - mant), by ldexp.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <gtest/gtest.h>

#include "pto/pfsim_elements.hpp"

namespace {

// Built with -mf16c (elements_f16c_test), the conversions run F16C's instructions.
#if defined(__F16C__)
#define SKIP_WITHOUT_F16C() \
    if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "this host has no F16C"
#else
#define SKIP_WITHOUT_F16C()
#endif

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
    SKIP_WITHOUT_F16C();
    for (uint32_t b = 0; b < 65536; ++b) {
        pto::half h;
        h.bits = static_cast<uint16_t>(b);
        const float f = h;
        ASSERT_TRUE(same_bits(f, by_definition(b, 10, 5))) << std::hex << b;
        const float generic = pto::detail::float_of_bits(b, 10, 5);  // NaNs too: the same quiet NaN
        ASSERT_EQ(std::memcmp(&f, &generic, 4), 0) << std::hex << b;
        if (!std::isnan(f)) {
            ASSERT_EQ(pto::half(f).bits, b) << std::hex << b;  // and narrows back to itself
        }
    }
}

// check(x, f) for each float f of bits x = high << low_bits | low: every high part, each low
// part of `lows` (a rounding's boundaries); stops at the first failure.
template <size_t N, typename F>
void for_rounding_boundaries(int low_bits, const uint32_t (&lows)[N], F check) {
    for (uint32_t high = 0; high < (1u << (32 - low_bits)); ++high) {
        for (uint32_t low : lows) {
            const uint32_t x = high << low_bits | low;
            float f;
            std::memcpy(&f, &x, 4);
            check(x, f);
            if (::testing::Test::HasFailure()) return;
        }
    }
}

// half(float) and half::from to nearest even take a shortcut for normal results; the generic rounding is the
// reference. Rounding reads the 13 dropped bits and the lowest kept one: every
// sign, exponent and high mantissa bits, with the low 14 bits at each boundary.
TEST(Elements, NarrowingToHalfMatchesTheGenericRounding) {
    SKIP_WITHOUT_F16C();
    const uint32_t lows[] = {0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001, 0x2FFF, 0x3000, 0x3001, 0x3FFF};
    for_rounding_boundaries(14, lows, [](uint32_t x, float f) {
        const uint32_t want = pto::detail::round_float(f, 10, 5, pto::RoundMode::CAST_RINT);
        ASSERT_EQ(pto::half(f).bits, want) << std::hex << x;
        ASSERT_EQ(pto::half::from(f, pto::RoundMode::CAST_RINT).bits, want) << std::hex << x;
        ASSERT_EQ(pto::half::from(f, pto::RoundMode::CAST_NONE).bits, want) << std::hex << x;
    });
}

// bfloat16_t(float) and bfloat16_t::from to nearest take a shortcut on the float's bits; the
// generic rounding is the reference. Rounding reads the 16 dropped bits and the lowest kept one:
// every sign, exponent and mantissa bit kept, with the low 16 bits at each boundary (all 2^32
// floats agree too, checked once outside the suite).
TEST(Elements, NarrowingToBf16MatchesTheGenericRounding) {
    const uint32_t lows[] = {0, 1, 0x3FFF, 0x7FFF, 0x8000, 0x8001, 0xBFFF, 0xFFFF};
    for_rounding_boundaries(16, lows, [](uint32_t x, float f) {
        const uint32_t even = pto::detail::round_float(f, 7, 8, pto::RoundMode::CAST_RINT);
        const uint32_t away = pto::detail::round_float(f, 7, 8, pto::RoundMode::CAST_ROUND);
        ASSERT_EQ(pto::bfloat16_t(f).bits, even) << std::hex << x;
        ASSERT_EQ(pto::bfloat16_t::from(f, pto::RoundMode::CAST_RINT).bits, even) << std::hex << x;
        ASSERT_EQ(pto::bfloat16_t::from(f, pto::RoundMode::CAST_NONE).bits, even) << std::hex << x;
        ASSERT_EQ(pto::bfloat16_t::from(f, pto::RoundMode::CAST_ROUND).bits, away) << std::hex << x;
    });
}

// Floats between 2^-40 and 2^-33 drop 32 to 39 bits on the way to a half or
// a bf16 subnormal: they round to zero, or to the smallest subnormal away from
// it (ubsan found the shift done in 32 bits: 1e-11 became infinity).
TEST(Elements, FarBelowTheSmallestSubnormalRoundsToZeroOrTheSmallest) {
    SKIP_WITHOUT_F16C();
    for (float f : {1e-11f, 3e-12f, 1e-10f, 0x1.8p-40f}) {
        EXPECT_EQ(pto::half(f).bits, 0u) << f;
        EXPECT_EQ(pto::half(-f).bits, 0x8000u) << f;
        EXPECT_EQ(pto::half::from(f, pto::RoundMode::CAST_CEIL).bits, 1u) << f;
        EXPECT_EQ(pto::half::from(-f, pto::RoundMode::CAST_FLOOR).bits, 0x8001u) << f;
        EXPECT_EQ(pto::half::from(f, pto::RoundMode::CAST_TRUNC).bits, 0u) << f;
    }
    const float tiny = 0x1.8p-145f;  // a float subnormal 12 binades below bf16's smallest (2^-133): 35 bits dropped
    EXPECT_EQ(pto::bfloat16_t(tiny).bits, 0u);
    EXPECT_EQ(pto::bfloat16_t::from(tiny, pto::RoundMode::CAST_CEIL).bits, 1u);
}

TEST(Elements, EveryNarrowFormatWidensToItsValue) {
    SKIP_WITHOUT_F16C();
    // bf16's layout, and the fp8 ones, through the generic path (bf16 itself widens by a shift).
    for (auto [mant, exp] : {std::pair{7, 8}, std::pair{3, 4}, std::pair{2, 5}}) {
        for (uint32_t b = 0; b < (1u << (mant + exp + 1)); ++b) {
            ASSERT_TRUE(same_bits(pto::detail::float_of_bits(b, mant, exp), by_definition(b, mant, exp)))
                << mant << "/" << exp << " " << std::hex << b;
        }
    }
}

}  // namespace
