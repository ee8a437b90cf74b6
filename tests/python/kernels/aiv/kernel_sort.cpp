// The sort instructions over N values of T (float or half, from
// "tile_ops_type.h"), in value-index pairs of PE elements:
//   s32    TSORT32: each 32-element block of x, with idx, sorted (descending)
//   m1     TMRGSORT single list: s32's groups of four blocks merged (128 pairs each)
//   m2     TMRGSORT two lists: m1's two halves merged (all N sorted)
//   m3     the same, exhausted: stops when one half runs out
//   vals   TGATHER P0101 (float) / P0001 (half): m2's values
//   inds   TGATHER P1010 (float) / P0100 (half): m2's indices (their low half for half)
//   counts [m3's pairs taken from each list (4), m2's (4)]
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"
#include "tile_ops_type.h"

using namespace pto;

constexpr int PE = 8 / sizeof(T), W = N * PE;
using IT = std::conditional_t<sizeof(T) == 4, int32_t, int16_t>;
using Row = Tile<TileType::Vec, T, 1, N>;
using Idx = Tile<TileType::Vec, uint32_t, 1, N>;
using Pairs = Tile<TileType::Vec, T, 1, W>;
using HalfPairs = Tile<TileType::Vec, T, 1, W / 2>;
using Inds = Tile<TileType::Vec, IT, 1, N>;
using Counts = Tile<TileType::Vec, int32_t, 1, 8>;
template <typename E, int K>
using Flat = GlobalTensor<E, Shape<1, 1, 1, 1, K>, Stride<1, 1, 1, 1, 1>>;

template <typename E, int K>
Flat<E, K> at(__gm__ int64_t* args, int i) {
    return Flat<E, K>(reinterpret_cast<__gm__ E*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr));
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    Row x, vals;
    Idx idx;
    Pairs s32, m1, m2, m3, tmp;
    HalfPairs first, second;
    Inds inds;
    Counts counts;
    uint64_t offset = 0;
    auto place = [&](auto& tile) {
        TASSIGN(tile, offset);
        offset += (std::remove_reference_t<decltype(tile)>::kBytes + 31) / 32 * 32;
    };
    place(x), place(idx), place(s32);
    TASSIGN(first, offset);  // m1's two halves, each a sorted list of N / 2 pairs
    TASSIGN(second, offset + HalfPairs::kBytes);
    place(m1), place(m2), place(m3), place(tmp), place(vals), place(inds), place(counts);
    TLOAD(x, at<T, N>(args, 0));
    TLOAD(idx, at<uint32_t, N>(args, 1));
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TSORT32(s32, x, idx);
    TMRGSORT(m1, s32, 32 * PE);
    MrgSortExecutedNumList all{}, until_one_ends{};
    TMRGSORT<Pairs, Pairs, HalfPairs, HalfPairs, false>(m2, all, tmp, first, second);
    TMRGSORT<Pairs, Pairs, HalfPairs, HalfPairs, true>(m3, until_one_ends, tmp, first, second);
    if constexpr (sizeof(T) == 4) {
        TGATHER<Row, Pairs, MaskPattern::P0101>(vals, m2);
        TGATHER<Inds, Pairs, MaskPattern::P1010>(inds, m2);
    } else {
        TGATHER<Row, Pairs, MaskPattern::P0001>(vals, m2);
        TGATHER<Inds, Pairs, MaskPattern::P0100>(inds, m2);
    }
    const uint16_t taken[8] = {until_one_ends.mrgSortList0, until_one_ends.mrgSortList1, until_one_ends.mrgSortList2,
                               until_one_ends.mrgSortList3, all.mrgSortList0, all.mrgSortList1, all.mrgSortList2,
                               all.mrgSortList3};
    for (int k = 0; k < 8; ++k) counts.SetValue(k, taken[k]);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(at<T, W>(args, 2), s32);
    TSTORE(at<T, W>(args, 3), m1);
    TSTORE(at<T, W>(args, 4), m2);
    TSTORE(at<T, W>(args, 5), m3);
    TSTORE(at<T, N>(args, 6), vals);
    TSTORE(at<IT, N>(args, 7), inds);
    TSTORE(at<int32_t, 8>(args, 8), counts);
}
