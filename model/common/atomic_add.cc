#include "model/common/atomic_add.h"

#include <cmath>

namespace pfsim {
namespace {

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

float from_bf16(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

uint16_t to_bf16(float f) {
    const uint32_t u = bits_of(f);
    if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);  // stays a (quiet) NaN
    return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);  // nearest, ties to even
}

float from_f16(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const int exponent = (h >> 10) & 0x1f;
    const uint32_t mantissa = h & 0x3ff;
    if (exponent == 0x1f) return float_of(sign | 0x7f800000 | (mantissa << 13));  // inf, NaN
    if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24, exact in float
        const float m = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -m : m;
    }
    return float_of(sign | static_cast<uint32_t>(exponent - 15 + 127) << 23 | (mantissa << 13));
}

uint16_t to_f16(float f) {
    const uint32_t u = bits_of(f);
    const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
    const float a = std::fabs(f);
    if (std::isnan(f)) return static_cast<uint16_t>(sign | 0x7e00);
    if (a >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00);  // rounds to infinity
    if (a < 6.103515625e-05f) {  // below the smallest normal: multiples of 2^-24
        const float scaled = a * 16777216.0f;  // exact
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));  // ties to even
    }
    const uint32_t rounded = u + 0xfff + ((u >> 13) & 1);  // nearest, ties to even, at bit 13
    const uint32_t exponent = ((rounded >> 23) & 0xff) - 127 + 15;
    return static_cast<uint16_t>(sign | exponent << 10 | ((rounded >> 13) & 0x3ff));
}

template <typename T, typename Add>
void add_each(uint8_t* dst, const uint8_t* src, uint64_t bytes, Add add) {
    for (uint64_t i = 0; i + sizeof(T) <= bytes; i += sizeof(T)) {
        T a, b;
        std::memcpy(&a, dst + i, sizeof(T));
        std::memcpy(&b, src + i, sizeof(T));
        const T sum = add(a, b);
        std::memcpy(dst + i, &sum, sizeof(T));
    }
}

template <typename T>
T wrapping_add(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}

}  // namespace

uint64_t atomic_element_bytes(AtomicElement element) {
    switch (element) {
        case AtomicElement::F32:
        case AtomicElement::S32: return 4;
        case AtomicElement::F16:
        case AtomicElement::Bf16:
        case AtomicElement::S16: return 2;
        case AtomicElement::S8: return 1;
    }
    return 1;
}

void atomic_add(AtomicElement element, uint8_t* dst, const uint8_t* src, uint64_t bytes) {
    switch (element) {
        case AtomicElement::F32: add_each<float>(dst, src, bytes, [](float a, float b) { return a + b; }); break;
        case AtomicElement::F16:
            add_each<uint16_t>(dst, src, bytes, [](uint16_t a, uint16_t b) { return to_f16(from_f16(a) + from_f16(b)); });
            break;
        case AtomicElement::Bf16:
            add_each<uint16_t>(dst, src, bytes,
                               [](uint16_t a, uint16_t b) { return to_bf16(from_bf16(a) + from_bf16(b)); });
            break;
        case AtomicElement::S32: add_each<int32_t>(dst, src, bytes, wrapping_add<int32_t>); break;
        case AtomicElement::S16: add_each<int16_t>(dst, src, bytes, wrapping_add<int16_t>); break;
        case AtomicElement::S8: add_each<int8_t>(dst, src, bytes, wrapping_add<int8_t>); break;
    }
}

}  // namespace pfsim
