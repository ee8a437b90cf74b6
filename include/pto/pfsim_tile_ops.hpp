// The vector instructions of <pto/pto-inst.hpp>: element-wise, with a scalar,
// unary, reductions, broadcasts and conversions over tiles' valid regions
// (docs/kernels.md, "Tile instructions", states each one's values and cost).
//
// Values move at the call. Each instruction occupies the vector pipe for the
// bytes of its operands at core.vector_bandwidth; exp, log, sqrt, rsqrt,
// reciprocal and division take core.vector_special_factor times as long.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "pfsim_kernel_abi.h"
#include "pto/pfsim_elements.hpp"

namespace pto {
namespace detail {

template <typename D, typename S>
PFSIM_TILE_COMPUTE inline void same_valid(const char* instruction, const D& dst, const S& src) {
    if (src.GetValidRow() != dst.GetValidRow() || src.GetValidCol() != dst.GetValidCol()) {
        fail(instruction, "the operands' valid regions differ from the destination's");
    }
}

template <typename T>
constexpr void vector_type_check() {
    static_assert(is_float_v<T> || is_int_v<T>, "a vector instruction on a tile of neither float nor integer elements");
}

// dst(r, c) = f(r, c) over dst's valid region. (dst's place found once, after the
// first f as at() found it then, not per element.)
template <typename D, typename F>
PFSIM_TILE_COMPUTE inline void for_valid(D& dst, F f) {
    typename D::DType* out = nullptr;
    for (int r = 0; r < dst.GetValidRow(); ++r) {
        for (int c = 0; c < dst.GetValidCol(); ++c) {
            const auto v = f(r, c);
            if (!out) out = dst.data();
            out[r * D::kRowStep + c * D::kColStep] = v;
        }
    }
}

// Floats a vector holds: eight where the compiler may use AVX (kernels compiled
// with -mf16c), four otherwise (SSE2), whose vectors pass by the same ABI either way.
#if defined(__AVX__)
inline constexpr int kLanes = 8;
#else
inline constexpr int kLanes = 4;
#endif

// Whether an operand's `rows` x `cols` elements, rows `in_step` apart, lie apart
// from the destination's (rows `out_step` apart), or are the destination's own
// elements one for one: then an element-by-element loop reads each before any
// result lands on it, and kLanes columns at a time read the same values.
template <typename T>
PFSIM_TILE_COMPUTE inline bool apart_or_same(const T* out, int64_t out_step, const T* in, int64_t in_step, int rows,
                                             int cols) {
    return (out == in && out_step == in_step) || apart(out, out_step, cols, in, in_step, cols, rows);
}

typedef float Lanes __attribute__((vector_size(4 * kLanes), aligned(4), may_alias));

// v as an operand beside `like`: in every lane where `like` is a Lanes, else v itself.
template <typename X, typename V>
PFSIM_TILE_COMPUTE inline X splat_like(const X&, V v) {
    if constexpr (std::is_arithmetic_v<X>) {
        return v;
    } else {
        X out;
        for (int i = 0; i < kLanes; ++i) out[i] = v;
        return out;
    }
}

// dst(r, c) = op(a(r, c), b(r, c)) in the computed type, over dst's valid
// region; the tiles' places found once, in the order at() found them (a, b,
// dst). Where the elements are float and each tile's rows are back to back,
// kLanes columns go at a time through vector arithmetic: the same IEEE
// operation lane by lane, so the same bits. Not where dst and an operand
// overlap other than element for element: an element-by-element loop would
// then read some of its own results.
template <typename D, typename A, typename B, typename Op>
PFSIM_TILE_COMPUTE inline void for_valid_pair(D& dst, const A& a, const B& b, Op op) {
    using T = typename D::DType;
    const int rows = dst.GetValidRow(), cols = dst.GetValidCol();
    if (rows <= 0 || cols <= 0) return;
    const T* const in_a = a.data();
    const T* const in_b = b.data();
    T* const out = dst.data();
    int vector_cols = 0;
    if constexpr (std::is_same_v<T, float> && A::kColStep == 1 && B::kColStep == 1 && D::kColStep == 1) {
        if (apart_or_same(out, D::kRowStep, in_a, A::kRowStep, rows, cols) &&
            apart_or_same(out, D::kRowStep, in_b, B::kRowStep, rows, cols)) {
            vector_cols = cols / kLanes * kLanes;
        }
    }
    for (int r = 0; r < rows; ++r) {
        const T* const ra = in_a + static_cast<int64_t>(r) * A::kRowStep;
        const T* const rb = in_b + static_cast<int64_t>(r) * B::kRowStep;
        T* const ro = out + static_cast<int64_t>(r) * D::kRowStep;
        for (int c = 0; c < vector_cols; c += kLanes) {
            *reinterpret_cast<Lanes*>(ro + c) = op(*reinterpret_cast<const Lanes*>(ra + c), *reinterpret_cast<const Lanes*>(rb + c));
        }
        for (int c = vector_cols; c < cols; ++c) {
            ro[c * D::kColStep] = narrow<T>(op(widen(ra[c * A::kColStep]), widen(rb[c * B::kColStep])));
        }
    }
}

// dst(r, c) = op(a(r, c)) in the computed type, over dst's valid region, as
// for_valid would (a's place found before dst's). Where both are float tiles
// with rows back to back, lying apart or one on the other: row by row through
// plain pointers, and where `lanewise` (op takes a Lanes too, the same IEEE
// operation lane by lane) kLanes columns at a time.
template <bool lanewise, typename D, typename A, typename Op>
PFSIM_TILE_COMPUTE inline void for_valid_map(D& dst, const A& a, Op op) {
    using T = typename D::DType;
    const int rows = dst.GetValidRow(), cols = dst.GetValidCol();
    if (rows <= 0 || cols <= 0) return;
    if constexpr (std::is_same_v<T, float> && A::kColStep == 1 && D::kColStep == 1) {
        const T* const in = a.data();
        T* const out = dst.data();
        if (apart_or_same(out, D::kRowStep, in, A::kRowStep, rows, cols)) {
            for (int r = 0; r < rows; ++r) {
                const T* const ra = in + static_cast<int64_t>(r) * A::kRowStep;
                T* const ro = out + static_cast<int64_t>(r) * D::kRowStep;
                int c = 0;
                if constexpr (lanewise) {
                    for (; c + kLanes <= cols; c += kLanes) {
                        *reinterpret_cast<Lanes*>(ro + c) = op(*reinterpret_cast<const Lanes*>(ra + c));
                    }
                }
                for (; c < cols; ++c) ro[c] = op(ra[c]);
            }
            return;
        }
    }
    for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE { return narrow<T>(op(widen(a.at(r, c)))); });
}

template <typename X>
PFSIM_TILE_COMPUTE inline X recip(X x) { return 1.0f / x; }

// The vector pipe's time for `bytes` of operands; `special`: exp, log, sqrt,
// rsqrt, reciprocal and division.
inline void vector_time(uint64_t bytes, bool special) {
    if (special) {
        pfsim::current_core().vector_special(bytes);
    } else {
        pfsim::current_core().vector(bytes);
    }
}
PFSIM_TILE_COMPUTE inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }

}  // namespace detail

// dst = a OP b, element-wise.
#define PFSIM_BINARY_OP(NAME, EXPR, FLOAT_ONLY, COST)                                               \
    template <typename D, typename A, typename B, typename... Events>                             \
    PFSIM_TILE_COMPUTE void NAME(D& dst, A& a, B& b, Events&...) {                                \
        using T = typename D::DType;                                                              \
        detail::vector_type_check<T>();                                                           \
        static_assert(std::is_same_v<T, typename A::DType> && std::is_same_v<T, typename B::DType>, \
                      #NAME ": the operands' element types differ");                             \
        static_assert(!FLOAT_ONLY || detail::is_float_v<T>, #NAME ": float types only");          \
        detail::same_valid(#NAME, dst, a);                                                        \
        detail::same_valid(#NAME, dst, b);                                                        \
        detail::for_valid_pair(dst, a, b, [](auto x, auto y) PFSIM_TILE_COMPUTE { return EXPR; }); \
        pfsim::current_core().COST(3 * D::kBytes);                                                \
    }
PFSIM_BINARY_OP(TADD, x + y, false, vector)
PFSIM_BINARY_OP(TSUB, x - y, false, vector)
PFSIM_BINARY_OP(TMUL, x * y, false, vector)
PFSIM_BINARY_OP(TDIV, x / y, true, vector_special)
PFSIM_BINARY_OP(TMAX, x > y ? x : y, false, vector)
PFSIM_BINARY_OP(TMIN, x < y ? x : y, false, vector)
#undef PFSIM_BINARY_OP

// dst = a OP scalar, element-wise; the scalar is converted to the element type first.
#define PFSIM_SCALAR_OP(NAME, EXPR, FLOAT_ONLY, COST)                                      \
    template <typename D, typename A, typename S, typename... Events,                    \
              typename = std::enable_if_t<std::is_arithmetic_v<S> || detail::is_float_v<S>>> \
    PFSIM_TILE_COMPUTE void NAME(D& dst, A& a, S scalar, Events&...) {                   \
        using T = typename D::DType;                                                     \
        detail::vector_type_check<T>();                                                  \
        static_assert(std::is_same_v<T, typename A::DType>, #NAME ": the operands' element types differ"); \
        static_assert(!FLOAT_ONLY || detail::is_float_v<T>, #NAME ": float types only"); \
        detail::same_valid(#NAME, dst, a);                                               \
        const auto scalar_wide = detail::widen(static_cast<T>(scalar));                  \
        detail::for_valid_map<true>(dst, a, [&](auto x) PFSIM_TILE_COMPUTE {             \
            const auto y = detail::splat_like(x, scalar_wide);                           \
            return EXPR;                                                                 \
        });                                                                              \
        pfsim::current_core().COST(2 * D::kBytes);                                       \
    }
PFSIM_SCALAR_OP(TADDS, x + y, false, vector)
PFSIM_SCALAR_OP(TSUBS, x - y, false, vector)
PFSIM_SCALAR_OP(TMULS, x * y, false, vector)
PFSIM_SCALAR_OP(TDIVS, x / y, true, vector_special)
PFSIM_SCALAR_OP(TMAXS, x > y ? x : y, false, vector)
PFSIM_SCALAR_OP(TMINS, x < y ? x : y, false, vector)
#undef PFSIM_SCALAR_OP

// dst = scalar / src, element-wise (TDIVS with the scalar first).
template <typename D, typename S, typename A, typename... Events,
          typename = std::enable_if_t<std::is_arithmetic_v<S> || detail::is_float_v<S>>>
PFSIM_TILE_COMPUTE void TDIVS(D& dst, S scalar, A& a, Events&...) {
    using T = typename D::DType;
    static_assert(detail::is_float_v<T> && std::is_same_v<T, typename A::DType>, "TDIVS: float operands of one type");
    detail::same_valid("TDIVS", dst, a);
    const float y = detail::widen(static_cast<T>(scalar));
    detail::for_valid_map<true>(dst, a, [&](auto x) PFSIM_TILE_COMPUTE { return detail::splat_like(x, y) / x; });
    pfsim::current_core().vector_special(2 * D::kBytes);
}

// dst = f(src), element-wise. LANEWISE: f takes a Lanes too (one IEEE operation lane by lane).
#define PFSIM_UNARY_OP(NAME, EXPR, FLOAT_ONLY, COST, LANEWISE)                              \
    template <typename D, typename A, typename... Events>                                 \
    PFSIM_TILE_COMPUTE void NAME(D& dst, A& a, Events&...) {                              \
        using T = typename D::DType;                                                      \
        detail::vector_type_check<T>();                                                   \
        static_assert(std::is_same_v<T, typename A::DType>, #NAME ": the operands' element types differ"); \
        static_assert(!FLOAT_ONLY || detail::is_float_v<T>, #NAME ": float types only");  \
        detail::same_valid(#NAME, dst, a);                                                \
        detail::for_valid_map<LANEWISE>(dst, a, [](auto x) PFSIM_TILE_COMPUTE { return EXPR; }); \
        pfsim::current_core().COST(2 * D::kBytes);                                        \
    }
PFSIM_UNARY_OP(TEXP, std::exp(x), true, vector_special, false)
PFSIM_UNARY_OP(TLOG, std::log(x), true, vector_special, false)
PFSIM_UNARY_OP(TSQRT, std::sqrt(x), true, vector_special, false)
PFSIM_UNARY_OP(TRSQRT, detail::rsqrt(x), true, vector_special, false)
PFSIM_UNARY_OP(TRECIP, detail::recip(x), true, vector_special, true)
PFSIM_UNARY_OP(TABS, x < 0 ? -x : x, false, vector, true)
PFSIM_UNARY_OP(TNEG, -x, false, vector, true)
PFSIM_UNARY_OP(TRELU, x > 0 ? x : decltype(x){0}, false, vector, true)
#undef PFSIM_UNARY_OP

// Every valid element of dst = scalar.
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TEXPANDS(D& dst, S scalar, Events&...) {
    const auto v = static_cast<typename D::DType>(scalar);
    detail::for_valid(dst, [&](int, int) PFSIM_TILE_COMPUTE { return v; });
    pfsim::current_core().vector(D::kBytes);
}

namespace detail {
// Row reductions: dst(r, 0) = op over c of src(r, c), accumulated in the
// compute type (float for float tiles) from column 0 up.
template <typename D, typename S, typename Op>
PFSIM_TILE_COMPUTE void row_reduce(const char* instruction, D& dst, S& src, Op op) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename S::DType>, "a row reduction's tiles differ in element type");
    if (src.GetValidRow() != dst.GetValidRow() || src.GetValidCol() == 0) {
        fail(instruction, "the destination's valid rows differ from the source's, or the source has no valid column");
    }
    const int rows = src.GetValidRow(), cols = src.GetValidCol();
    int r = 0;
    if constexpr (std::is_same_v<T, float> && S::kColStep == 1) {
        // Float rows back to back, the results apart from them: kRowBlock rows side by
        // side, each still folded from column 0 up (independent chains the host overlaps).
        constexpr int kRowBlock = 8;
        const T* const in = rows > 0 ? src.data() : nullptr;
        T* const out = rows > 0 ? dst.data() : nullptr;
        if (rows > 0 && apart(out, D::kRowStep, 1, in, S::kRowStep, cols, rows)) {
            for (; r + kRowBlock <= rows; r += kRowBlock) {
                const T* const row = in + static_cast<int64_t>(r) * S::kRowStep;
                T acc[kRowBlock];
#pragma GCC unroll 8
                for (int i = 0; i < kRowBlock; ++i) acc[i] = row[i * S::kRowStep];
                for (int c = 1; c < cols; ++c) {
#pragma GCC unroll 8
                    for (int i = 0; i < kRowBlock; ++i) acc[i] = op(acc[i], row[i * S::kRowStep + c]);
                }
                for (int i = 0; i < kRowBlock; ++i) out[(r + i) * D::kRowStep] = acc[i];
            }
        }
    }
    for (; r < rows; ++r) {
        auto acc = widen(src.at(r, 0));
        for (int c = 1; c < cols; ++c) acc = op(acc, widen(src.at(r, c)));
        dst.at(r, 0) = narrow<T>(acc);
    }
    pfsim::current_core().vector(S::kBytes + D::kBytes);
}
// Column reductions: dst(0, c) = op over r of src(r, c), from row 0 down.
template <typename D, typename S, typename Op>
PFSIM_TILE_COMPUTE void col_reduce(const char* instruction, D& dst, S& src, Op op) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename S::DType>, "a column reduction's tiles differ in element type");
    if (src.GetValidCol() != dst.GetValidCol() || src.GetValidRow() == 0) {
        fail(instruction, "the destination's valid columns differ from the source's, or the source has no valid row");
    }
    for (int c = 0; c < src.GetValidCol(); ++c) {
        auto acc = widen(src.at(0, c));
        for (int r = 1; r < src.GetValidRow(); ++r) acc = op(acc, widen(src.at(r, c)));
        dst.at(0, c) = narrow<T>(acc);
    }
    pfsim::current_core().vector(S::kBytes + D::kBytes);
}
struct Sum {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return a + b; }
};
struct Max {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return b > a ? b : a; }
};
struct Min {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return b < a ? b : a; }
};
}  // namespace detail

// The board's forms take a scratch tile (`tmp`); pfsim needs none and accepts both.
#define PFSIM_REDUCE(NAME, KIND, OP)                                                              \
    template <typename D, typename S>                                                           \
    PFSIM_TILE_COMPUTE void NAME(D& dst, S& src) {                                              \
        detail::KIND(#NAME, dst, src, detail::OP{});                                            \
    }                                                                                           \
    template <typename D, typename S, typename Tmp, typename... Rest>                           \
    PFSIM_TILE_COMPUTE void NAME(D& dst, S& src, Tmp&, Rest&&...) {                             \
        detail::KIND(#NAME, dst, src, detail::OP{});                                            \
    }
PFSIM_REDUCE(TROWSUM, row_reduce, Sum)
PFSIM_REDUCE(TROWMAX, row_reduce, Max)
PFSIM_REDUCE(TROWMIN, row_reduce, Min)
PFSIM_REDUCE(TCOLSUM, col_reduce, Sum)
PFSIM_REDUCE(TCOLMAX, col_reduce, Max)
PFSIM_REDUCE(TCOLMIN, col_reduce, Min)
#undef PFSIM_REDUCE

namespace detail {
// The per-row operand of a row broadcast: one value per row (a column
// vector), or a 32-byte block per row whose values repeat along the row.
template <typename V>
PFSIM_TILE_COMPUTE auto row_operand(const V& v, int r, int c) {
    constexpr int kBlock = 32 / static_cast<int>(sizeof(typename V::DType));
    if constexpr (V::cols == 1) {
        return widen(v.at(r, 0));
    } else {
        static_assert(V::cols == kBlock, "a row-broadcast operand has one column, or one 32-byte block per row");
        return widen(v.at(r, c % kBlock));
    }
}
struct ExpDif;
// dst(r, c) = op(m(r, c), v(r)) where m matches dst and v holds a value per row.
template <typename D, typename M, typename V, typename Op>
PFSIM_TILE_COMPUTE void row_expand(const char* instruction, D& dst, M& m, V& v, bool v_first, Op op, bool special) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename M::DType> && std::is_same_v<T, typename V::DType>,
                  "a row broadcast's tiles differ in element type");
    same_valid(instruction, dst, m);
    if (v.GetValidRow() < dst.GetValidRow()) fail(instruction, "the per-row operand has fewer rows than the destination");
    const int rows = dst.GetValidRow(), cols = dst.GetValidCol();
    if constexpr (std::is_same_v<T, float> && M::kColStep == 1 && D::kColStep == 1 && V::cols == 1) {
        // Float rows back to back, m on dst or apart from it, v apart from dst (each
        // row's value read once, before the row's results): through plain pointers,
        // kLanes columns at a time where op is one IEEE operation (not exp).
        const T* const in = rows > 0 && cols > 0 ? m.data() : nullptr;
        const T* const per_row = in ? v.data() : nullptr;
        T* const out = in ? dst.data() : nullptr;
        if (in && apart_or_same(out, D::kRowStep, in, M::kRowStep, rows, cols) &&
            apart(out, D::kRowStep, cols, per_row, V::kRowStep, 1, rows)) {
            for (int r = 0; r < rows; ++r) {
                const T* const rm = in + static_cast<int64_t>(r) * M::kRowStep;
                T* const ro = out + static_cast<int64_t>(r) * D::kRowStep;
                const float y = per_row[static_cast<int64_t>(r) * V::kRowStep];
                int c = 0;
                if constexpr (!std::is_same_v<Op, ExpDif>) {
                    const Lanes ys = splat_like(Lanes{}, y);
                    for (; c + kLanes <= cols; c += kLanes) {
                        const Lanes x = *reinterpret_cast<const Lanes*>(rm + c);
                        *reinterpret_cast<Lanes*>(ro + c) = v_first ? op(ys, x) : op(x, ys);
                    }
                }
                for (; c < cols; ++c) ro[c] = v_first ? op(y, rm[c]) : op(rm[c], y);
            }
            vector_time(2 * D::kBytes + V::kBytes, special);
            return;
        }
    }
    for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE {
        const auto x = widen(m.at(r, c)), y = row_operand(v, r, c);
        return narrow<T>(v_first ? op(y, x) : op(x, y));
    });
    vector_time(2 * D::kBytes + V::kBytes, special);
}
template <typename D, typename M, typename V, typename Op>
PFSIM_TILE_COMPUTE void col_expand(const char* instruction, D& dst, M& m, V& v, Op op, bool special) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename M::DType> && std::is_same_v<T, typename V::DType>,
                  "a column broadcast's tiles differ in element type");
    same_valid(instruction, dst, m);
    if (v.GetValidCol() < dst.GetValidCol()) fail(instruction, "the per-column operand has fewer columns than the destination");
    for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE { return narrow<T>(op(widen(m.at(r, c)), widen(v.at(0, c)))); });
    vector_time(2 * D::kBytes + V::kBytes, special);
}
struct Add {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return a + b; }
};
struct Sub {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return a - b; }
};
struct Mul {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return a * b; }
};
struct Div {
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const { return a / b; }
};
struct ExpDif {  // exp(a - b), in float
    template <typename C>
    PFSIM_TILE_COMPUTE C operator()(C a, C b) const {
        static_assert(std::is_floating_point_v<C>, "TROWEXPANDEXPDIF / TCOLEXPANDEXPDIF: tiles of float, half or bfloat16_t");
        return std::exp(a - b);
    }
};
// The per-row operand of a row broadcast is the one that is not shaped as a
// matrix: one column, or one 32-byte block per row.
template <typename V>
constexpr bool is_row_operand_v = V::cols == 1 || V::cols == 32 / static_cast<int>(sizeof(typename V::DType));
}  // namespace detail

// dst(r, c) = src0(r, c) OP src1(r): src1 holds one value per row (or a
// 32-byte block per row). Either operand may be the per-row one: src1 when
// src0 is shaped as the destination or src1 as a per-row operand, else src0.
#define PFSIM_ROW_EXPAND(NAME, OP, SPECIAL)                                                       \
    template <typename D, typename A, typename B, typename... Events>                           \
    PFSIM_TILE_COMPUTE void NAME(D& dst, A& src0, B& src1, Events&...) {                        \
        if constexpr ((A::rows == D::rows && A::cols == D::cols) || detail::is_row_operand_v<B>) { \
            detail::row_expand(#NAME, dst, src0, src1, false, detail::OP{}, SPECIAL);           \
        } else {                                                                                \
            detail::row_expand(#NAME, dst, src1, src0, true, detail::OP{}, SPECIAL);            \
        }                                                                                       \
    }
PFSIM_ROW_EXPAND(TROWEXPANDADD, Add, false)
PFSIM_ROW_EXPAND(TROWEXPANDSUB, Sub, false)
PFSIM_ROW_EXPAND(TROWEXPANDMUL, Mul, false)
PFSIM_ROW_EXPAND(TROWEXPANDDIV, Div, true)
PFSIM_ROW_EXPAND(TROWEXPANDMAX, Max, false)
PFSIM_ROW_EXPAND(TROWEXPANDMIN, Min, false)
PFSIM_ROW_EXPAND(TROWEXPANDEXPDIF, ExpDif, true)
#undef PFSIM_ROW_EXPAND

// dst(r, c) = src0(r, c) OP src1(0, c): src1 holds one value per column.
#define PFSIM_COL_EXPAND(NAME, OP, SPECIAL)                                             \
    template <typename D, typename A, typename B, typename... Events>                 \
    PFSIM_TILE_COMPUTE void NAME(D& dst, A& src0, B& src1, Events&...) {              \
        detail::col_expand(#NAME, dst, src0, src1, detail::OP{}, SPECIAL);            \
    }
PFSIM_COL_EXPAND(TCOLEXPANDADD, Add, false)
PFSIM_COL_EXPAND(TCOLEXPANDSUB, Sub, false)
PFSIM_COL_EXPAND(TCOLEXPANDMUL, Mul, false)
PFSIM_COL_EXPAND(TCOLEXPANDDIV, Div, true)
PFSIM_COL_EXPAND(TCOLEXPANDMAX, Max, false)
PFSIM_COL_EXPAND(TCOLEXPANDMIN, Min, false)
PFSIM_COL_EXPAND(TCOLEXPANDEXPDIF, ExpDif, true)
#undef PFSIM_COL_EXPAND

// TCONCAT(dst, src0, src1): each row of dst is src0's valid columns, then
// src1's. The index forms take row r's two column counts from element (r, 0)
// of src0Idx and src1Idx, in bytes, and the six-operand form writes their sum
// to dstIdx(r, 0).
namespace detail {
template <typename D, typename A, typename B, typename Cols>
PFSIM_TILE_COMPUTE void concat(D& dst, A& src0, B& src1, Cols cols) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename A::DType> && std::is_same_v<T, typename B::DType>,
                  "TCONCAT: the tiles differ in element type");
    if (src0.GetValidRow() != dst.GetValidRow() || src1.GetValidRow() != dst.GetValidRow()) {
        fail("TCONCAT", "the sources' valid rows differ from the destination's");
    }
    for (int r = 0; r < dst.GetValidRow(); ++r) {
        const auto [n0, n1] = cols(r);
        if (n0 < 0 || n1 < 0 || n0 > src0.GetValidCol() || n1 > src1.GetValidCol() || n0 + n1 > D::cols) {
            fail("TCONCAT", "a row's column counts exceed a source's valid columns or the destination's columns");
        }
        for (int c = 0; c < n0; ++c) dst.at(r, c) = src0.at(r, c);
        for (int c = 0; c < n1; ++c) dst.at(r, n0 + c) = src1.at(r, c);
    }
    pfsim::current_core().vector(D::kBytes + A::kBytes + B::kBytes);
}
template <typename T, typename I>
PFSIM_TILE_COMPUTE int concat_count(const I& idx, int r) {
    static_assert(is_int_v<typename I::DType>, "TCONCAT: index tiles of integers");
    return static_cast<int>(static_cast<int64_t>(idx.at(r, 0)) / static_cast<int64_t>(sizeof(T)));
}
}  // namespace detail
template <typename D, typename A, typename B, typename... Events>
PFSIM_TILE_COMPUTE void TCONCAT(D& dst, A& src0, B& src1, Events&...) {
    if (dst.GetValidCol() != src0.GetValidCol() + src1.GetValidCol()) {
        detail::fail("TCONCAT", "the destination's valid columns are not the two sources' together");
    }
    detail::concat(dst, src0, src1, [&](int) PFSIM_TILE_COMPUTE { return std::pair<int, int>{src0.GetValidCol(), src1.GetValidCol()}; });
}
template <typename D, typename A, typename B, typename AI, typename BI>
PFSIM_TILE_COMPUTE void TCONCAT(D& dst, A& src0, B& src1, AI& src0_idx, BI& src1_idx) {
    using T = typename D::DType;
    detail::concat(dst, src0, src1, [&](int r) PFSIM_TILE_COMPUTE {
        return std::pair<int, int>{detail::concat_count<T>(src0_idx, r), detail::concat_count<T>(src1_idx, r)};
    });
}
template <typename D, typename A, typename B, typename DI, typename AI, typename BI>
PFSIM_TILE_COMPUTE void TCONCAT(D& dst, A& src0, B& src1, DI& dst_idx, AI& src0_idx, BI& src1_idx) {
    using T = typename D::DType;
    static_assert(std::is_same_v<typename DI::DType, typename AI::DType>, "TCONCAT: dstIdx and src0Idx differ in type");
    detail::concat(dst, src0, src1, [&](int r) PFSIM_TILE_COMPUTE {
        dst_idx.at(r, 0) = static_cast<typename DI::DType>(src0_idx.at(r, 0) + src1_idx.at(r, 0));
        return std::pair<int, int>{detail::concat_count<T>(src0_idx, r), detail::concat_count<T>(src1_idx, r)};
    });
}

// dst(r, c) = src(r, 0), and dst(r, c) = src(0, c).
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TROWEXPAND(D& dst, S& src, Events&...) {
    static_assert(std::is_same_v<typename D::DType, typename S::DType>, "TROWEXPAND: the tiles' element types differ");
    if (src.GetValidRow() < dst.GetValidRow()) detail::fail("TROWEXPAND", "the source has fewer rows than the destination");
    detail::for_valid(dst, [&](int r, int) PFSIM_TILE_COMPUTE { return src.at(r, 0); });
    pfsim::current_core().vector(D::kBytes + S::kBytes);
}
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TCOLEXPAND(D& dst, S& src, Events&...) {
    static_assert(std::is_same_v<typename D::DType, typename S::DType>, "TCOLEXPAND: the tiles' element types differ");
    if (src.GetValidCol() < dst.GetValidCol()) detail::fail("TCOLEXPAND", "the source has fewer columns than the destination");
    detail::for_valid(dst, [&](int, int c) PFSIM_TILE_COMPUTE { return src.at(0, c); });
    pfsim::current_core().vector(D::kBytes + S::kBytes);
}

namespace detail {
// The conversions a2a3 has (PTO-ISA docs/isa/TCVT.md, less int4).
template <typename D, typename S>
constexpr bool tcvt_supported() {
    using namespace std;
    if constexpr (is_same_v<S, float>) {
        return is_same_v<D, half> || is_same_v<D, float> || is_same_v<D, bfloat16_t> || is_same_v<D, int16_t> ||
               is_same_v<D, int32_t> || is_same_v<D, int64_t>;
    } else if constexpr (is_same_v<S, half>) {
        return is_same_v<D, float> || is_same_v<D, int32_t> || is_same_v<D, int16_t> || is_same_v<D, int8_t> ||
               is_same_v<D, uint8_t>;
    } else if constexpr (is_same_v<S, bfloat16_t>) {
        return is_same_v<D, float> || is_same_v<D, int32_t>;
    } else if constexpr (is_same_v<S, int16_t>) {
        return is_same_v<D, half> || is_same_v<D, float>;
    } else if constexpr (is_same_v<S, int32_t>) {
        return is_same_v<D, float> || is_same_v<D, int16_t> || is_same_v<D, int64_t> || is_same_v<D, half>;
    } else if constexpr (is_same_v<S, int64_t>) {
        return is_same_v<D, float> || is_same_v<D, int32_t>;
    } else if constexpr (is_same_v<S, uint8_t> || is_same_v<S, int8_t>) {
        return is_same_v<D, half>;
    }
    return false;
}

// One element, src type S to D, in `mode`; integers saturate unless `wrap`.
template <typename D, typename S>
PFSIM_TILE_COMPUTE D convert(S v, RoundMode mode, bool wrap) {
    if constexpr (std::is_same_v<D, S>) {
        if constexpr (std::is_same_v<S, float>) {  // float -> float rounds to an integral value
            switch (mode) {
                case RoundMode::CAST_RINT: return std::nearbyint(v);
                case RoundMode::CAST_ROUND: return std::round(v);
                case RoundMode::CAST_FLOOR: return std::floor(v);
                case RoundMode::CAST_CEIL: return std::ceil(v);
                case RoundMode::CAST_TRUNC: return std::trunc(v);
                default: return v;
            }
        }
        return v;
    } else if constexpr (std::is_same_v<D, half> || std::is_same_v<D, bfloat16_t>) {
        // Through float: exact for every source a2a3 has but int32 beyond 2^24.
        return D::from(static_cast<float>(v), mode);
    } else if constexpr (std::is_same_v<D, float>) {
        return static_cast<float>(v);  // exact, or (int32/int64) to nearest even
    } else if constexpr (is_float_v<S>) {
        return float_to_int<D>(static_cast<float>(v), mode, wrap);
    } else {  // integer -> integer: saturate unless wrapping
        const int64_t x = static_cast<int64_t>(v);
        if (wrap) return static_cast<D>(x);
        if (x < static_cast<int64_t>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
        if (x > static_cast<int64_t>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
        return static_cast<D>(x);
    }
}

// Whether dst's and src's valid regions, their rows back to back (kColStep 1),
// lie apart in memory; false for an empty region. Finds src's place first, as at() would.
template <typename Dt, typename St>
PFSIM_TILE_COMPUTE bool rows_apart(Dt& dst, const St& src) {
    const int rows = dst.GetValidRow(), cols = dst.GetValidCol();
    if (rows <= 0 || cols <= 0) return false;
    const auto* const in = src.data();
    const auto* const out = dst.data();
    return apart(out, Dt::kRowStep, cols, in, St::kRowStep, cols, rows);
}

typedef uint32_t Bits32 __attribute__((vector_size(4 * kLanes), aligned(4), may_alias));
typedef uint16_t Bits16 __attribute__((vector_size(2 * kLanes), aligned(2), may_alias));
static_assert(sizeof(bfloat16_t) == 2, "a bfloat16_t is its 16 bits");

// dst(r, c) from src(r, c) over dst's valid region, where rows_apart: `lanes(in, out)`
// converts kLanes elements at a time, `one(in, out)` the rest of each row.
template <typename Dt, typename St, typename Lanes, typename One>
PFSIM_TILE_COMPUTE void convert_rows(Dt& dst, const St& src, Lanes lanes, One one) {
    for (int r = 0; r < dst.GetValidRow(); ++r) {
        const typename St::DType* in = src.data() + r * St::kRowStep;
        typename Dt::DType* out = dst.data() + r * Dt::kRowStep;
        int c = 0;
        for (; c + kLanes <= dst.GetValidCol(); c += kLanes) lanes(in + c, out + c);
        for (; c < dst.GetValidCol(); ++c) one(in + c, out + c);
    }
}

// float -> bfloat16_t to nearest (ties away from zero when `away`), where
// rows_apart: bf16_bits_nearest's arithmetic lane by lane, the same bits.
template <typename Dt, typename St>
PFSIM_TILE_COMPUTE void narrow_rows_to_bf16(Dt& dst, const St& src, bool away) {
    const uint32_t half_ulp = away ? 0x8000u : 0x7FFFu, ties_to_even = away ? 0u : 1u;
    convert_rows(
        dst, src,
        [&](const float* in, bfloat16_t* out) PFSIM_TILE_COMPUTE {
            Bits32 x;
            std::memcpy(&x, in, sizeof x);
            const Bits32 rounded = (x + (half_ulp + ((x >> 16) & ties_to_even))) >> 16;
            const Bits32 nan = ((x >> 16) & 0x8000u) | 0x7FC0u;
            const Bits32 is_nan = (Bits32)((x & 0x7FFFFFFFu) > 0x7F800000u);  // all ones or zeros
            const Bits16 bits = __builtin_convertvector((rounded & ~is_nan) | (nan & is_nan), Bits16);
            std::memcpy(out, &bits, sizeof bits);
        },
        [&](const float* in, bfloat16_t* out) PFSIM_TILE_COMPUTE { out->bits = bf16_bits_nearest(*in, away); });
}

// bfloat16_t -> float, where rows_apart: each bfloat16_t's 16 bits moved to the
// top of 32 (what its conversion to float does).
template <typename Dt, typename St>
PFSIM_TILE_COMPUTE void widen_rows_from_bf16(Dt& dst, const St& src) {
    convert_rows(
        dst, src,
        [](const bfloat16_t* in, float* out) PFSIM_TILE_COMPUTE {
            Bits16 x;
            std::memcpy(&x, in, sizeof x);
            const Bits32 bits = __builtin_convertvector(x, Bits32) << 16;
            std::memcpy(out, &bits, sizeof bits);
        },
        [](const bfloat16_t* in, float* out) PFSIM_TILE_COMPUTE { *out = static_cast<float>(*in); });
}

template <typename Dt, typename St>
PFSIM_TILE_COMPUTE void tcvt(Dt& dst, St& src, RoundMode mode, SaturationMode sat) {
    using D = typename Dt::DType;
    using S = typename St::DType;
    static_assert(tcvt_supported<D, S>(), "TCVT: a2a3 has no conversion between these element types");
    same_valid("TCVT", dst, src);
    const bool wrap = sat == SaturationMode::OFF;
    bool done = false;
    if constexpr (Dt::kColStep == 1 && St::kColStep == 1 && std::is_same_v<D, bfloat16_t> && std::is_same_v<S, float>) {
        const bool nearest = mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE || mode == RoundMode::CAST_ROUND;
        done = nearest && rows_apart(dst, src);
        if (done) narrow_rows_to_bf16(dst, src, mode == RoundMode::CAST_ROUND);
    } else if constexpr (Dt::kColStep == 1 && St::kColStep == 1 && std::is_same_v<D, float> &&
                         std::is_same_v<S, bfloat16_t>) {
        done = rows_apart(dst, src);
        if (done) widen_rows_from_bf16(dst, src);
    }
    if (!done) for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE { return convert<D>(src.at(r, c), mode, wrap); });
    pfsim::current_core().vector(Dt::kBytes + St::kBytes);
}
}  // namespace detail

// dst = src converted to dst's element type in `mode` (RoundMode), saturating
// by default; SaturationMode::OFF wraps (PyTorch's narrowing). The forms with
// a scratch tile take it and need none.
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TCVT(D& dst, S& src, RoundMode mode, Events&...) {
    detail::tcvt(dst, src, mode, SaturationMode::ON);
}
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TCVT(D& dst, S& src, RoundMode mode, SaturationMode sat, Events&...) {
    detail::tcvt(dst, src, mode, sat);
}
template <typename D, typename S, typename Tmp, typename... Events,
          typename = std::enable_if_t<!std::is_same_v<Tmp, RoundMode>>>
PFSIM_TILE_COMPUTE void TCVT(D& dst, S& src, Tmp&, RoundMode mode, Events&...) {
    detail::tcvt(dst, src, mode, SaturationMode::ON);
}
template <typename D, typename S, typename Tmp, typename... Events,
          typename = std::enable_if_t<!std::is_same_v<Tmp, RoundMode>>>
PFSIM_TILE_COMPUTE void TCVT(D& dst, S& src, Tmp&, RoundMode mode, SaturationMode sat, Events&...) {
    detail::tcvt(dst, src, mode, sat);
}

}  // namespace pto

namespace pto {

// dst_k = start + k (descending: start - k) over dst's valid elements, k
// counting row by row.
template <typename D, typename T, int descending, typename... Events>
PFSIM_TILE_COMPUTE void TCI(D& dst, T start, Events&...) {
    static_assert(detail::is_int_v<typename D::DType>, "TCI: an integer tile");
    const int cols = dst.GetValidCol();
    detail::for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE {
        const int64_t k = int64_t{r} * cols + c;
        return detail::narrow<typename D::DType>(descending ? int64_t{start} - k : int64_t{start} + k);
    });
    pfsim::current_core().vector(D::kBytes);
}

namespace detail {
template <typename T, PadValue P>
PFSIM_TILE_COMPUTE T pad_value() {
    if constexpr (P == PadValue::Zero || P == PadValue::Null) {
        return T(0.0f);
    } else if constexpr (is_float_v<T>) {
        return T(P == PadValue::Max ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity());
    } else {
        return P == PadValue::Max ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
    }
}
}  // namespace detail

// dst = src inside src's valid region, dst's PadValue (Zero, Max: +inf or the
// type's largest, Min: -inf or its smallest) everywhere else in dst's rows x cols.
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TFILLPAD(D& dst, S& src, Events&...) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename S::DType>, "TFILLPAD: the tiles' element types differ");
    static_assert(D::pad != PadValue::Null, "TFILLPAD: the destination tile names no PadValue");
    const T pad = detail::pad_value<T, D::pad>();
    const int vr = src.GetValidRow(), vc = src.GetValidCol();
    if (vr > D::rows || vc > D::cols) detail::fail("TFILLPAD", "the source's valid region is larger than the destination");
    for (int r = 0; r < D::rows; ++r) {
        for (int c = 0; c < D::cols; ++c) dst.at(r, c) = r < vr && c < vc ? src.at(r, c) : pad;
    }
    pfsim::current_core().vector(D::kBytes + S::kBytes);
}
// The same with dst and src one buffer: only the padding is written.
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TFILLPAD_INPLACE(D& dst, S& src, Events&...) {
    using T = typename D::DType;
    static_assert(std::is_same_v<T, typename S::DType>, "TFILLPAD_INPLACE: the tiles' element types differ");
    static_assert(D::pad != PadValue::Null, "TFILLPAD_INPLACE: the destination tile names no PadValue");
    const T pad = detail::pad_value<T, D::pad>();
    const int vr = src.GetValidRow(), vc = src.GetValidCol();
    for (int r = 0; r < D::rows; ++r) {
        for (int c = r < vr && vc > 0 ? vc : 0; c < D::cols; ++c) dst.at(r, c) = pad;
    }
    pfsim::current_core().vector(D::kBytes);
}

// dst views src's bytes as another shape or type (no value changes, no time).
template <typename D, typename S, typename... Events>
void TRESHAPE(D& dst, S& src, Events&...) {
    static_assert(D::kBytes <= S::kBytes, "TRESHAPE: the new view is larger than the tile");
    static_assert(D::buffer() == S::buffer(), "TRESHAPE: a view stays in its buffer");
    dst.view(src.data());
}

}  // namespace pto

namespace pto {

// dst(c, r) = src(r, c) over src's valid region; dst's valid region must be
// its transpose. The board's scratch tile is taken and not needed.
template <typename D, typename S, typename Tmp, typename... Events>
PFSIM_TILE_COMPUTE void TTRANS(D& dst, S& src, Tmp&, Events&...) {
    static_assert(std::is_same_v<typename D::DType, typename S::DType>, "TTRANS: the tiles' element types differ");
    if (dst.GetValidRow() != src.GetValidCol() || dst.GetValidCol() != src.GetValidRow()) {
        detail::fail("TTRANS", "the destination's valid region is not the source's transposed");
    }
    detail::for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE { return src.at(c, r); });
    pfsim::current_core().vector(D::kBytes + S::kBytes);
}

// Index gather: dst(r, c) = src's element number idx(r, c), counting src's
// storage row by row (an integer tile of indices; an index outside src is a
// fault). The board's unit for the indices is not public: elements is a guess.
template <typename D, typename S, typename I, typename Tmp, typename... Events>
PFSIM_TILE_COMPUTE void TGATHER(D& dst, S& src, I& idx, Tmp&, Events&...) {
    static_assert(std::is_same_v<typename D::DType, typename S::DType>, "TGATHER: the tiles' element types differ");
    static_assert(detail::is_int_v<typename I::DType>, "TGATHER: the indices are an integer tile");
    if (idx.GetValidRow() < dst.GetValidRow() || idx.GetValidCol() < dst.GetValidCol()) {
        detail::fail("TGATHER", "the index tile is smaller than the destination's valid region");
    }
    constexpr int64_t kElements = int64_t{S::rows} * S::cols;
    detail::for_valid(dst, [&](int r, int c) PFSIM_TILE_COMPUTE {
        const int64_t k = static_cast<int64_t>(idx.at(r, c));
        if (k < 0 || k >= kElements) detail::fail("TGATHER", "an index lies outside the source tile");
        return src.at(static_cast<int>(k / S::cols), static_cast<int>(k % S::cols));
    });
    pfsim::current_core().vector(D::kBytes + I::kBytes + S::kBytes);
}

// Mask-pattern gather, TGATHER<DstTile, SrcTile, MaskPattern::P...>(dst, src):
// of each valid row of src, the columns the pattern selects (P0101 the even
// ones, P1010 the odd ones, P0001 / P0010 / P0100 / P1000 the first / second /
// third / fourth of every four, P1111 all), row after row, written one after
// another into dst's storage, bits unchanged (a float pair's index half comes
// out as an int32). dst's valid columns must be its columns (a stream).
enum class MaskPattern : uint8_t { P0101 = 1, P1010 = 2, P0001 = 3, P0010 = 4, P0100 = 5, P1000 = 6, P1111 = 7 };
template <typename D, typename S, MaskPattern kPattern, typename... Events>
PFSIM_TILE_COMPUTE void TGATHER(D& dst, S& src, Events&...) {
    using TD = typename D::DType;
    using TS = typename S::DType;
    static_assert(sizeof(TD) == sizeof(TS) && (sizeof(TS) == 2 || sizeof(TS) == 4),
                  "TGATHER (mask pattern): 2- or 4-byte elements, the same size in dst and src");
    static_assert(D::type == TileType::Vec && S::type == TileType::Vec && D::blayout == BLayout::RowMajor &&
                      S::blayout == BLayout::RowMajor,
                  "TGATHER (mask pattern): row-major vector (UB) tiles");
    if (dst.GetValidCol() != D::cols) detail::fail("TGATHER", "a mask-pattern gather's dst must have every column valid");
    const int p = static_cast<int>(kPattern);
    const int period = p <= 2 ? 2 : p <= 6 ? 4 : 1;
    const int phase = p <= 2 ? p - 1 : p <= 6 ? p - 3 : 0;
    int64_t k = 0;
    for (int r = 0; r < src.GetValidRow(); ++r) {
        for (int c = phase; c < src.GetValidCol(); c += period) {
            if (k >= int64_t{D::rows} * D::cols) detail::fail("TGATHER", "the selected elements do not fit dst");
            std::memcpy(&dst.data()[k++], &src.at(r, c), sizeof(TD));
        }
    }
    pfsim::current_core().vector(D::kBytes + S::kBytes);
}

enum class CmpMode : uint8_t { EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5 };

// Compare gather, TGATHER<D, S, K, C, Tmp, CmpMode::GT|EQ>(dst, src, k, cdst,
// tmp, offset), as a2a3 runs it: for each valid row i of src, the numbers
// offset + i * S::cols + j of the valid columns j whose element is greater
// than (GT) or equal to (EQ) row i's threshold, in order, from dst's row i on
// (a row with more matches than dst has columns runs on into the next rows,
// which rewrite them from their start); cdst's element i = the count. The
// threshold is k's element i as a2a3 converts it: k's bytes read as int32 and
// rounded to float (float src), read as int16 and rounded to half (half src:
// a 32-bit k tile is read by its 16-bit halves), copied (int32 src). tmp is
// the scratch at its UB offset: the compare bitmap (rows of Tmp::cols bytes),
// then S::rows x S::cols indices, then S::rows thresholds; all three are
// written there, over whatever else lives in those bytes.
template <typename D, typename S, typename K, typename C, typename Tmp, CmpMode kMode, typename... Events>
PFSIM_TILE_COMPUTE void TGATHER(D& dst, S& src, K& k, C& cdst, Tmp& tmp, uint32_t offset, Events&...) {
    using TD = typename D::DType;
    using TS = typename S::DType;
    using TC = typename C::DType;
    static_assert(std::is_same_v<TD, int32_t> || std::is_same_v<TD, uint32_t>,
                  "TGATHER (compare): dst holds int32 or uint32 indices");
    static_assert(kMode == CmpMode::GT || kMode == CmpMode::EQ, "TGATHER (compare): CmpMode::GT or CmpMode::EQ only");
    static_assert(std::is_same_v<TS, float> || std::is_same_v<TS, half> ||
                      (std::is_same_v<TS, int32_t> && kMode == CmpMode::EQ),
                  "TGATHER (compare): src is float or half, or int32 with CmpMode::EQ");
    static_assert(detail::is_int_v<typename K::DType> && detail::is_int_v<TC>,
                  "TGATHER (compare): the thresholds and the counts are integer tiles");
    static_assert(D::type == TileType::Vec && S::type == TileType::Vec && K::type == TileType::Vec &&
                      C::type == TileType::Vec && Tmp::type == TileType::Vec && D::blayout == BLayout::RowMajor &&
                      S::blayout == BLayout::RowMajor,
                  "TGATHER (compare): vector (UB) tiles, dst and src row-major");
    const int rows = src.GetValidRow(), cols = src.GetValidCol();
    if (int64_t{Tmp::cols} * 8 < cols) detail::fail("TGATHER", "tmp's rows hold fewer bits than src has valid columns");
    if (Tmp::rows < rows) detail::fail("TGATHER", "tmp has fewer rows than src has valid rows");
    if (int64_t{C::rows} * C::cols < rows) detail::fail("TGATHER", "cdst has fewer elements than src has valid rows");
    constexpr uint64_t kThresholdWidth = std::is_same_v<TS, half> ? 2 : 4;
    if (K::kBytes < rows * (std::is_same_v<TS, int32_t> ? sizeof(typename K::DType) : kThresholdWidth)) {
        detail::fail("TGATHER", "k has fewer thresholds than src has valid rows");
    }
    pfsim::CoreOps& core = pfsim::current_core();
    const uint64_t bitmap_bytes = uint64_t{Tmp::rows} * Tmp::cols;
    const uint64_t index_bytes = uint64_t{S::rows} * S::cols * sizeof(TD);
    const uint64_t tmp_offset = static_cast<uint64_t>(reinterpret_cast<uint8_t*>(tmp.data()) - core.buffer(pfsim::Buffer::Ub, 0, 1));
    uint8_t* scratch = core.buffer(pfsim::Buffer::Ub, tmp_offset, bitmap_bytes + index_bytes + S::rows * sizeof(TS));
    TD* indices = reinterpret_cast<TD*>(scratch + bitmap_bytes);
    TS* thresholds = reinterpret_cast<TS*>(scratch + bitmap_bytes + index_bytes);
    for (int64_t n = 0; n < int64_t{S::rows} * S::cols; ++n) indices[n] = static_cast<TD>(offset + n);
    const uint8_t* kbytes = reinterpret_cast<const uint8_t*>(k.data());
    for (int i = 0; i < rows; ++i) {
        if constexpr (std::is_same_v<TS, float>) {
            int32_t v;
            std::memcpy(&v, kbytes + 4 * i, 4);
            thresholds[i] = static_cast<float>(v);
        } else if constexpr (std::is_same_v<TS, half>) {
            int16_t v;
            std::memcpy(&v, kbytes + 2 * i, 2);
            thresholds[i] = half(static_cast<float>(v));
        } else {
            thresholds[i] = static_cast<TS>(k.data()[i]);
        }
    }
    TD* out = dst.data();
    const int64_t out_elements = int64_t{D::rows} * D::cols;
    for (int i = 0; i < rows; ++i) {
        uint8_t* bits = scratch + uint64_t(i) * Tmp::cols;
        std::memset(bits, 0, (cols + 7) / 8);
        int64_t count = 0;
        for (int j = 0; j < cols; ++j) {
            const TS v = src.at(i, j);
            const bool hit = kMode == CmpMode::GT ? detail::widen(v) > detail::widen(thresholds[i])
                                                  : detail::widen(v) == detail::widen(thresholds[i]);
            if (!hit) continue;
            bits[j / 8] |= static_cast<uint8_t>(1u << (j % 8));
            const int64_t at = int64_t{i} * D::cols + count++;
            if (at >= out_elements) detail::fail("TGATHER", "a row's matches run past the end of dst");
            out[at] = indices[int64_t{i} * S::cols + j];
        }
        cdst.data()[i] = static_cast<TC>(static_cast<TD>(count));
    }
    core.scalar(uint64_t{S::rows} * S::cols + 4 * uint64_t(rows));  // the index fill and each row's threshold read
    core.vector(uint64_t(rows) * cols * (sizeof(TS) + sizeof(TD)));
}

}  // namespace pto
