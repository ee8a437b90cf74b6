#include <cmath>
#include <cstring>

#include "kernels/pto/pto.h"

namespace pto {

// Round-to-nearest-even conversions between IEEE binary32 and binary16.
half::half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    const int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = x & 0x7FFFFF;
    if (((x >> 23) & 0xFF) == 0xFF) {  // inf / nan
        bits = static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
    } else if (exp >= 31) {
        bits = static_cast<uint16_t>(sign | 0x7C00);
    } else if (exp <= 0) {
        if (exp < -10) {
            bits = static_cast<uint16_t>(sign);
        } else {
            mant |= 0x800000;
            const int shift = 14 - exp;
            uint32_t h = mant >> shift;
            const uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
            if (rem > halfway || (rem == halfway && (h & 1))) ++h;
            bits = static_cast<uint16_t>(sign | h);
        }
    } else {
        uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
        const uint32_t rem = mant & 0x1FFF;
        if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
        bits = static_cast<uint16_t>(sign | h);
    }
}

half::operator float() const {
    const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
    const uint32_t exp = (bits >> 10) & 0x1F;
    const uint32_t mant = bits & 0x3FF;
    uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else {
            float f = std::ldexp(static_cast<float>(mant), -24);
            std::memcpy(&x, &f, 4);
            x |= sign;
        }
    } else if (exp == 31) {
        x = sign | 0x7F800000 | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

}  // namespace pto
