// Element types of tiles and how instructions compute on them (part of
// <pto/pto-inst.hpp>). half and bfloat16_t are stored as their IEEE bits;
// arithmetic on them is done in float and rounded once to the destination,
// which for +, -, *, /, sqrt gives the correctly rounded result (float has
// more than twice their precision plus two bits). Integers compute in int64
// and wrap to the destination, as torch does.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#ifndef PFSIM_TILE_COMPUTE
#define PFSIM_TILE_COMPUTE __attribute__((no_sanitize_thread))
#endif

// pfsim compiles kernels with -mf16c on hosts that have F16C: the conversions
// below then use it, giving the same bits (tests/static:elements_f16c_test).
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace pto {

enum class RoundMode : uint8_t {
    CAST_NONE = 0,   // the pair's default: to nearest even for narrowing floats, toward zero for float -> int
    CAST_RINT = 1,   // to nearest, ties to even
    CAST_ROUND = 2,  // to nearest, ties away from zero
    CAST_FLOOR = 3,
    CAST_CEIL = 4,
    CAST_TRUNC = 5,
    CAST_ODD = 6,    // to odd (von Neumann)
};

enum class SaturationMode : uint8_t { ON = 0, OFF = 1 };

namespace detail {

// Rounds the float `f` to a format with `mant` stored mantissa bits, `exp`
// exponent bits (bias 2^(exp-1) - 1), subnormals and infinities, in `mode`;
// returns its bits (sign at bit mant + exp).
PFSIM_TILE_COMPUTE inline uint32_t round_float(float f, int mant, int exp, RoundMode mode) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = x >> 31;
    const uint32_t out_sign = sign << (mant + exp);
    const uint32_t inf = ((1u << exp) - 1) << mant;
    const uint32_t max_finite = inf - 1;
    if (((x >> 23) & 0xFF) == 0xFF) {  // inf, nan (quiet, payload's top bit kept)
        return out_sign | inf | ((x & 0x7FFFFF) ? (1u << (mant - 1)) : 0);
    }
    const int bias = (1 << (exp - 1)) - 1;
    int e = static_cast<int>((x >> 23) & 0xFF);
    uint32_t m = x & 0x7FFFFF;
    if (e == 0 && m == 0) return out_sign;
    if (e == 0) {  // a float subnormal: normalise
        while (!(m & 0x800000)) {
            m <<= 1;
            --e;
        }
        ++e;
    } else {
        m |= 0x800000;  // the implicit bit
    }
    // value = m * 2^(e - 127 - 23); the target keeps mant + 1 bits for normals.
    int target_e = e - 127 + bias;  // biased exponent in the target
    int shift = 23 - mant;          // bits dropped for a normal
    if (target_e <= 0) shift += 1 - target_e;  // a subnormal keeps fewer bits
    uint64_t kept, rem, half_ulp;
    if (shift >= 40) {  // far below the smallest subnormal: nothing kept, a nonzero remainder
        kept = 0;
        rem = 1;
        half_ulp = uint64_t{1} << 39;
    } else {
        kept = uint64_t{m} >> shift;  // shift may reach 39: in 64 bits
        rem = m & ((uint64_t{1} << shift) - 1);
        half_ulp = shift ? uint64_t{1} << (shift - 1) : 0;
    }
    bool up = false;
    switch (mode) {
        case RoundMode::CAST_NONE:
        case RoundMode::CAST_RINT: up = shift && (rem > half_ulp || (rem == half_ulp && (kept & 1))); break;
        case RoundMode::CAST_ROUND: up = shift && rem >= half_ulp && rem; break;
        case RoundMode::CAST_FLOOR: up = sign && rem; break;
        case RoundMode::CAST_CEIL: up = !sign && rem; break;
        case RoundMode::CAST_TRUNC: up = false; break;
        case RoundMode::CAST_ODD:
            if (rem) kept |= 1;
            break;
    }
    kept += up ? 1 : 0;
    uint32_t bits;
    if (target_e <= 0) {
        bits = static_cast<uint32_t>(kept);  // a subnormal; a carry into 1 << mant makes it the smallest normal
    } else {
        if (kept >> (mant + 1)) {  // the carry overflowed the mantissa
            kept >>= 1;
            ++target_e;
        }
        bits = target_e >= (1 << exp) - 1 ? inf : (static_cast<uint32_t>(target_e) << mant) | (kept & ((1u << mant) - 1));
    }
    if (bits >= inf) {  // overflow: infinity, or the largest finite toward zero
        const bool to_inf = mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_RINT ||
                            mode == RoundMode::CAST_ROUND || (mode == RoundMode::CAST_CEIL && !sign) ||
                            (mode == RoundMode::CAST_FLOOR && sign);
        bits = to_inf ? inf : max_finite;
    }
    return out_sign | bits;
}

// 2^k for -126 <= k <= 127, built from its bits: exact, and much cheaper than ldexp.
PFSIM_TILE_COMPUTE inline float pow2f(int k) {
    const uint32_t b = static_cast<uint32_t>(k + 127) << 23;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
}

// m * 2^k, exactly as std::ldexp rounds it: a product with a normal power of two
// is exact wherever the result is (every value of a narrower format is).
PFSIM_TILE_COMPUTE inline float scale2(float m, int k) {
    return k >= -126 && k <= 127 ? m * pow2f(k) : std::ldexp(m, k);
}

PFSIM_TILE_COMPUTE inline float float_of_bits(uint32_t bits, int mant, int exp) {
    const uint32_t sign = (bits >> (mant + exp)) & 1;
    const uint32_t e = (bits >> mant) & ((1u << exp) - 1);
    const uint32_t m = bits & ((1u << mant) - 1);
    const int bias = (1 << (exp - 1)) - 1;
    float v;
    if (e == (1u << exp) - 1) {
        v = m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    } else if (e == 0) {
        v = scale2(static_cast<float>(m), 1 - bias - mant);
    } else {
        v = scale2(static_cast<float>(m | (1u << mant)), static_cast<int>(e) - bias - mant);
    }
    return sign ? -v : v;
}

// binary16's conversions on their common path, normal halves, with the bits
// computed directly; zeros, subnormals, infinities and NaNs take the generic
// routines above. Both give exactly the generic routines' bits.
PFSIM_TILE_COMPUTE inline float half_to_float(uint16_t h) {
    const uint32_t e = (h >> 10) & 0x1Fu;
#if defined(__F16C__)
    if (e != 0x1Fu) return _cvtsh_ss(h);  // exact for every finite half; NaNs keep the generic quiet NaN
#endif
    if (e == 0 || e == 0x1Fu) return float_of_bits(h, 10, 5);
    const uint32_t x = (uint32_t{h} & 0x8000u) << 16 | (e + 127 - 15) << 23 | (uint32_t{h} & 0x3FFu) << 13;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

// To nearest, ties to even.
PFSIM_TILE_COMPUTE inline uint16_t half_bits_of(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = x & 0x80000000u, a = x ^ sign;
#if defined(__F16C__)
    // IEEE's rounding to nearest even for every non-NaN (NaNs: the generic quiet NaN, without payload).
    if (a <= 0x7F800000u) return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#endif
    if (a < 0x38800000u || a >= 0x47800000u) {  // below 2^-14, or from 2^16 up (and inf, NaN)
        return static_cast<uint16_t>(round_float(f, 10, 5, RoundMode::CAST_RINT));
    }
    // Rebias the exponent, add just under half an ulp plus the lowest kept bit:
    // a carry rounds up (from 65520 on, into the infinity's bits).
    const uint32_t r = a - ((127u - 15u) << 23) + 0xFFFu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign >> 16 | r >> 13);
}

// bfloat16 to nearest (ties to even, or away from zero when `away`): bf16 is
// float's top half, so a finite float rounds by adding just under half an
// ulp (with the lowest kept bit for ties to even) to its bits; a carry out of
// the mantissa moves into the exponent, from the largest finite on into the
// infinity, and subnormals round alike. NaNs give the generic quiet NaN.
// Exactly round_float(f, 7, 8, CAST_RINT or CAST_ROUND)'s bits; no branch.
PFSIM_TILE_COMPUTE inline uint16_t bf16_bits_nearest(float f, bool away) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t rounded = (x + (away ? 0x8000u : 0x7FFFu + ((x >> 16) & 1u))) >> 16;
    const uint32_t nan = (x >> 16 & 0x8000u) | 0x7FC0u;
    return static_cast<uint16_t>((x & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

}  // namespace detail

// IEEE binary16.
struct half {
    uint16_t bits = 0;
    half() = default;
    PFSIM_TILE_COMPUTE half(float f)  // NOLINT: implicit like the device type
        : bits(detail::half_bits_of(f)) {}
    PFSIM_TILE_COMPUTE operator float() const { return detail::half_to_float(bits); }  // NOLINT
    static PFSIM_TILE_COMPUTE half from(float f, RoundMode mode) {
        half h;
        const bool to_even = mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE;
        h.bits = to_even ? detail::half_bits_of(f) : static_cast<uint16_t>(detail::round_float(f, 10, 5, mode));
        return h;
    }
};

// bfloat16: the top half of a binary32.
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    PFSIM_TILE_COMPUTE bfloat16_t(float f)  // NOLINT: implicit like the device type
        : bits(detail::bf16_bits_nearest(f, false)) {}
    PFSIM_TILE_COMPUTE operator float() const {  // NOLINT
        const uint32_t x = uint32_t{bits} << 16;
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
    static PFSIM_TILE_COMPUTE bfloat16_t from(float f, RoundMode mode) {
        bfloat16_t h;
        const bool nearest = mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_ROUND;
        h.bits = nearest ? detail::bf16_bits_nearest(f, mode == RoundMode::CAST_ROUND)
                         : static_cast<uint16_t>(detail::round_float(f, 7, 8, mode));
        return h;
    }
};

namespace detail {

template <typename T>
constexpr bool is_float_v = std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;
template <typename T>
constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// The type an instruction computes in: float for float types, int64 for integers.
template <typename T>
using compute_t = std::conditional_t<is_float_v<T>, float, int64_t>;

template <typename T>
PFSIM_TILE_COMPUTE inline compute_t<T> widen(T v) {
    if constexpr (is_float_v<T>) {
        return static_cast<float>(v);
    } else {
        return static_cast<int64_t>(v);
    }
}

// A computed value into the destination type: floats rounded to nearest even,
// integers wrapped.
template <typename T, typename C>
PFSIM_TILE_COMPUTE inline T narrow(C v) {
    if constexpr (is_float_v<T>) {
        return T(static_cast<float>(v));
    } else {
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(v)));
    }
}

// float -> integer in `mode`; saturating (NaN -> 0) unless `wrap`, which
// converts through int32 and keeps the low bits (PyTorch's narrowing).
template <typename T>
PFSIM_TILE_COMPUTE inline T float_to_int(float f, RoundMode mode, bool wrap) {
    double r;
    switch (mode) {
        case RoundMode::CAST_RINT: r = std::nearbyint(static_cast<double>(f)); break;  // default rounding: to even
        case RoundMode::CAST_ROUND: r = std::round(static_cast<double>(f)); break;
        case RoundMode::CAST_FLOOR: r = std::floor(static_cast<double>(f)); break;
        case RoundMode::CAST_CEIL: r = std::ceil(static_cast<double>(f)); break;
        default: r = std::trunc(static_cast<double>(f)); break;  // CAST_NONE, CAST_TRUNC, CAST_ODD
    }
    if (std::isnan(r)) return 0;
    if (wrap) {
        const double lo = -2147483648.0, hi = 2147483647.0;
        const int32_t i = r < lo ? INT32_MIN : r > hi ? INT32_MAX : static_cast<int32_t>(r);
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint32_t>(i)));
    }
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (r <= lo) return std::numeric_limits<T>::min();
    if (r >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
}

}  // namespace detail
}  // namespace pto
