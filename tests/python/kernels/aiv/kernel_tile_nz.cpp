// TLOAD / TSTORE through Layout::NZ global tensors, on a 32 x 48 half matrix:
// 2 x 3 fractals of 16 x 16 (16 halves: 32 bytes a fractal row), a column of
// fractals after another. args[0] the input, args[1] the output (both 32 x 48
// halves), args[2] the case:
//   0 NZ input -> NZ tile -> ND output (the matrix back in row order),
//   1 ND input -> NZ tile -> NZ output (the matrix in fractals),
//   2 as 0 over a 20 x 40 valid region (a partial column of fractals),
//   3 as 0 with a 64-byte gap after each fractal (no run spans two).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

constexpr int kRows = 32, kCols = 48;
using Nz = Tile<TileType::Vec, half, kRows, kCols, BLayout::ColMajor, -1, -1, SLayout::RowMajor, 512>;
using Nd = GlobalTensor<half, Shape<1, 1, 1, kRows, kCols>, Stride<1, 1, 1, kCols, 1>>;
using NzTensor = GlobalTensor<half, Shape<1, 3, 2, 16, 16>, Stride<1536, 512, 256, 16, 1>, Layout::NZ>;
using NzGapped = GlobalTensor<half, Shape<1, 3, 2, 16, 16>, Stride<1632, 544, 272, 16, 1>, Layout::NZ>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ half* in = reinterpret_cast<__gm__ half*>(reinterpret_cast<__gm__ ChipTensor*>(args[0])->buffer.addr);
    __gm__ half* out = reinterpret_cast<__gm__ half*>(reinterpret_cast<__gm__ ChipTensor*>(args[1])->buffer.addr);
    Nz tile(args[2] == 2 ? 20 : kRows, args[2] == 2 ? 40 : kCols);
    TASSIGN(tile, 0);
    if (args[2] == 1) {
        TLOAD(tile, Nd(in));
    } else if (args[2] == 3) {
        TLOAD(tile, NzGapped(in));
    } else {
        TLOAD(tile, NzTensor(in));
    }
    pipe_sync();
    if (args[2] == 1) {
        TSTORE(NzTensor(out), tile);
    } else {
        TSTORE(Nd(out), tile);
    }
    pipe_sync();
}
