// The sort instructions of <pto/pto-inst.hpp> (a2a3's VBS32 and VMS4 units):
// TSORT32 sorts 32-element blocks into value-index pairs, TMRGSORT merges
// sorted lists of pairs. Both sort descending by value.
//
// A pair is 8 bytes in a row-major tile of the values' type: a float value
// then its uint32 index (2 float elements), or a half value, 2 zero bytes and
// the index (4 half elements). Equal values keep the smaller index first in
// TSORT32 (PTO-ISA docs); TMRGSORT takes equal values from the lower-numbered
// list first (a GUESS: the order is not published). NaNs are not ordered.
// Cost: the bytes read and written at core.vector_bandwidth, times
// core.vector_special_factor (a GUESS for the sort units).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace pto {

// How many pairs TMRGSORT took from each list (the exhausted form stops when
// one list runs out).
struct MrgSortExecutedNumList {
    uint16_t mrgSortList0;
    uint16_t mrgSortList1;
    uint16_t mrgSortList2;
    uint16_t mrgSortList3;
};

namespace detail {
struct SortPair {
    float value;
    uint32_t index;
};
template <typename T>
constexpr int kPairElements = 8 / static_cast<int>(sizeof(T));

template <typename Tl>
constexpr void sort_tile_check() {
    using T = typename Tl::DType;
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, half>, "TSORT32 / TMRGSORT: tiles of float or half");
    static_assert(Tl::type == TileType::Vec && Tl::blayout == BLayout::RowMajor,
                  "TSORT32 / TMRGSORT: row-major vector (UB) tiles");
}
template <typename Tl>
PFSIM_TILE_COMPUTE SortPair read_pair(const Tl& t, int row, int k) {
    using T = typename Tl::DType;
    const auto* bytes = reinterpret_cast<const uint8_t*>(&t.at(row, k * kPairElements<T>));
    SortPair p;
    p.value = static_cast<float>(widen(t.at(row, k * kPairElements<T>)));
    std::memcpy(&p.index, bytes + 4, 4);
    return p;
}
template <typename Tl>
PFSIM_TILE_COMPUTE void write_pair(Tl& t, int row, int k, const SortPair& p) {
    using T = typename Tl::DType;
    auto* bytes = reinterpret_cast<uint8_t*>(&t.at(row, k * kPairElements<T>));
    std::memset(bytes, 0, 8);
    const T value = narrow<T>(p.value);  // exact: the value came from a T
    std::memcpy(bytes, &value, sizeof(T));
    std::memcpy(bytes + 4, &p.index, 4);
}
template <typename Tl>
PFSIM_TILE_COMPUTE int pair_capacity(const Tl&) {
    return Tl::cols / kPairElements<typename Tl::DType>;
}
// Merges `lists` into `out` (descending, ties to the lower list); with
// `stop_when_one_ends` it stops as soon as any list has been used up.
inline std::vector<SortPair> merge_pairs(const std::vector<std::vector<SortPair>>& lists, bool stop_when_one_ends,
                                         uint16_t taken[4]) {
    std::vector<size_t> at(lists.size(), 0);
    std::vector<SortPair> out;
    for (;;) {
        int best = -1;
        bool one_ended = false;
        for (size_t l = 0; l < lists.size(); ++l) {
            if (at[l] == lists[l].size()) {
                one_ended = true;
                continue;
            }
            if (best < 0 || lists[l][at[l]].value > lists[static_cast<size_t>(best)][at[static_cast<size_t>(best)]].value) {
                best = static_cast<int>(l);
            }
        }
        if (best < 0 || (stop_when_one_ends && one_ended)) break;
        out.push_back(lists[static_cast<size_t>(best)][at[static_cast<size_t>(best)]++]);
    }
    for (size_t l = 0; l < 4; ++l) taken[l] = static_cast<uint16_t>(l < lists.size() ? at[l] : 0);
    return out;
}
template <typename S>
PFSIM_TILE_COMPUTE std::vector<SortPair> sorted_list(const char* instruction, const S& src) {
    sort_tile_check<S>();
    static_assert(S::rows == 1, "TMRGSORT: one-row tiles");
    const int pe = kPairElements<typename S::DType>;
    if (src.GetValidCol() % pe) fail(instruction, "a list's valid columns are not whole value-index pairs");
    std::vector<SortPair> list;
    for (int k = 0; k < src.GetValidCol() / pe; ++k) list.push_back(read_pair(src, 0, k));
    return list;
}
inline void sort_time(uint64_t bytes) { pfsim::current_core().vector_special(bytes); }
}  // namespace detail

// Each 32-element block of each valid row of src, with the matching uint32
// indices of idx (one row may serve every row), as pairs sorted by value,
// descending: block b of row r fills pairs 32b.. of dst's row r. Without a
// tmp tile the valid columns must be whole blocks; with one, the last block
// may be shorter (the board pads it with -inf; the pad is not written).
namespace detail {
template <typename D, typename S, typename I>
PFSIM_TILE_COMPUTE void sort32(const char* instruction, D& dst, S& src, I& idx, bool tail) {
    using T = typename S::DType;
    sort_tile_check<D>();
    sort_tile_check<S>();
    static_assert(std::is_same_v<T, typename D::DType>, "TSORT32: dst and src differ in element type");
    static_assert(std::is_same_v<typename I::DType, uint32_t>, "TSORT32: the indices are a uint32_t tile");
    const int rows = src.GetValidRow(), cols = src.GetValidCol();
    if (!tail && cols % 32) fail(instruction, "the valid columns are not whole 32-element blocks (pass a tmp tile)");
    if (idx.GetValidCol() < cols || (idx.GetValidRow() != 1 && idx.GetValidRow() < rows)) {
        fail(instruction, "the index tile is smaller than the source's valid region");
    }
    if (dst.GetValidRow() < rows || pair_capacity(dst) < cols) fail(instruction, "dst cannot hold a pair per element");
    std::vector<SortPair> block;
    for (int r = 0; r < rows; ++r) {
        const int ir = idx.GetValidRow() == 1 ? 0 : r;
        for (int b = 0; b * 32 < cols; ++b) {
            block.clear();
            for (int c = b * 32; c < std::min(cols, b * 32 + 32); ++c) {
                block.push_back({static_cast<float>(widen(src.at(r, c))), idx.at(ir, c)});
            }
            std::stable_sort(block.begin(), block.end(), [](const SortPair& x, const SortPair& y) PFSIM_TILE_COMPUTE {
                return x.value > y.value || (x.value == y.value && x.index < y.index);
            });
            for (size_t k = 0; k < block.size(); ++k) write_pair(dst, r, b * 32 + static_cast<int>(k), block[k]);
        }
    }
    sort_time(S::kBytes + I::kBytes + D::kBytes);
}
}  // namespace detail
template <typename D, typename S, typename I>
PFSIM_TILE_COMPUTE void TSORT32(D& dst, S& src, I& idx) {
    detail::sort32("TSORT32", dst, src, idx, false);
}
template <typename D, typename S, typename I, typename Tmp>
PFSIM_TILE_COMPUTE void TSORT32(D& dst, S& src, I& idx, Tmp&) {
    detail::sort32("TSORT32", dst, src, idx, true);
}

// Single list: src holds groups of 4 sorted blocks of blockLen elements each
// (blockLen a multiple of 64; the valid columns whole groups, 1..255 of
// them); each group is merged into the same place of dst.
template <typename D, typename S, typename... Events>
PFSIM_TILE_COMPUTE void TMRGSORT(D& dst, S& src, uint32_t block_len, Events&...) {
    using T = typename S::DType;
    static_assert(std::is_same_v<T, typename D::DType>, "TMRGSORT: dst and src differ in element type");
    detail::sort_tile_check<D>();
    static_assert(D::rows == 1, "TMRGSORT: one-row tiles");
    const std::vector<detail::SortPair> all = detail::sorted_list("TMRGSORT", src);
    const int cols = src.GetValidCol();
    if (block_len == 0 || block_len % 64) detail::fail("TMRGSORT", "blockLen is not a multiple of 64");
    const int group = 4 * static_cast<int>(block_len);
    if (cols % group || cols / group < 1 || cols / group > 255) {
        detail::fail("TMRGSORT", "the valid columns are not 1 to 255 groups of four blockLen blocks");
    }
    if (D::cols < cols) detail::fail("TMRGSORT", "dst is smaller than src's valid columns");
    const size_t block_pairs = block_len / detail::kPairElements<T>;
    uint16_t taken[4];
    for (size_t g = 0; g * 4 * block_pairs < all.size(); ++g) {
        std::vector<std::vector<detail::SortPair>> lists(4);
        for (size_t l = 0; l < 4; ++l) {
            const auto first = all.begin() + static_cast<std::ptrdiff_t>((4 * g + l) * block_pairs);
            lists[l].assign(first, first + static_cast<std::ptrdiff_t>(block_pairs));
        }
        const std::vector<detail::SortPair> merged = detail::merge_pairs(lists, false, taken);
        for (size_t k = 0; k < merged.size(); ++k) detail::write_pair(dst, 0, static_cast<int>(4 * g * block_pairs + k), merged[k]);
    }
    detail::sort_time(S::kBytes + D::kBytes);
}

// Two to four sorted lists merged into dst (tmp, the board's staging tile, is
// not needed); `exhausted` stops when any list runs out. executed counts the
// pairs taken from each list.
namespace detail {
template <bool kExhausted, typename D, typename... Srcs>
PFSIM_TILE_COMPUTE void merge_lists(D& dst, MrgSortExecutedNumList& executed, Srcs&... srcs) {
    sort_tile_check<D>();
    static_assert(D::rows == 1, "TMRGSORT: one-row tiles");
    static_assert((std::is_same_v<typename D::DType, typename Srcs::DType> && ...), "TMRGSORT: the tiles differ in element type");
    const std::vector<std::vector<SortPair>> lists = {sorted_list("TMRGSORT", srcs)...};
    uint16_t taken[4];
    const std::vector<SortPair> merged = merge_pairs(lists, kExhausted, taken);
    if (static_cast<int>(merged.size()) > pair_capacity(dst)) fail("TMRGSORT", "dst cannot hold the merged pairs");
    for (size_t k = 0; k < merged.size(); ++k) write_pair(dst, 0, static_cast<int>(k), merged[k]);
    executed = {taken[0], taken[1], taken[2], taken[3]};
    sort_time((Srcs::kBytes + ...) + D::kBytes);
}
}  // namespace detail
template <typename D, typename Tmp, typename S0, typename S1, bool kExhausted, typename... Events>
PFSIM_TILE_COMPUTE void TMRGSORT(D& dst, MrgSortExecutedNumList& executed, Tmp&, S0& src0, S1& src1, Events&...) {
    detail::merge_lists<kExhausted>(dst, executed, src0, src1);
}
template <typename D, typename Tmp, typename S0, typename S1, typename S2, bool kExhausted, typename... Events>
PFSIM_TILE_COMPUTE void TMRGSORT(D& dst, MrgSortExecutedNumList& executed, Tmp&, S0& src0, S1& src1, S2& src2, Events&...) {
    detail::merge_lists<kExhausted>(dst, executed, src0, src1, src2);
}
template <typename D, typename Tmp, typename S0, typename S1, typename S2, typename S3, bool kExhausted, typename... Events>
PFSIM_TILE_COMPUTE void TMRGSORT(D& dst, MrgSortExecutedNumList& executed, Tmp&, S0& src0, S1& src1, S2& src2, S3& src3,
                                 Events&...) {
    detail::merge_lists<kExhausted>(dst, executed, src0, src1, src2, src3);
}

}  // namespace pto
