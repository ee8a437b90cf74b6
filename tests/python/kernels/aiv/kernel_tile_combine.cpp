// The instructions that combine tiles, chosen by args[8], over R x C tiles of
// an element type T: "tile_ops_type.h" (written by the test) defines R, C and
// TILE_TYPES(X), one X(index, T) each, so that one build serves them all;
// args[10] is the type's index:
//   inputs  a, b (R x C), vr (R), vc (C), parts (blocks x R x C)
//   in/out  y (R x C), acc (R x C), yi (R x 8 int32)
//   op 0  TCONCAT: y = a's first 24 columns, then b's first C - 24
//   op 1  TCONCAT, index form: row r takes 8 + 4r of a's columns and C - 8 - 4r
//         of b's (counts in bytes, from index tiles); the six-operand form
//         writes the byte sums to yi(r, 0)
//   op 2  TROWEXPANDMUL with a matrix operand wider than the destination:
//         y(:, :48) = a(:, :48) * vr
//   op 3  TROWEXPANDEXPDIF: y = exp(a - vr)    op 4  TCOLEXPANDEXPDIF: y = exp(a - vc)
//   op 5  TSTORE AtomicAdd: every block adds parts[block] to acc
//   op 6  the same with a plain TSTORE (blocks overwrite one another)
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"
#include "tile_ops_type.h"

using namespace pto;

template <typename T>
struct Combine {
    using Full = Tile<TileType::Vec, T, R, C>;
    using Part = Tile<TileType::Vec, T, R, C, BLayout::RowMajor, -1, -1>;  // dynamic valid size
    using Narrow = Tile<TileType::Vec, T, R, 48>;
    using PerRow = Tile<TileType::Vec, T, R, 1, BLayout::ColMajor>;
    using PerCol = Tile<TileType::Vec, T, 1, C>;
    using Index = Tile<TileType::Vec, int32_t, R, 8>;
    using FullGM = GlobalTensor<T, Shape<1, 1, 1, R, C>, Stride<1, 1, 1, C, 1>>;
    using NarrowGM = GlobalTensor<T, Shape<1, 1, 1, R, 48>, Stride<1, 1, 1, C, 1>>;
    using IndexGM = GlobalTensor<int32_t, Shape<1, 1, 1, R, 8>, Stride<1, 1, 1, 8, 1>>;
    template <int N>
    using FlatGM = GlobalTensor<T, Shape<1, 1, 1, 1, N>, Stride<1, 1, 1, 1, 1>>;

    template <typename G, typename E = T>
    static G at(__gm__ int64_t* args, int i, uint64_t offset = 0) {
        return G(reinterpret_cast<__gm__ E*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr) + offset);
    }

    static void run(__gm__ int64_t* args) {
        Full a, b, y, acc;
        Part a_part(R, 24), b_part(R, C - 24);
        Narrow narrow;
        PerRow vr;
        PerCol vc;
        Index i0, i1, isum;
        uint64_t offset = 0;
        auto place = [&](auto& tile) {
            TASSIGN(tile, offset);
            offset += (std::remove_reference_t<decltype(tile)>::kBytes + 31) / 32 * 32;
        };
        place(a);
        TASSIGN(a_part, 0);  // a's bytes, fewer valid columns
        TASSIGN(b_part, offset);
        place(b), place(y), place(acc), place(narrow), place(vr), place(vc), place(i0), place(i1), place(isum);
        const int64_t op = args[8];
        const int block = get_block_idx(args);
        TLOAD(a, at<FullGM>(args, 0));
        TLOAD(b, at<FullGM>(args, 1));
        TLOAD(vr, at<FlatGM<R>>(args, 2));
        TLOAD(vc, at<FlatGM<C>>(args, 3));
        TLOAD(y, at<FullGM>(args, 5));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        constexpr bool kFloat = !std::is_integral_v<T>;
        switch (op) {
            case 0:
            case 1:
                if (op == 0) {
                    TCONCAT(y, a_part, b_part);
                } else {
                    a_part.SetValidShape(R, C - 8);
                    b_part.SetValidShape(R, C - 8);
                    for (int r = 0; r < R; ++r) {
                        i0.SetValue(r * 8, static_cast<int32_t>((8 + 4 * r) * sizeof(T)));
                        i1.SetValue(r * 8, static_cast<int32_t>((C - 8 - 4 * r) * sizeof(T)));
                    }
                    TCONCAT(y, a_part, b_part, i0, i1);
                    TCONCAT(y, a_part, b_part, isum, i0, i1);
                }
                break;
            case 2: {
                Tile<TileType::Vec, T, R, C, BLayout::RowMajor, R, 48> wide;
                TASSIGN(wide, 0);  // a's bytes, 48 of its 64 columns valid
                TROWEXPANDMUL(narrow, wide, vr);
                break;
            }
            case 3:
                if constexpr (kFloat) TROWEXPANDEXPDIF(y, a, vr);
                break;
            case 4:
                if constexpr (kFloat) TCOLEXPANDEXPDIF(y, a, vc);
                break;
            case 5:
            case 6:
                TLOAD(acc, at<FullGM>(args, 4, static_cast<uint64_t>(block) * R * C));
                break;
        }
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        pipe_barrier(PIPE_ALL);
        if (op == 5) {
            TSTORE<Full, FullGM, AtomicType::AtomicAdd>(at<FullGM>(args, 6), acc);
        } else if (op == 6) {
            TSTORE(at<FullGM>(args, 6), acc);
        } else if (op == 2) {
            TSTORE(at<NarrowGM>(args, 5), narrow);
        } else if (block == 0) {
            TSTORE(at<FullGM>(args, 5), y);
            if (op == 1) TSTORE(at<IndexGM, int32_t>(args, 7), isum);
        }
    }
};

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    switch (args[10]) {
#define TYPE_CASE(index, T)    \
    case index:                \
        Combine<T>::run(args); \
        break;
        TILE_TYPES(TYPE_CASE)
#undef TYPE_CASE
        default: break;  // no type of that index: the outputs stay as they were
    }
}
