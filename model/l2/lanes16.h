// Operations on the 16 lanes of one set's tags (16 x 32 bits, one 64-byte host
// cache line) or replacement places (16 x 8 bits), for sets of at most 16 ways
// padded to 16: each answers for all lanes at once, without a loop that stops
// at the first match. Lanes past a set's ways are padding: comparisons answer
// for them too (the caller masks them out), updates leave them as they are.
// SSE2 where the host has it, else plain loops.
#pragma once

#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pfsim::lanes16 {

constexpr unsigned kLanes = 16;

// How a set of `ways` lies in an array: the elements it takes (16, padding
// included, for at most 16 ways; else `ways`, and no lane operation applies),
// and the lanes of its ways as bits (0 when it is not in lanes).
constexpr uint64_t stride(uint64_t ways) { return ways <= kLanes ? kLanes : ways; }
constexpr uint32_t way_bits(uint64_t ways) { return ways <= kLanes ? (uint32_t{1} << ways) - 1 : 0; }

// The same operations one lane at a time: the fallback, and the reference the
// tests hold the SSE2 ones to.
namespace portable {

template <class T>
uint32_t equal(const T* p, T x) {
    uint32_t m = 0;
    for (unsigned w = 0; w < kLanes; ++w) m |= uint32_t{p[w] == x} << w;
    return m;
}

inline void increment_below(uint8_t* p, uint8_t x, const uint8_t* mask) {
    for (unsigned w = 0; w < kLanes; ++w) p[w] = static_cast<uint8_t>(p[w] + (mask[w] && p[w] < x));
}

inline void decrement_above(uint8_t* p, uint8_t x, const uint8_t* mask) {
    for (unsigned w = 0; w < kLanes; ++w) p[w] = static_cast<uint8_t>(p[w] - (mask[w] && p[w] > x));
}

}  // namespace portable

// Bit w set when p[w] == x.
inline uint32_t equal(const uint32_t* p, uint32_t x) {
#if defined(__SSE2__)
    const __m128i v = _mm_set1_epi32(static_cast<int>(x));
    const __m128i* q = reinterpret_cast<const __m128i*>(p);
    const __m128i lo = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(q), v), _mm_cmpeq_epi32(_mm_loadu_si128(q + 1), v));
    const __m128i hi = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_loadu_si128(q + 2), v), _mm_cmpeq_epi32(_mm_loadu_si128(q + 3), v));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi)));
#else
    return portable::equal(p, x);
#endif
}

inline uint32_t equal(const uint8_t* p, uint8_t x) {
#if defined(__SSE2__)
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(static_cast<char>(x)))));
#else
    return portable::equal(p, x);
#endif
}

// p[w] += 1 for every lane with p[w] < x and mask[w] = 0xff (the other lanes'
// mask 0). Values below 128.
inline void increment_below(uint8_t* p, uint8_t x, const uint8_t* mask) {
#if defined(__SSE2__)
    __m128i* q = reinterpret_cast<__m128i*>(p);
    const __m128i v = _mm_loadu_si128(q);
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask));
    const __m128i below = _mm_and_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(x))), m);
    _mm_storeu_si128(q, _mm_sub_epi8(v, below));  // a true comparison is -1
#else
    portable::increment_below(p, x, mask);
#endif
}

// p[w] -= 1 for every lane with p[w] > x and mask[w] = 0xff. Values below 128.
inline void decrement_above(uint8_t* p, uint8_t x, const uint8_t* mask) {
#if defined(__SSE2__)
    __m128i* q = reinterpret_cast<__m128i*>(p);
    const __m128i v = _mm_loadu_si128(q);
    const __m128i m = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mask));
    const __m128i above = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(x))), m);
    _mm_storeu_si128(q, _mm_add_epi8(v, above));
#else
    portable::decrement_above(p, x, mask);
#endif
}

}  // namespace pfsim::lanes16
