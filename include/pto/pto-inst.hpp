// pfsim's <pto/pto-inst.hpp>: the PTO-ISA names a2a3 kernels use, executed by
// pfsim's simulated cores. Kernels written for the board against PTO-ISA and
// simpler's headers compile against this set unchanged (docs/kernels.md lists
// what is there and what is not yet).
//
// GM pointers (`__gm__ T*`) are host pointers into the simulated die's GM:
// dereferencing one reads and writes simulated GM through L2, timed on the
// scalar unit. Tile instructions move and compute the tile's values at the
// call and occupy their pipe for the time the instruction takes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "pfsim_kernel_abi.h"
#include "pfsim_cce_builtins.h"  // dcci, dsb
#include "pto/comm/pto_comm_inst.hpp"
#include "pto/pfsim_elements.hpp"

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef AICORE
#define AICORE
#endif

// Tile arithmetic touches on-core buffers only: it stays out of the per-access
// instrumentation that times a kernel's own GM loads and stores.
#define PFSIM_TILE_COMPUTE __attribute__((no_sanitize_thread))

// The no-argument CCE forms read the hardware's registers: the physical
// cluster the core sits in, its position in the cluster and the clusters
// launched -- not the task's logical block (use get_block_idx(args)).
inline int64_t get_block_idx() { return pfsim::current_core().block_idx(); }
inline int64_t get_block_num() { return pfsim::current_core().block_num(); }
// (Parenthesised: a kernel may have defined get_subblockid() as a macro first.)
// get_subblockid() is the sub-block register: the core's lane, or 0 (core.subblock_register).
inline int64_t(get_subblockid)() { return pfsim::current_core().subblock_register(); }

// System counter: 50 MHz ticks of simulated time; reading it is a scalar op
// (pfsim::CounterFastPath: a polling loop's reads mostly stay in this function).
// Not instrumented: the fast path touches the core's own state, never GM; hidden:
// each kernel object calls its own copy directly, not through the PLT.
__attribute__((no_sanitize_thread, visibility("hidden"))) inline uint64_t get_sys_cnt() {
    pfsim::CounterFastPath* const fast = pfsim::g_counter_fast;
    if (fast) {
        const uint64_t issue = *fast->issue_ps + fast->op_ps;
        if (issue <= fast->horizon_ps) {
            *fast->issue_ps = issue;
            *fast->scalar_busy_ps += fast->op_ps;
            return issue / pfsim::kSystemCounterTickPs;
        }
    }
    return pfsim::read_system_counter();
}

namespace pto {

constexpr int DYNAMIC = -1;

namespace detail {
template <int64_t... N>
constexpr int dynamic_count() { return ((N == DYNAMIC ? 1 : 0) + ... + 0); }

// Five extents, each static (a template argument) or set at construction.
template <int64_t... N>
struct Extents {
    static_assert(sizeof...(N) == 5, "shapes and strides have five dimensions");
    static constexpr int64_t static_values[5] = {N...};
    int64_t values[5] = {(N == DYNAMIC ? 1 : N)...};
    Extents() = default;
    template <typename... V, typename = std::enable_if_t<(sizeof...(V) > 0)>>
    explicit Extents(V... dynamic) {
        static_assert(sizeof...(V) == 5 || sizeof...(V) == dynamic_count<N...>(),
                      "give every dimension, or one value per dynamic (-1) dimension");
        const int64_t given[] = {static_cast<int64_t>(dynamic)...};
        if constexpr (sizeof...(V) == 5) {
            for (int i = 0; i < 5; ++i) {
                if (static_values[i] == DYNAMIC) values[i] = given[i];
            }
        } else {
            int k = 0;
            for (int i = 0; i < 5; ++i) {
                if (static_values[i] == DYNAMIC) values[i] = given[k++];
            }
        }
    }
};

[[noreturn]] inline void fail(const char* instruction, const char* what) {
    throw pfsim::KernelError(std::string(instruction) + ": " + what);
}

// Where [p, p + bytes) of a global tensor is: its GM address, and whether the
// pointer is into GM's uncached alias (gm.l2_cache_offset), through which a
// load reads around the L2.
struct GmPlace {
    uint64_t gm;
    bool around_l2;
};
PFSIM_TILE_COMPUTE inline GmPlace gm_place(const char* instruction, const volatile void* p, uint64_t bytes) {
    pfsim::CoreOps& core = pfsim::current_core();
    const uint64_t gm = core.gm_address(p, bytes);
    if (gm != pfsim::CoreOps::kNotGm) return {gm, false};
    const uint64_t alias = core.gm_alias_address(p, bytes);
    if (alias == pfsim::CoreOps::kNotGm) fail(instruction, "the global tensor is not in GM");
    return {alias, true};
}
}  // namespace detail

template <int64_t N1 = DYNAMIC, int64_t N2 = DYNAMIC, int64_t N3 = DYNAMIC, int64_t N4 = DYNAMIC,
          int64_t N5 = DYNAMIC>
struct Shape : detail::Extents<N1, N2, N3, N4, N5> {
    using detail::Extents<N1, N2, N3, N4, N5>::Extents;
    static constexpr int64_t staticShape[5] = {N1, N2, N3, N4, N5};
};
template <int64_t N1 = DYNAMIC, int64_t N2 = DYNAMIC, int64_t N3 = DYNAMIC, int64_t N4 = DYNAMIC,
          int64_t N5 = DYNAMIC>
struct Stride : detail::Extents<N1, N2, N3, N4, N5> {
    using detail::Extents<N1, N2, N3, N4, N5>::Extents;
    static constexpr int64_t staticStride[5] = {N1, N2, N3, N4, N5};
};

enum class Layout { ND, DN, NZ };

// A view of GM: element (i0..i4) at data + sum(i_k * stride_k).
template <typename Element, typename ShapeT, typename StrideT, Layout L = Layout::ND>
class GlobalTensor {
public:
    using DType = std::remove_cv_t<Element>;
    using Shape = ShapeT;
    using Stride = StrideT;
    static constexpr Layout layout = L;
    static constexpr bool kStaticShape = [] {
        for (int64_t d : ShapeT::staticShape) {
            if (d == DYNAMIC) return false;
        }
        return true;
    }();

    explicit GlobalTensor(__gm__ Element* data, const ShapeT& shape = ShapeT(), const StrideT& stride = StrideT())
        : data_(data), shape_(shape), stride_(stride) {}

    // (The view's own fields are the kernel's, never GM: out of the per-access
    // instrumentation, so that a TLOAD's per-row address calls no hook.)
    PFSIM_TILE_COMPUTE __gm__ Element* data() const { return data_; }
    PFSIM_TILE_COMPUTE int64_t GetShape(int dim) const { return shape_.values[dim]; }
    PFSIM_TILE_COMPUTE int64_t GetStride(int dim) const { return stride_.values[dim]; }
    int64_t elements() const {
        int64_t n = 1;
        for (int64_t d : shape_.values) n *= d;
        return n;
    }
    // The GM place of element (i0, i1, i2, i3, 0), checked to lie in GM (or its
    // uncached alias) with `bytes` after it.
    PFSIM_TILE_COMPUTE detail::GmPlace gm_address(const char* instruction, const int64_t index[4], uint64_t bytes) const {
        int64_t offset = 0;
        for (int k = 0; k < 4; ++k) offset += index[k] * stride_.values[k];
        return detail::gm_place(instruction, data_ + offset, bytes);
    }
    // The same view `bytes` further up the address space (a2a3's L2 hints:
    // the address plus the L2-cache offset).
    GlobalTensor moved_up(uint64_t bytes) const {
        return GlobalTensor(reinterpret_cast<__gm__ Element*>(reinterpret_cast<uintptr_t>(data_) + bytes), shape_, stride_);
    }

private:
    __gm__ Element* data_;
    ShapeT shape_;
    StrideT stride_;
};

enum class TileType { Vec, Mat, Left, Right, Acc };
enum class BLayout { RowMajor, ColMajor };
enum class SLayout { NoneBox, RowMajor, ColMajor };
enum class PadValue : uint64_t { Null = 0, Zero = 1, Max = 2, Min = 3 };
// TSTORE's write mode: AtomicAdd adds the tile to GM's values (in the L2).
enum class AtomicType : uint8_t { AtomicNone = 0, AtomicAdd = 1 };
enum class CompactMode { Null, Normal };

// A tile in an on-core buffer: Rows x Cols elements, of which the first
// RowValid x ColValid are valid (-1: set at construction).
template <TileType Type, typename T, int Rows, int Cols, BLayout BL = BLayout::RowMajor, int RowValid = Rows,
          int ColValid = Cols, SLayout SL = SLayout::NoneBox, int SFractalSize = 512, PadValue Pad = PadValue::Null,
          CompactMode Compact = CompactMode::Null>
class Tile {
public:
    using DType = T;
    static constexpr TileType type = Type;
    static constexpr int rows = Rows, cols = Cols;
    static constexpr BLayout blayout = BL;
    static constexpr SLayout slayout = SL;
    static constexpr int fractal_bytes = SFractalSize;
    static constexpr PadValue pad = Pad;
    static constexpr uint64_t kBytes = uint64_t{Rows} * Cols * sizeof(T);
    static_assert(RowValid == DYNAMIC || (RowValid >= 0 && RowValid <= Rows), "valid rows exceed the tile");
    static_assert(ColValid == DYNAMIC || (ColValid >= 0 && ColValid <= Cols), "valid columns exceed the tile");

    Tile() : valid_rows_(RowValid == DYNAMIC ? Rows : RowValid), valid_cols_(ColValid == DYNAMIC ? Cols : ColValid) {}
    Tile(int valid_rows, int valid_cols) : valid_rows_(valid_rows), valid_cols_(valid_cols) {
        if (valid_rows < 0 || valid_rows > Rows || valid_cols < 0 || valid_cols > Cols) {
            detail::fail("Tile", "dynamic valid size larger than the tile");
        }
    }
    // The one dynamic valid size of a tile whose other one is static.
    template <int R = RowValid, int C = ColValid, typename = std::enable_if_t<(R == DYNAMIC) != (C == DYNAMIC)>>
    explicit Tile(unsigned valid) : Tile(R == DYNAMIC ? int(valid) : R, C == DYNAMIC ? int(valid) : C) {}

    // Element `offset` of a vector tile in storage order, from the scalar unit.
    void SetValue(uint32_t offset, T value) { *element("SetValue", offset) = value; }
    T GetValue(uint32_t offset) { return *element("GetValue", offset); }

    static constexpr pfsim::Buffer buffer() {
        switch (Type) {
            case TileType::Vec: return pfsim::Buffer::Ub;
            case TileType::Mat: return pfsim::Buffer::L1;
            case TileType::Left: return pfsim::Buffer::L0a;
            case TileType::Right: return pfsim::Buffer::L0b;
            case TileType::Acc: return pfsim::Buffer::L0c;
        }
        return pfsim::Buffer::Ub;
    }
    void assign(uint64_t offset) {
        data_ = reinterpret_cast<T*>(pfsim::current_core().buffer(buffer(), offset, kBytes));
    }
    // TRESHAPE: this tile views another's bytes.
    void view(void* bytes) { data_ = static_cast<T*>(bytes); }
    PFSIM_TILE_COMPUTE T* data() const {
        if (!data_) detail::fail("tile", "used before TASSIGN gave it a place in its buffer");
        return data_;
    }
    // A dynamic valid size set after construction.
    void SetValidShape(int valid_rows, int valid_cols) {
        static_assert(RowValid == DYNAMIC || ColValid == DYNAMIC, "SetValidShape: the tile's valid size is static");
        if ((RowValid != DYNAMIC && valid_rows != RowValid) || (ColValid != DYNAMIC && valid_cols != ColValid)) {
            detail::fail("SetValidShape", "a static valid size cannot change");
        }
        if (valid_rows < 0 || valid_rows > Rows || valid_cols < 0 || valid_cols > Cols) {
            detail::fail("SetValidShape", "dynamic valid size larger than the tile");
        }
        valid_rows_ = valid_rows;
        valid_cols_ = valid_cols;
    }
    PFSIM_TILE_COMPUTE int GetValidRow() const { return valid_rows_; }
    PFSIM_TILE_COMPUTE int GetValidCol() const { return valid_cols_; }
    // Element (r, c) in the tile's block layout: data()[r * kRowStep + c * kColStep].
    static constexpr int64_t kRowStep = BL == BLayout::RowMajor ? Cols : 1;
    static constexpr int64_t kColStep = BL == BLayout::RowMajor ? 1 : Rows;
    PFSIM_TILE_COMPUTE T& at(int r, int c) const { return BL == BLayout::RowMajor ? data()[r * Cols + c] : data()[c * Rows + r]; }

private:
    T* element(const char* instruction, uint32_t offset) {
        static_assert(Type == TileType::Vec, "SetValue/GetValue: a vector (UB) tile only");
        if (offset >= uint64_t{Rows} * Cols) detail::fail(instruction, "the offset lies outside the tile");
        pfsim::current_core().scalar(1);
        return data() + offset;
    }
    T* data_ = nullptr;
    int valid_rows_, valid_cols_;
};

// On a2a3 the left operand is row-major (the CPU simulator differs).
template <typename T, int M, int K, int VM = M, int VK = K>
using TileLeft = Tile<TileType::Left, T, M, K, BLayout::RowMajor, VM, VK>;
template <typename T, int K, int N, int VK = K, int VN = N>
using TileRight = Tile<TileType::Right, T, K, N, BLayout::RowMajor, VK, VN>;
template <typename T, int M, int N, int VM = M, int VN = N>
using TileAcc = Tile<TileType::Acc, T, M, N, BLayout::RowMajor, VM, VN>;

template <typename TileT>
void TASSIGN(TileT& tile, uint64_t offset) {
    tile.assign(offset);
}

namespace detail {
// The element an atomic-add store of T adds (a2a3: f32, f16, bf16, s32, s16, s8).
template <typename T>
constexpr pfsim::AtomicElement atomic_element() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t> ||
                      std::is_same_v<T, int32_t> || std::is_same_v<T, int16_t> || std::is_same_v<T, int8_t>,
                  "TSTORE AtomicAdd: GM of float, half, bfloat16_t, int32_t, int16_t or int8_t");
    if constexpr (std::is_same_v<T, float>) return pfsim::AtomicElement::F32;
    if constexpr (std::is_same_v<T, half>) return pfsim::AtomicElement::F16;
    if constexpr (std::is_same_v<T, bfloat16_t>) return pfsim::AtomicElement::Bf16;
    if constexpr (std::is_same_v<T, int32_t>) return pfsim::AtomicElement::S32;
    if constexpr (std::is_same_v<T, int16_t>) return pfsim::AtomicElement::S16;
    return pfsim::AtomicElement::S8;
}

// f(r, c) for every r < rows and c < cols, in blocks of 8 x 8: moving elements
// between a row-major and a column-major layout then touches a few host cache
// lines at a time, not a line per element. (Code that runs per element calls
// no standard-library function: those are instrumented, so never inlined into
// PFSIM_TILE_COMPUTE code, and each would be a call through the PLT.)
template <typename F>
PFSIM_TILE_COMPUTE inline void in_blocks(int64_t rows, int64_t cols, F f) {
    for (int64_t r0 = 0; r0 < rows; r0 += 8) {
        for (int64_t c0 = 0; c0 < cols; c0 += 8) {
            const int64_t r1 = r0 + 8 < rows ? r0 + 8 : rows, c1 = c0 + 8 < cols ? c0 + 8 : cols;
            for (int64_t r = r0; r < r1; ++r) {
                for (int64_t c = c0; c < c1; ++c) f(r, c);
            }
        }
    }
}

// Eight runs of eight 4-byte elements, from[i * kFrom + j] for i, j < 8, to
// to[j * kTo + i]: an 8 x 8 transpose in vector loads, shuffles and stores
// (element by element, 64 loads and 64 stores). Each vector holds four
// elements of run i and the same four of run i + 4, so the shuffles stay
// within each half of a vector (those across halves are slow on some hosts).
// Shuffles move bits as they are (a NaN's too).
template <int64_t kTo, int64_t kFrom>
PFSIM_TILE_COMPUTE inline void transpose_8x8(void* to, const void* from) {
    typedef float Four __attribute__((vector_size(16), aligned(4), may_alias));
    typedef float Eight __attribute__((vector_size(32), aligned(4), may_alias));
    const float* const in = static_cast<const float*>(from);
    float* const out = static_cast<float*>(to);
    auto four = [in](int64_t i, int j) PFSIM_TILE_COMPUTE { return *reinterpret_cast<const Four*>(in + i * kFrom + j); };
#pragma GCC unroll 2
    for (int j = 0; j < 8; j += 4) {  // columns j..j+3 of runs 0..7
        Eight x[4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) x[i] = __builtin_shufflevector(four(i, j), four(i + 4, j), 0, 1, 2, 3, 4, 5, 6, 7);
        const Eight a0 = __builtin_shufflevector(x[0], x[1], 0, 8, 1, 9, 4, 12, 5, 13);
        const Eight a1 = __builtin_shufflevector(x[0], x[1], 2, 10, 3, 11, 6, 14, 7, 15);
        const Eight a2 = __builtin_shufflevector(x[2], x[3], 0, 8, 1, 9, 4, 12, 5, 13);
        const Eight a3 = __builtin_shufflevector(x[2], x[3], 2, 10, 3, 11, 6, 14, 7, 15);
        *reinterpret_cast<Eight*>(out + (j + 0) * kTo) = __builtin_shufflevector(a0, a2, 0, 1, 8, 9, 4, 5, 12, 13);
        *reinterpret_cast<Eight*>(out + (j + 1) * kTo) = __builtin_shufflevector(a0, a2, 2, 3, 10, 11, 6, 7, 14, 15);
        *reinterpret_cast<Eight*>(out + (j + 2) * kTo) = __builtin_shufflevector(a1, a3, 0, 1, 8, 9, 4, 5, 12, 13);
        *reinterpret_cast<Eight*>(out + (j + 3) * kTo) = __builtin_shufflevector(a1, a3, 2, 3, 10, 11, 6, 7, 14, 15);
    }
}

// The same for 2-byte elements: eight runs of eight, one 16-byte vector each, transposed
// by interleaving pairs of runs by 2, 4 and then 8 bytes.
template <int64_t kTo, int64_t kFrom>
PFSIM_TILE_COMPUTE inline void transpose_8x8_2(void* to, const void* from) {
    typedef uint16_t Run __attribute__((vector_size(16), aligned(2), may_alias));
    const uint16_t* const in = static_cast<const uint16_t*>(from);
    uint16_t* const out = static_cast<uint16_t*>(to);
    Run x[8], t[8], u[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) x[i] = *reinterpret_cast<const Run*>(in + i * kFrom);
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {  // t[i], t[i + 1]: columns 0-3 and 4-7 of runs i, i + 1, interleaved
        t[i] = __builtin_shufflevector(x[i], x[i + 1], 0, 8, 1, 9, 2, 10, 3, 11);
        t[i + 1] = __builtin_shufflevector(x[i], x[i + 1], 4, 12, 5, 13, 6, 14, 7, 15);
    }
#pragma GCC unroll 2
    for (int h = 0; h < 8; h += 4) {  // u[h + q]: columns 2q, 2q + 1 of runs h..h + 3
        u[h + 0] = __builtin_shufflevector(t[h], t[h + 2], 0, 1, 8, 9, 2, 3, 10, 11);
        u[h + 1] = __builtin_shufflevector(t[h], t[h + 2], 4, 5, 12, 13, 6, 7, 14, 15);
        u[h + 2] = __builtin_shufflevector(t[h + 1], t[h + 3], 0, 1, 8, 9, 2, 3, 10, 11);
        u[h + 3] = __builtin_shufflevector(t[h + 1], t[h + 3], 4, 5, 12, 13, 6, 7, 14, 15);
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {  // columns 2q and 2q + 1 of all eight runs
        *reinterpret_cast<Run*>(out + (2 * q) * kTo) = __builtin_shufflevector(u[q], u[q + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        *reinterpret_cast<Run*>(out + (2 * q + 1) * kTo) =
            __builtin_shufflevector(u[q], u[q + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    }
}

template <typename T, int64_t kTo, int64_t kFrom>
PFSIM_TILE_COMPUTE inline void transpose_block(T* to, const T* from) {
    if constexpr (sizeof(T) == 4) {
        transpose_8x8<kTo, kFrom>(to, from);
    } else {
        static_assert(sizeof(T) == 2, "transpose_block: 4-byte or 2-byte elements");
        transpose_8x8_2<kTo, kFrom>(to, from);
    }
}

// Whether two regions of `rows` rows lie apart: one's rows of `cols` elements
// `step` elements apart, the other's of `in_cols` `in_step` apart.
template <typename T, typename U>
PFSIM_TILE_COMPUTE inline bool apart(const T* out, int64_t step, int64_t cols, const U* in, int64_t in_step,
                                     int64_t in_cols, int64_t rows) {
    const auto first = reinterpret_cast<uintptr_t>(out), in_first = reinterpret_cast<uintptr_t>(in);
    const auto end = first + sizeof(T) * (static_cast<uint64_t>(rows - 1) * step + cols);
    const auto in_end = in_first + sizeof(U) * (static_cast<uint64_t>(rows - 1) * in_step + in_cols);
    return end <= in_first || in_end <= first;
}

// dst[r * kDr + c * kDc] = src[r * kSr + c * kSc] for every r < rows and c < cols,
// byte for byte, in blocks of 8 x 8; a whole block's 64 moves have their offsets
// known at compile time (in_blocks' per-element call found the tile's place
// again for every element). Between a row-major and a column-major layout of
// 4-byte or 2-byte elements each whole block is one transpose_8x8 (or _8x8_2), the
// blocks in the order that writes each host cache line of dst at once (along dst's
// contiguous dimension), the partial blocks at the edges after them.
template <typename T, int64_t kDr, int64_t kDc, int64_t kSr, int64_t kSc>
PFSIM_TILE_COMPUTE inline void copy_blocks(T* dst, const T* src, int64_t rows, int64_t cols) {
    if constexpr (kDc == 1 && kSc == 1) {
        // The same layout, rows back to back on both sides: a row is one copy, where the
        // two regions do not overlap (else the blocks below, in their order).
        if (rows > 0 && cols > 0 && apart(dst, kDr, cols, src, kSr, cols, rows)) {
            for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * kDr, src + r * kSr, sizeof(T) * static_cast<uint64_t>(cols));
            return;
        }
    }
    constexpr bool kTransposable = sizeof(T) == 4 || sizeof(T) == 2;
    constexpr bool kRowsToColumns = kTransposable && kSc == 1 && kDr == 1 && kDc != 1;
    constexpr bool kColumnsToRows = kTransposable && kSr == 1 && kDc == 1 && kDr != 1;
    const int64_t whole_rows = kRowsToColumns || kColumnsToRows ? rows / 8 * 8 : 0;
    const int64_t whole_cols = kRowsToColumns || kColumnsToRows ? cols / 8 * 8 : 0;
    if constexpr (kRowsToColumns) {
        for (int64_t c0 = 0; c0 < whole_cols; c0 += 8) {
            for (int64_t r0 = 0; r0 < whole_rows; r0 += 8) {
                transpose_block<T, kDc, kSr>(dst + r0 + c0 * kDc, src + r0 * kSr + c0);
            }
        }
    } else if constexpr (kColumnsToRows) {
        for (int64_t r0 = 0; r0 < whole_rows; r0 += 8) {
            for (int64_t c0 = 0; c0 < whole_cols; c0 += 8) {
                transpose_block<T, kDr, kSc>(dst + r0 * kDr + c0, src + r0 + c0 * kSc);
            }
        }
    }
    for (int64_t r0 = 0; r0 < rows; r0 += 8) {
        for (int64_t c0 = 0; c0 < cols; c0 += 8) {
            if (r0 < whole_rows && c0 < whole_cols) continue;  // transposed above
            T* const d = dst + r0 * kDr + c0 * kDc;
            const T* const s = src + r0 * kSr + c0 * kSc;
            if (r0 + 8 <= rows && c0 + 8 <= cols) {
#pragma GCC unroll 8
                for (int64_t r = 0; r < 8; ++r) {
#pragma GCC unroll 8
                    for (int64_t c = 0; c < 8; ++c) std::memcpy(d + r * kDr + c * kDc, s + r * kSr + c * kSc, sizeof(T));
                }
                continue;
            }
            const int64_t nr = rows - r0 < 8 ? rows - r0 : 8, nc = cols - c0 < 8 ? cols - c0 : 8;
            for (int64_t r = 0; r < nr; ++r) {
                for (int64_t c = 0; c < nc; ++c) std::memcpy(d + r * kDr + c * kDc, s + r * kSr + c * kSc, sizeof(T));
            }
        }
    }
}

// One instruction's GM transfers. move: bytes back to back in the tile and in
// GM. staged_rows: `rows` runs of `cols` elements, each back to back in GM,
// element (r, c) of them the tile's element (r, c), gathered eight runs at a
// time into a staging run for a store, scattered from it after a load;
// staged_columns likewise by columns, in one run. staged: `n` tile elements back to back in GM but not in the tile
// (element(i) is the i-th), gathered into a staging run for a store,
// scattered from it after a load.
// A load from GM's uncached alias reads around the L2; a store to it is
// refused (not modelled).
template <bool kStore, typename T, AtomicType kAtomic, typename GlobalElement>
class Mover {
public:
    explicit Mover(const char* instruction) : instruction_(instruction) {}
    // (Out of the per-access instrumentation: it reads only the mover's own fields.)
    PFSIM_TILE_COMPUTE void move(GmPlace place, uint8_t* at, uint64_t bytes) {
        if (kStore && place.around_l2) {
            fail(instruction_, "a store through GM's uncached alias (gm.l2_cache_offset) is not modelled");
        }
        if constexpr (kAtomic == AtomicType::AtomicAdd) {
            core_.store_add(place.gm, at, bytes, atomic_element<GlobalElement>());
        } else if (kStore) {
            core_.store(place.gm, at, bytes);
        } else if (place.around_l2) {
            core_.load_around_l2(place.gm, at, bytes);
        } else {
            core_.load(place.gm, at, bytes);
        }
    }
    // (Its loops touch the tile and the staging run, never GM: out of the
    // per-access instrumentation, as element() must be to inline here.)
    template <typename Element>
    PFSIM_TILE_COMPUTE void staged(GmPlace gm, int64_t n, Element element) {
        staging_.resize(static_cast<uint64_t>(n) * sizeof(T));
        uint8_t* const run = staging_.data();  // (once: a call each time, see in_blocks)
        for (int64_t i = 0; kStore && i < n; ++i) std::memcpy(run + i * sizeof(T), &element(i), sizeof(T));
        move(gm, run, staging_.size());
        for (int64_t i = 0; !kStore && i < n; ++i) std::memcpy(&element(i), run + i * sizeof(T), sizeof(T));
    }
    // Eight rows at a time through a run of eight rows (it stays in the host's
    // first-level cache): each row's transfer in row order as a whole-tile run
    // would make them, each block of eight rows transposed once, straight from
    // or into the tile.
    // next_place(): the next row's GM place (rows 0, 1, ... in turn).
    template <typename TileT, typename NextPlace>
    PFSIM_TILE_COMPUTE void staged_rows(TileT& tile, int64_t rows, int64_t cols, NextPlace next_place) {
        if (rows == 0 || cols == 0) return;
        // Row r of the run at first + r * TileT::cols (a compile-time step, as the tile's).
        constexpr int64_t kRun = TileT::cols, kTr = TileT::kRowStep, kTc = TileT::kColStep, kRows = 8;
        // (Not staging_: a vector's zero fill is instrumented code, a hook per byte.)
        const std::unique_ptr<uint8_t[]> run(new uint8_t[static_cast<uint64_t>(kRows) * kRun * sizeof(T)]);
        T* const first = reinterpret_cast<T*>(run.get());
        T* const tile_first = tile.data();
        const uint64_t row_bytes = static_cast<uint64_t>(cols) * sizeof(T);
        for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
            const int64_t n = rows - r0 < kRows ? rows - r0 : kRows;
            if (kStore) copy_blocks<T, kRun, 1, kTr, kTc>(first, tile_first + r0 * kTr, n, cols);
            for (int64_t r = 0; r < n; ++r) move(next_place(), reinterpret_cast<uint8_t*>(first + r * kRun), row_bytes);
            if (!kStore) copy_blocks<T, kTr, kTc, kRun, 1>(tile_first + r0 * kTr, first, n, cols);
        }
    }
    // As staged_rows, with `cols` runs of `rows` elements, run c the tile's column c (a DN tensor's).
    template <typename TileT, typename Place>
    PFSIM_TILE_COMPUTE void staged_columns(TileT& tile, int64_t rows, int64_t cols, Place place) {
        constexpr int64_t kRun = TileT::rows, kTr = TileT::kRowStep, kTc = TileT::kColStep;
        const std::unique_ptr<uint8_t[]> run(new uint8_t[static_cast<uint64_t>(cols) * kRun * sizeof(T) + 1]);
        T* const first = reinterpret_cast<T*>(run.get());
        const bool any = rows > 0 && cols > 0;  // (an empty tile's data() is never asked for)
        if (kStore && any) copy_blocks<T, 1, kRun, kTr, kTc>(first, tile.data(), rows, cols);
        const uint64_t column_bytes = static_cast<uint64_t>(rows) * sizeof(T);
        for (int64_t c = 0; c < cols; ++c) move(place(c), reinterpret_cast<uint8_t*>(first + c * kRun), column_bytes);
        if (!kStore && any) copy_blocks<T, kTr, kTc, 1, kRun>(tile.data(), first, rows, cols);
    }

private:
    const char* instruction_;
    pfsim::CoreOps& core_ = pfsim::current_core();
    std::vector<uint8_t> staging_;
};

// An NZ global tensor: shape (S0, S1, S2, 16, C0) holds a matrix of S2 x 16
// rows and S0 x S1 x C0 columns in 16 x C0 fractals (C0: 32 bytes), a
// column of fractals after another. Element (r, c) is at index
// (cb / S1, cb % S1, r / 16, r % 16, c % C0) with cb = c / C0. A vector or
// L1 tile it moves to or from is NZ too (BLayout::ColMajor, SLayout::RowMajor);
// an L0C tile stores to it through the fixpipe's layout conversion. Each
// column of fractals moves as one run when its rows lie back to back, else
// row by row; only valid elements move.
template <bool kStore, typename TileT, typename GlobalT, AtomicType kAtomic>
void move_nz(const char* instruction, TileT& tile, const GlobalT& global) {
    using T = typename TileT::DType;
    static_assert(TileT::type == TileType::Acc || (TileT::blayout == BLayout::ColMajor && TileT::slayout == SLayout::RowMajor),
                  "TLOAD/TSTORE: an NZ global tensor moves to or from an NZ tile (BLayout::ColMajor, SLayout::RowMajor)");
    static_assert(TileT::type != TileType::Acc || kStore, "TLOAD: L0C (TileAcc) is not loaded from GM");
    const int64_t fractal_rows = global.GetShape(3), c0 = global.GetShape(4);
    if (global.GetStride(4) != 1) fail(instruction, "an NZ global tensor's last dimension is not contiguous");
    if (fractal_rows != 16 || c0 * static_cast<int64_t>(sizeof(T)) != 32) {
        fail(instruction, "an NZ global tensor's last two dimensions are one fractal: 16 rows of 32 bytes");
    }
    const int64_t vr = tile.GetValidRow(), vc = tile.GetValidCol();
    const int64_t column_blocks = global.GetShape(0) * global.GetShape(1);
    if (vr > global.GetShape(2) * fractal_rows || vc > column_blocks * c0) {
        fail(instruction, "the tile is larger than the NZ global tensor");
    }
    Mover<kStore, T, kAtomic, typename GlobalT::DType> mover(instruction);
    const bool rows_back_to_back = global.GetStride(3) == c0 && global.GetStride(2) == fractal_rows * c0;
    for (int64_t cb = 0; cb * c0 < vc; ++cb) {
        const int64_t first = cb * c0, n = std::min(c0, vc - first);
        auto address = [&](int64_t r, int64_t elements) {
            const int64_t index[4] = {cb / global.GetShape(1), cb % global.GetShape(1), r / fractal_rows, r % fractal_rows};
            return global.gm_address(instruction, index, static_cast<uint64_t>(elements) * sizeof(T));
        };
        if (rows_back_to_back && n == c0) {
            mover.staged(address(0, vr * c0), vr * c0, [&](int64_t i) PFSIM_TILE_COMPUTE -> T& {
                return tile.at(static_cast<int>(i / c0), static_cast<int>(first + i % c0));
            });
            continue;
        }
        for (int64_t r = 0; r < vr; ++r) {
            mover.staged(address(r, n), n, [&](int64_t i) PFSIM_TILE_COMPUTE -> T& { return tile.at(static_cast<int>(r), static_cast<int>(first + i)); });
        }
    }
}

// GM <-> tile. A vector tile (one row or one column) moves its valid elements
// from the innermost dimension; any other tile moves its valid rows, row r
// from global (i0..i3) = r unravelled over dimensions 0..3, each row the valid
// columns of dimension 4. Rows that lie back to back move as one transfer.
// A DN tensor moves column by column, an NZ one by move_nz.
template <bool kStore, typename TileT, typename GlobalT, AtomicType kAtomic = AtomicType::AtomicNone>
void move_tile(const char* instruction, TileT& tile, const GlobalT& global) {
    using T = typename TileT::DType;
    static_assert(sizeof(T) == sizeof(typename GlobalT::DType), "tile and global tensor element sizes differ");
    constexpr bool kVector = TileT::rows == 1 || TileT::cols == 1;
    constexpr bool kColMajor = !kVector && TileT::blayout == BLayout::ColMajor;
    constexpr bool kDn = GlobalT::layout == Layout::DN;
    if constexpr (GlobalT::layout == Layout::NZ) {
        move_nz<kStore, TileT, GlobalT, kAtomic>(instruction, tile, global);
        return;
    }
    if (!kDn && global.GetStride(4) != 1) fail(instruction, "the global tensor's last dimension is not contiguous");
    const int64_t rows = kVector ? 1 : tile.GetValidRow();
    const int64_t cols = kVector ? int64_t{tile.GetValidRow()} * tile.GetValidCol() : tile.GetValidCol();
    int64_t outer = 1;
    for (int k = 0; k < 4; ++k) outer *= global.GetShape(k);
    if (!kDn && cols > global.GetShape(4)) fail(instruction, "the tile's rows are longer than the global tensor's last dimension");
    if (!kDn && rows > outer) fail(instruction, "the tile has more rows than the global tensor");
    auto* local = reinterpret_cast<uint8_t*>(tile.data());
    const uint64_t row_bytes = static_cast<uint64_t>(cols) * sizeof(T);
    const uint64_t local_row = static_cast<uint64_t>(TileT::cols) * sizeof(T);
    Mover<kStore, T, kAtomic, typename GlobalT::DType> mover(instruction);
    // Tile row r's place in GM: r unravelled over dimensions 0..3. Rows are
    // asked for in turn, so each row's index is the last one's plus one,
    // carried (no division per row).
    int64_t index[4] = {0, 0, 0, 0};
    auto next_row_address = [&]() PFSIM_TILE_COMPUTE {
        const GmPlace place = global.gm_address(instruction, index, row_bytes);
        for (int k = 3; k >= 0 && ++index[k] == global.GetShape(k); --k) index[k] = 0;
        return place;
    };
    if constexpr (kDn) {
        // Column-major in GM (dimension 3 contiguous): each valid column of the
        // tile moves as one run.
        if (global.GetStride(3) != 1) fail(instruction, "a DN global tensor's dimension 3 is not contiguous");
        const int64_t vr = tile.GetValidRow(), vc = tile.GetValidCol();
        if (vr > global.GetShape(3) || vc > global.GetShape(4)) fail(instruction, "the tile is larger than the DN global tensor");
        mover.staged_columns(tile, vr, vc, [&](int64_t c) PFSIM_TILE_COMPUTE {
            return gm_place(instruction, global.data() + c * global.GetStride(4), static_cast<uint64_t>(vr) * sizeof(T));
        });
        return;
    }
    if constexpr (kColMajor) {
        // A column-major tile (an L1 operand, say) holds row r's elements a
        // column apart: each row moves as one run.
        mover.staged_rows(tile, rows, cols, next_row_address);
        return;
    }
    const bool packed = rows == 1 || (cols == TileT::cols && global.GetStride(3) == cols && rows <= global.GetShape(3));
    if (packed) {
        const int64_t origin[4] = {0, 0, 0, 0};
        mover.move(global.gm_address(instruction, origin, row_bytes * static_cast<uint64_t>(rows)), local,
             row_bytes * static_cast<uint64_t>(rows));
        return;
    }
    for (int64_t r = 0; r < rows; ++r) mover.move(next_row_address(), local + static_cast<uint64_t>(r) * local_row, row_bytes);
}

}  // namespace detail

// GM -> tile (MTE2, through L2) and tile -> GM (MTE3). A global tensor in
// GM's uncached alias (its pointer offset by get_l2_cache_offset(args)) loads
// around the L2: nothing allocated, nothing evicted.
template <typename TileT, typename GlobalT>
void TLOAD(TileT& tile, const GlobalT& global) {
    detail::move_tile<false>("TLOAD", tile, global);
}

// TLOAD's L2 hint (PTO-ISA from its PR !1582 on; not in the PTO-ISA simpler
// pins). On a2a3 the Normal hints are the default allocating load, and the
// NotAlloc ones all read through GM's uncached alias: the source address plus
// the die's L2-cache offset (gm.l2_cache_offset; 0: an ordinary load).
enum class TLoadL2Hint : uint8_t {
    NormalFirstVictim = 0,
    NormalLastVictim = 1,
    NormalPersistent = 2,
    NotAllocKeep = 4,
    NotAllocClean = 5,
    NotAllocDrop = 6,
};
template <TLoadL2Hint kHint, typename TileT, typename GlobalT, typename... WaitEvents>
void TLOAD(TileT& tile, const GlobalT& global, WaitEvents&...) {
    constexpr bool kNotAlloc = kHint == TLoadL2Hint::NotAllocKeep || kHint == TLoadL2Hint::NotAllocClean ||
                               kHint == TLoadL2Hint::NotAllocDrop;
    static_assert(kNotAlloc || kHint == TLoadL2Hint::NormalFirstVictim || kHint == TLoadL2Hint::NormalLastVictim ||
                      kHint == TLoadL2Hint::NormalPersistent,
                  "TLOAD: not a TLoadL2Hint");
    if constexpr (kNotAlloc) {
        detail::move_tile<false>("TLOAD", tile, global.moved_up(pfsim::current_core().l2_cache_offset()));
    } else {
        detail::move_tile<false>("TLOAD", tile, global);
    }
}
template <typename GlobalT, typename TileT>
void TSTORE(const GlobalT& global, const TileT& tile) {
    detail::move_tile<true>("TSTORE", const_cast<TileT&>(tile), global);
}
// TSTORE<TileT, GlobalT, AtomicType::AtomicAdd>(global, tile): GM += tile,
// element by element, atomic against every other core (split-K partial sums).
template <typename TileT, typename GlobalT, AtomicType kAtomic, typename... Events>
void TSTORE(const GlobalT& global, const TileT& tile, Events&...) {
    detail::move_tile<true, TileT, GlobalT, kAtomic>("TSTORE", const_cast<TileT&>(tile), global);
}

}  // namespace pto

#include "pto/pfsim_tile_ops.hpp"  // the vector instructions
#include "pto/pfsim_sort.hpp"      // TSORT32, TMRGSORT

namespace pto {

// Cube: acc (M x N, L0C) = [acc_in +] left (M x K, L0A) x right (K x N, L0B)
// [+ bias], over the valid region, accumulated in k order: in float for
// half, bfloat16_t and float operands, exactly (int64, then wrapped) for int8.
namespace detail {
// For each of kRows rows r: acc[r * acc_step + [0, 8 * kGroups)) += the sum over k in
// order of left[r * left_step + k] * right[k * right_step + j], each product and each
// sum rounded to float: eight columns a vector, kGroups vectors in flight per row (each
// column's additions are one chain; several chains keep the host's adders busy), each
// vector of `right` loaded once for the kRows rows. Kernels compile with -mf16c where
// the host has it (which implies AVX: a vector a register) and -ffp-contract=off (never
// a fused multiply-add).
template <int kRows, int kGroups>
PFSIM_TILE_COMPUTE inline void sum_columns(float* acc, int acc_step, const float* left, int left_step,
                                           const float* right, int right_step, int k_valid) {
    typedef float Lanes __attribute__((vector_size(32), aligned(4), may_alias));
    Lanes s[kRows][kGroups];  // (the loops over r and g unrolled: s stays in registers)
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
        for (int g = 0; g < kGroups; ++g) s[r][g] = *reinterpret_cast<const Lanes*>(acc + r * acc_step + 8 * g);
    }
    for (int k = 0; k < k_valid; ++k) {
        const float* const rk = right + static_cast<size_t>(k) * right_step;
        Lanes v[kGroups];
#pragma GCC unroll 8
        for (int g = 0; g < kGroups; ++g) v[g] = *reinterpret_cast<const Lanes*>(rk + 8 * g);
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
            const float x = left[static_cast<size_t>(r) * left_step + k];
#pragma GCC unroll 8
            for (int g = 0; g < kGroups; ++g) s[r][g] += x * v[g];
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
        for (int g = 0; g < kGroups; ++g) *reinterpret_cast<Lanes*>(acc + r * acc_step + 8 * g) = s[r][g];
    }
}

// dst[i] = widen(src[i * kStep]) for i in [0, count). Adjacent bfloat16_t elements go
// kLanes at a time: a bfloat16_t widens to float by its 16 bits moved to the top of 32,
// the same bits widen() gives.
template <int64_t kStep, typename T>
PFSIM_TILE_COMPUTE inline void widen_row(compute_t<T>* dst, const T* src, int count) {
    int i = 0;
    if constexpr (std::is_same_v<T, bfloat16_t> && kStep == 1) {
        typedef uint16_t Bits16 __attribute__((vector_size(2 * kLanes), aligned(2), may_alias));
        typedef uint32_t Bits32 __attribute__((vector_size(4 * kLanes), aligned(4), may_alias));
        static_assert(sizeof(bfloat16_t) == 2, "a bfloat16_t is its 16 bits");
        for (; i + kLanes <= count; i += kLanes) {
            const Bits32 bits = __builtin_convertvector(*reinterpret_cast<const Bits16*>(src + i), Bits32) << 16;
            std::memcpy(dst + i, &bits, sizeof bits);
        }
    }
    for (; i < count; ++i) dst[i] = widen(src[static_cast<size_t>(i) * kStep]);
}

// A product of at least this many multiply-adds sums its rows on two host threads
// (pfsim::on_two_threads) where the process has a helper thread. On a quiet host a
// 64 x 64 x 128 fp32 product (2^19) gains by it and a 16 x 128 x 128 bf16 one (2^18)
// loses: the hand-over's wake costs about what such a product takes
// (bench/tile_threads.sh, docs/performance.md).
constexpr uint64_t kMatmulShareMacs = 1 << 19;

// on_two_threads' call of a piece of `rows`, a matmul's sum_rows.
template <typename Rows>
PFSIM_TILE_COMPUTE void call_rows(void* rows, int thread, int begin, int end) {
    (*static_cast<Rows*>(rows))(thread, begin, end);
}

template <typename C, typename CI, typename A, typename B, typename Bias>
PFSIM_TILE_COMPUTE void matmul(const char* instruction, C& c, const CI* c_in, const A& a, const B& b, const Bias* bias) {
    using TA = typename A::DType;
    static_assert(std::is_same_v<TA, typename B::DType>, "TMATMUL: the left and right operands differ in type");
    static_assert(A::cols == B::rows && C::rows == A::rows && C::cols == B::cols, "TMATMUL: shapes do not chain");
    constexpr bool kInt = std::is_same_v<TA, int8_t>;
    static_assert(kInt ? std::is_same_v<typename C::DType, int32_t> : std::is_same_v<typename C::DType, float>,
                  "TMATMUL: the accumulator is float for half, bfloat16_t and float operands, int32_t for int8_t");
    static_assert(kInt || is_float_v<TA>, "TMATMUL: operands are half, bfloat16_t, float or int8_t");
    static_assert(A::type == TileType::Left && B::type == TileType::Right && C::type == TileType::Acc,
                  "TMATMUL: operands in L0A (TileLeft) and L0B (TileRight), the result in L0C (TileAcc)");
    const int m_valid = a.GetValidRow(), k_valid = a.GetValidCol(), n_valid = b.GetValidCol();
    if (b.GetValidRow() != k_valid) fail(instruction, "the left operand's valid columns differ from the right's valid rows");
    using Acc = std::conditional_t<kInt, int64_t, float>;
    // Each result element sums its products in k order, one rounding per product
    // and per addition, as a plain loop does. Columns go eight at a time through
    // vector arithmetic (the same IEEE operations, lane by lane): sum_columns.
    // The operands are read in place where they are float, each row's elements
    // adjacent; else each element is widened once (exactly) into rows of its own.
    // The sums run in the result tile itself where it starts from zero or from
    // its own values (TMATMUL, TMATMUL_ACC c += a x b) with its rows' elements
    // adjacent, whatever the operands' type; else in kBlock rows of their own,
    // each started from c_in.
    constexpr bool kReadInPlace = std::is_same_v<TA, float> && A::kColStep == 1 && B::kColStep == 1;
    constexpr bool kMaySumInPlace = !kInt && C::kColStep == 1 && std::is_same_v<CI, C>;
    const bool some = m_valid > 0 && n_valid > 0;
    const TA* const in_a = m_valid > 0 && k_valid > 0 ? a.data() : nullptr;
    const TA* const in_b = k_valid > 0 && n_valid > 0 ? b.data() : nullptr;
    const auto* const in_c = c_in && some ? c_in->data() : nullptr;
    auto* const out = some ? c.data() : nullptr;
    bool sum_in_place = false;
    if constexpr (kMaySumInPlace) sum_in_place = !in_c || static_cast<const void*>(in_c) == static_cast<const void*>(out);
    const size_t mk = kReadInPlace ? 0 : static_cast<size_t>(m_valid) * k_valid;
    const size_t kn = kReadInPlace ? 0 : static_cast<size_t>(k_valid) * n_valid;
    // Result rows summed together (each vector of right loaded once for them): three rows of
    // four vectors, twelve sums in registers, the fastest of the shapes tried on an AVX host.
    constexpr int kBlock = kInt ? 1 : 3;
    const size_t block = sum_in_place ? 0 : static_cast<size_t>(kBlock) * n_valid;
    const size_t biased = bias && some ? static_cast<size_t>(n_valid) : 0;
    // (Not a std::vector: its zero fill is instrumented code, a hook per element.) Scratch
    // rows for each of the two threads that may sum (on_two_threads), then the bias row.
    const std::unique_ptr<Acc[]> widened(mk + kn + 2 * block + biased ? new Acc[mk + kn + 2 * block + biased] : nullptr);
    const Acc* left;
    const Acc* right;
    int left_step, right_step;  // a row's step in left and in right
    if constexpr (kReadInPlace) {
        left = in_a, right = in_b, left_step = A::kRowStep, right_step = B::kRowStep;
    } else {
        Acc* const l = widened.get();
        Acc* const r = l + mk;
        // The tiles' elements by their compile-time steps (at() found each tile's place per
        // element); each tile's place asked for only where a loop below touches it.
        for (int m = 0; in_a && m < m_valid; ++m) widen_row<A::kColStep>(l + m * k_valid, in_a + m * A::kRowStep, k_valid);
        for (int k = 0; in_b && k < k_valid; ++k) widen_row<B::kColStep>(r + k * n_valid, in_b + k * B::kRowStep, n_valid);
        left = l, right = r, left_step = k_valid, right_step = n_valid;
    }
    Acc* const scratch = widened.get() + mk + kn;
    Acc* const bias_row = scratch + 2 * block;
    for (size_t j = 0; j < biased; ++j) bias_row[j] = static_cast<Acc>(widen(bias->at(0, static_cast<int>(j))));
    // The result rows by whole blocks of kBlock, the rows after the last whole block with it:
    // blocks [block_begin, block_end), each row's sums the same whichever thread sums it.
    const int blocks = m_valid / kBlock > 0 ? m_valid / kBlock : 1;
    auto sum_rows = [&](int thread, int block_begin, int block_end) PFSIM_TILE_COMPUTE {
        const int m_end = block_end == blocks ? m_valid : block_end * kBlock;
        for (int m = block_begin * kBlock; m < m_end;) {
            const int rows = m + kBlock <= m_end ? kBlock : 1;
            Acc* acc = nullptr;  // the block's rows of sums
            int acc_step = 0;
            if constexpr (kMaySumInPlace) {
                if (sum_in_place) {
                    acc = out + static_cast<size_t>(m) * C::kRowStep, acc_step = C::kRowStep;
                    for (int r = 0; r < rows && !in_c; ++r) {
                        for (int j = 0; j < n_valid; ++j) acc[static_cast<size_t>(r) * acc_step + j] = 0.0f;
                    }
                }
            }
            if (!sum_in_place) {
                acc = scratch + thread * block, acc_step = n_valid;
                for (int r = 0; r < rows; ++r) {
                    for (int n = 0; n < n_valid; ++n) {
                        acc[r * n_valid + n] = in_c ? static_cast<Acc>(in_c[(m + r) * CI::kRowStep + n * CI::kColStep]) : Acc{0};
                    }
                }
            }
            const Acc* const row = k_valid > 0 ? left + static_cast<size_t>(m) * left_step : left;  // (left: none at k_valid 0)
            int n = 0;
            if constexpr (!kInt) {
                if (k_valid == 0) {
                    n = n_valid;  // no products: each sum is its start value
                } else if (rows == kBlock) {
                    for (; n + 32 <= n_valid; n += 32) sum_columns<kBlock, 4>(acc + n, acc_step, row, left_step, right + n, right_step, k_valid);
                    for (; n + 16 <= n_valid; n += 16) sum_columns<kBlock, 2>(acc + n, acc_step, row, left_step, right + n, right_step, k_valid);
                    for (; n + 8 <= n_valid; n += 8) sum_columns<kBlock, 1>(acc + n, acc_step, row, left_step, right + n, right_step, k_valid);
                } else {
                    for (; n + 64 <= n_valid; n += 64) sum_columns<1, 8>(acc + n, acc_step, row, left_step, right + n, right_step, k_valid);
                    for (; n + 8 <= n_valid; n += 8) sum_columns<1, 1>(acc + n, acc_step, row, left_step, right + n, right_step, k_valid);
                }
            }
            for (int r = 0; r < rows; ++r) {
                Acc* const acc_r = acc + static_cast<size_t>(r) * acc_step;
                for (int j = n; j < n_valid; ++j) {
                    Acc sum = acc_r[j];
                    for (int k = 0; k < k_valid; ++k) {
                        sum += row[static_cast<size_t>(r) * left_step + k] * right[static_cast<size_t>(k) * right_step + j];
                    }
                    acc_r[j] = sum;
                }
                if (sum_in_place && !bias) continue;  // the sums are the result
                for (int j = 0; j < n_valid; ++j) {
                    Acc sum = acc_r[j];
                    if (bias) sum += bias_row[j];
                    out[(m + r) * C::kRowStep + j * C::kColStep] = narrow<typename C::DType>(sum);
                }
            }
            m += rows;
        }
    };
    if (some && uint64_t{static_cast<uint32_t>(m_valid)} * n_valid * k_valid >= kMatmulShareMacs) {
        pfsim::on_two_threads(&call_rows<decltype(sum_rows)>, &sum_rows, blocks);
    } else if (some) {
        sum_rows(0, 0, blocks);
    }
    const pfsim::CubeOperand operand = kInt ? pfsim::CubeOperand::Int8
                                       : std::is_same_v<TA, float> ? pfsim::CubeOperand::Fp32
                                                                   : pfsim::CubeOperand::Fp16;
    pfsim::current_core().cube(uint64_t{C::rows} * C::cols * A::cols, operand);
}
}  // namespace detail
template <typename C, typename A, typename B, typename... Events>
void TMATMUL(C& c, A& a, B& b, Events&...) {
    detail::matmul("TMATMUL", c, static_cast<const C*>(nullptr), a, b, static_cast<const C*>(nullptr));
}
// c += a x b.
template <typename C, typename A, typename B, typename... Events>
void TMATMUL_ACC(C& c, A& a, B& b, Events&...) {
    detail::matmul("TMATMUL_ACC", c, &c, a, b, static_cast<const C*>(nullptr));
}
// c = c_in + a x b.
template <typename C, typename CI, typename A, typename B, typename... Events,
          typename = std::enable_if_t<B::type == TileType::Right>>
void TMATMUL_ACC(C& c, CI& c_in, A& a, B& b, Events&...) {
    detail::matmul("TMATMUL_ACC", c, &c_in, a, b, static_cast<const C*>(nullptr));
}
// c = a x b + bias (one row, added to every row).
template <typename C, typename A, typename B, typename Bias, typename... Events>
void TMATMUL_BIAS(C& c, A& a, B& b, Bias& bias, Events&...) {
    detail::matmul("TMATMUL_BIAS", c, static_cast<const C*>(nullptr), a, b, &bias);
}

// Tile -> tile across buffers: dst(r, c) = src(row + r, col + c) over dst's
// valid region, converted to dst's type (rounded to nearest even) where the
// types differ. L1 -> L0A/L0B/UB on MTE1, L0C -> L1/UB on FIX, UB -> UB on the
// vector pipe; the time is the destination's bytes at that path's rate.
namespace detail {
template <typename D, typename S>
PFSIM_TILE_COMPUTE void move_between(const char* instruction, D& dst, const S& src, int row, int col) {
    using TD = typename D::DType;
    using TS = typename S::DType;
    static_assert(std::is_same_v<TD, TS> || (is_float_v<TD> && is_float_v<TS>),
                  "TMOV/TEXTRACT: the tiles' element types differ (only float types convert)");
    if (row < 0 || col < 0 || row + dst.GetValidRow() > S::rows || col + dst.GetValidCol() > S::cols) {
        fail(instruction, "the part taken lies outside the source tile");
    }
    if constexpr (std::is_same_v<TD, TS>) {
        if (dst.GetValidRow() > 0 && dst.GetValidCol() > 0) {
            const TS* const from = src.data() + row * S::kRowStep + col * S::kColStep;
            copy_blocks<TD, D::kRowStep, D::kColStep, S::kRowStep, S::kColStep>(dst.data(), from, dst.GetValidRow(),
                                                                                dst.GetValidCol());
        }
    } else {
        in_blocks(dst.GetValidRow(), dst.GetValidCol(), [&](int64_t r64, int64_t c64) PFSIM_TILE_COMPUTE {
            const int r = static_cast<int>(r64), c = static_cast<int>(c64);
            dst.at(r, c) = narrow<TD>(widen(src.at(row + r, col + c)));
        });
    }
    pfsim::current_core().move_local(S::buffer(), D::buffer(), D::kBytes);
}
}  // namespace detail
template <typename D, typename S, typename... Events>
void TMOV(D& dst, S& src, Events&...) {
    if constexpr (D::type == TileType::Vec && S::type == TileType::Vec) {
        static_assert(std::is_same_v<typename D::DType, typename S::DType>, "TMOV: the tiles' element types differ");
        detail::same_valid("TMOV", dst, src);
    }
    detail::move_between("TMOV", dst, src, 0, 0);
}
template <typename D, typename S, typename... Events>
void TEXTRACT(D& dst, S& src, uint16_t row = 0, uint16_t col = 0, Events&...) {
    detail::move_between("TEXTRACT", dst, src, row, col);
}

// Pipes and flags. MTE1 (L1 -> L0) and FIX (L0C -> GM) run on the model's
// MTE2 and MTE3 engines (docs/kernels.md).
using pipe_t = pfsim::Pipe;
constexpr pfsim::Pipe PIPE_S = pfsim::Pipe::Scalar;
constexpr pfsim::Pipe PIPE_V = pfsim::Pipe::Vector;
constexpr pfsim::Pipe PIPE_M = pfsim::Pipe::Cube;
constexpr pfsim::Pipe PIPE_MTE1 = pfsim::Pipe::Mte2;
constexpr pfsim::Pipe PIPE_MTE2 = pfsim::Pipe::Mte2;
constexpr pfsim::Pipe PIPE_MTE3 = pfsim::Pipe::Mte3;
constexpr pfsim::Pipe PIPE_FIX = pfsim::Pipe::Mte3;
constexpr pfsim::Pipe PIPE_ALL = pfsim::Pipe::All;
enum event_t { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

inline void set_flag(pfsim::Pipe src, pfsim::Pipe dst, int event) { pfsim::current_core().set_flag(src, dst, event); }
inline void wait_flag(pfsim::Pipe src, pfsim::Pipe dst, int event) {
    pfsim::current_core().wait_flag(src, dst, event);
}
inline void pipe_barrier(pfsim::Pipe) { pfsim::current_core().barrier(); }

using ::get_block_idx;
using ::get_block_num;
using ::get_subblockid;
using ::get_sys_cnt;

// The flat contiguous logical-1D GM source TPREFETCH_ASYNC requires: every
// dimension but the last 1, packed. Checked at compile time from the type.
// Dynamic dimensions are checked at run time: a source that is not flat gets
// event 0 (nothing prefetched), as on the board.
template <typename GlobalT>
comm::AsyncEvent TPREFETCH_ASYNC(const GlobalT& src, PrefetchAsyncContext& ctx) {
    static_assert([] {
        for (int i = 0; i < 4; ++i) {
            if (GlobalT::Shape::staticShape[i] != 1 && GlobalT::Shape::staticShape[i] != DYNAMIC) return false;
        }
        return true;
    }(), "TPREFETCH_ASYNC requires a flat contiguous logical 1D GM region; reshape the tensor to [N] or [1, ..., N]");
    uint64_t bytes = sizeof(typename GlobalT::DType);
    for (int i = 0; i < 5; ++i) bytes *= static_cast<uint64_t>(src.GetShape(i));
    for (int i = 0; i < 4; ++i) {
        if (src.GetShape(i) != 1) return pfsim::rt::note_dropped_prefetch(0, bytes, pfsim::rt::DropReason::NotFlat), comm::AsyncEvent{};
    }
    if (src.GetStride(4) != 1) return pfsim::rt::note_dropped_prefetch(0, bytes, pfsim::rt::DropReason::NotFlat), comm::AsyncEvent{};
    if (!src.data()) return pfsim::rt::note_dropped_prefetch(0, bytes, pfsim::rt::DropReason::NullSource), comm::AsyncEvent{};
    const uint64_t gm = pfsim::current_core().gm_address(src.data(), bytes);
    if (gm == pfsim::CoreOps::kNotGm) return pfsim::rt::note_dropped_prefetch(0, bytes, pfsim::rt::DropReason::NotGm), comm::AsyncEvent{};
    return pfsim::rt::prefetch_async(gm, bytes, ctx);
}

}  // namespace pto

// CCE declares these at global scope; kernels that do not say `using
// namespace pto` use them so.
using pto::bfloat16_t;
using pto::event_t;
using pto::half;
using pto::pipe_barrier;
using pto::pipe_t;
using pto::set_flag;
using pto::wait_flag;
using pto::PIPE_ALL;
using pto::PIPE_FIX;
using pto::PIPE_M;
using pto::PIPE_MTE1;
using pto::PIPE_MTE2;
using pto::PIPE_MTE3;
using pto::PIPE_S;
using pto::PIPE_V;
using pto::EVENT_ID0;
using pto::EVENT_ID1;
using pto::EVENT_ID2;
using pto::EVENT_ID3;
using pto::EVENT_ID4;
using pto::EVENT_ID5;
using pto::EVENT_ID6;
using pto::EVENT_ID7;

// The vector mask register (CCE), one per core, full at a kernel's start. PTO-ISA's
// tile instructions expect the normal mode with a full mask and leave it so:
// some of their paths set a mask of their own, others run under whatever is
// set. A vector tile instruction issued under any other mask is an error
// naming its line (the result on a2a3 would depend on its path); raw CCE
// vector intrinsics, which the mask steers, pfsim does not have. Generated
// kernels open with set_mask_norm(); set_vector_mask(-1, -1). One scalar op each.
inline void set_mask_norm() { pfsim::current_core().set_vector_mask_mode(false); }
inline void set_mask_count() { pfsim::current_core().set_vector_mask_mode(true); }
inline void set_vector_mask(uint64_t high, uint64_t low) { pfsim::current_core().set_vector_mask(high, low); }

// pl.prefetch style (PyPTO): a context bound to the hidden workspace,
// async_prefetch of a whole tensor, the session projection and wait.
namespace pl::prefetch {
using Context = pfsim::rt::PrefetchAsyncContext;
using Event = pfsim::rt::AsyncEvent;
using Session = pfsim::rt::AsyncSession;
using Tensor = pfsim::rt::TensorView;

inline Context make_context() {
    return Context(pfsim::rt::get_dma_workspace(pfsim::current_core().kernel_args(), pfsim::rt::DMA_WORKSPACE_SDMA));
}
inline Event async_prefetch(const Tensor& src, Context& ctx) {
    return pfsim::rt::prefetch_async(src.addr, pfsim::rt::flat_prefetch_bytes(src), ctx);
}
inline Session& session(Context& ctx) { return ctx.session; }
inline bool wait(const Event& evt, Session& s) { return evt.Wait(s); }
}  // namespace pl::prefetch

#include "pto/pfsim_tpipe.hpp"  // TPUSH / TPOP / TFREE
#include "pto/pfsim_comm.hpp"   // TPUT / TGET / TNOTIFY / TWAIT (pto::comm)
