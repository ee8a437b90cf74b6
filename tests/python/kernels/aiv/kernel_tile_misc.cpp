// TCI, TFILLPAD, TFILLPAD_INPLACE and TRESHAPE on an 8 x 64 float tile whose
// valid region is 6 x 40. args[0] the input, args[1] the output (8 x 64
// float, or 8 x 64 int32 for TCI), args[2] the case:
//   0 TCI ascending from 5 (int32), 1 TCI descending from 5,
//   2 TFILLPAD with PadValue::Min, 3 TFILLPAD_INPLACE with PadValue::Zero,
//   4 TRESHAPE to 16 x 32 then TADDS 1 over the view,
//   5 TLOAD through a Layout::DN view (the input read column-major),
//   6 TSTORE through a DN view, 7 a 16 x 1 DN column into a column-vector tile,
//   8 TTRANS of the input's first 8 x 8 into out's first 8 x 8 (the rest 0),
//   9 TGATHER: out(r, c) = the input's element idx(r, c), the int32 indices
//     arriving in the output tensor's bytes,
//   10 TADDS 1 with a partial vector mask left set (an error), 12 the same
//     with the full mask restored first (generated code's calls), 13 TADDS
//     left in counter mode (an error),
//   11 TADDS 1 over a tile built with its one dynamic size (40 columns) into
//     zeros, then SetValue(0, 7) and SetValue(1, 2 * GetValue of input 1).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

using Full = Tile<TileType::Vec, float, 8, 64>;
using Part = Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, -1, -1>;
using PadMin = Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64, SLayout::NoneBox, 512, PadValue::Min>;
using PadZero = Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 64, SLayout::NoneBox, 512, PadValue::Zero>;
using Ints = Tile<TileType::Vec, int32_t, 8, 64, BLayout::RowMajor, -1, -1>;
using Tall = Tile<TileType::Vec, float, 16, 32>;
using G = GlobalTensor<float, Shape<1, 1, 1, 8, 64>, Stride<1, 1, 1, 64, 1>>;
using GI = GlobalTensor<int32_t, Shape<1, 1, 1, 8, 64>, Stride<1, 1, 1, 64, 1>>;
using GDn = GlobalTensor<float, Shape<1, 1, 1, 8, 64>, Stride<512, 512, 512, 1, 8>, Layout::DN>;
using GColumn = GlobalTensor<float, Shape<1, 1, 1, 16, 1>, Stride<16, 16, 16, 1, 16>, Layout::DN>;

template <typename T>
__gm__ T* data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    Full in;
    TASSIGN(in, 0);
    TLOAD(in, G(data<float>(args, 0)));
    Part part(6, 40);
    TASSIGN(part, 0);  // the input's first 6 x 40, in place
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    Full out;
    TASSIGN(out, Full::kBytes);
    switch (args[2]) {
        case 0:
        case 1: {
            Ints seq(6, 40);
            TASSIGN(seq, Full::kBytes);
            Tile<TileType::Vec, int32_t, 8, 64> all;
            TASSIGN(all, Full::kBytes);
            TEXPANDS(all, -1);
            if (args[2] == 0) {
                TCI<Ints, int32_t, 0>(seq, 5);
            } else {
                TCI<Ints, int32_t, 1>(seq, 5);
            }
            set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
            wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
            TSTORE(GI(data<int32_t>(args, 1)), all);
            pipe_sync();
            return;
        }
        case 2: {
            PadMin padded;
            TASSIGN(padded, Full::kBytes);
            TFILLPAD(padded, part);
            break;
        }
        case 3: {
            PadZero same;
            TASSIGN(same, 0);
            TFILLPAD_INPLACE(same, part);
            TMOV(out, in);
            break;
        }
        case 5:
            TLOAD(out, GDn(data<float>(args, 0)));
            break;
        case 6:
            TSTORE(GDn(data<float>(args, 1)), in);
            pipe_sync();
            return;
        case 7: {
            Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor> column;
            TASSIGN(column, 2 * Full::kBytes);
            TLOAD(column, GColumn(data<float>(args, 0) + 64));  // elements 64..79
            TEXPANDS(out, 0.0f);
            Tile<TileType::Vec, float, 8, 64> rows8;
            TASSIGN(rows8, Full::kBytes);
            TROWEXPAND(rows8, column);  // out[r][c] = column[r] for the first 8 rows
            break;
        }
        case 8: {
            Tile<TileType::Vec, float, 8, 8> square, t;
            TASSIGN(square, 2 * Full::kBytes);
            TASSIGN(t, 2 * Full::kBytes + 256);
            Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 8> corner;
            TASSIGN(corner, 0);
            TMOV(square, corner);
            TTRANS(t, square, out);
            TEXPANDS(out, 0.0f);
            Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, 8> out_corner;
            TASSIGN(out_corner, Full::kBytes);
            TMOV(out_corner, t);
            break;
        }
        case 9: {
            Ints idx(8, 64);
            TASSIGN(idx, 2 * Full::kBytes);
            TLOAD(idx, GI(data<int32_t>(args, 1)));
            set_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);
            wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID1);
            TGATHER(out, in, idx, in);
            break;
        }
        case 10:
        case 12:
        case 13:
            set_mask_count();
            set_mask_norm();
            set_vector_mask(0, 0xF);  // four lanes
            if (args[2] == 12) set_vector_mask(-1, -1);
            if (args[2] == 13) set_vector_mask(-1, -1), set_mask_count();
            TADDS(out, in, 1.0f);
            break;
        case 11: {
            using Cols = Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 8, -1>;
            Cols src(40u), dst(40u);
            TASSIGN(src, 0);
            TASSIGN(dst, Full::kBytes);
            TEXPANDS(out, 0.0f);
            TADDS(dst, src, 1.0f);
            set_flag(PIPE_V, PIPE_S, EVENT_ID0);
            wait_flag(PIPE_V, PIPE_S, EVENT_ID0);
            out.SetValue(0, 7.0f);
            out.SetValue(1, 2.0f * in.GetValue(1));
            break;
        }
        case 4: {
            Tall tall;
            TRESHAPE(tall, in);
            TADDS(tall, tall, 1.0f);
            TMOV(out, in);
            break;
        }
    }
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(G(data<float>(args, 1)), out);
    pipe_sync();
}
