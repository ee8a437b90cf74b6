// The compare form of TGATHER over a ROWS x COLS tile of T (float, half or
// int32), with the thresholds' type KT, KR of them, dst's K columns and the
// mode MODE: "gather_cmp_type.h" (written by the test) defines
// GATHER_VARIANTS(X), one X(index, T, KT, ROWS, COLS, K, KR, TMP_SHORT, MODE)
// each, so that one build serves them all.
//   args 0 src, 1 the thresholds, 2 dst and 3 the per-row counts (int32, KR;
//   both loaded first: what the gather leaves alone stays), 4 the index offset,
//   5 the variant's index.
// The scratch is placed last in UB with room for its three regions, unless
// TMP_SHORT is set (then it ends 32 bytes short of what TGATHER writes there).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"
#include "gather_cmp_type.h"

using namespace pto;

template <typename E, int N>
using Flat = GlobalTensor<E, Shape<1, 1, 1, 1, N>, Stride<1, 1, 1, 1, 1>>;
template <typename E, int R, int C>
using Matrix = GlobalTensor<E, Shape<1, 1, 1, R, C>, Stride<1, 1, 1, C, 1>>;

template <typename E>
__gm__ E* data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ E*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

template <typename T, typename KT, int ROWS, int COLS, int K, int KR, bool TMP_SHORT, CmpMode MODE>
void gather(__gm__ int64_t* args) {
    using Src = Tile<TileType::Vec, T, ROWS, COLS>;
    using Thresholds = Tile<TileType::Vec, KT, 1, KR>;
    using Dst = Tile<TileType::Vec, uint32_t, ROWS, K>;
    using Counts = Tile<TileType::Vec, uint32_t, 1, KR>;
    constexpr int kBitmapCols = (COLS + 7) / 8 < 32 ? 32 : (COLS + 7) / 8;
    using Scratch = Tile<TileType::Vec, uint8_t, ROWS, kBitmapCols>;
    Src src;
    Thresholds k;
    Dst dst;
    Counts counts;
    Scratch tmp;
    uint64_t offset = 0;
    auto place = [&](auto& tile) {
        TASSIGN(tile, offset);
        offset += (std::remove_reference_t<decltype(tile)>::kBytes + 31) / 32 * 32;
    };
    place(src), place(k), place(dst), place(counts);
    const uint64_t scratch = Scratch::kBytes + uint64_t{ROWS} * COLS * 4 + ROWS * sizeof(T);
    TASSIGN(tmp, 192 * 1024 - (scratch + 31) / 32 * 32 + (TMP_SHORT ? 32 : 0));
    TLOAD(src, Matrix<T, ROWS, COLS>(data<T>(args, 0)));
    TLOAD(k, Flat<KT, KR>(data<KT>(args, 1)));
    TLOAD(dst, Matrix<uint32_t, ROWS, K>(data<uint32_t>(args, 2)));
    TLOAD(counts, Flat<uint32_t, KR>(data<uint32_t>(args, 3)));
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TGATHER<Dst, Src, Thresholds, Counts, Scratch, MODE>(dst, src, k, counts, tmp, static_cast<uint32_t>(args[4]));
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(Matrix<uint32_t, ROWS, K>(data<uint32_t>(args, 2)), dst);
    TSTORE(Flat<uint32_t, KR>(data<uint32_t>(args, 3)), counts);
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    switch (args[5]) {
#define GATHER_CASE(index, T, KT, ROWS, COLS, K, KR, TMP_SHORT, MODE) \
    case index:                                                       \
        gather<T, KT, ROWS, COLS, K, KR, TMP_SHORT, MODE>(args);      \
        break;
        GATHER_VARIANTS(GATHER_CASE)
#undef GATHER_CASE
        default: break;  // no variant of that index: dst and the counts stay as they were
    }
}
