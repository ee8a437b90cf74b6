// Calibration instrument and the L2-bypass twin (pfsim calibrate l2_bypass_*):
// the load side of a routed-expert INT8 grouped matmul. Each block (a cube
// core) takes experts b, b + blocks, ...; per expert, per n tile of kNTile
// weight rows, per k slice of kKSlice columns, it loads into L1 the expert's
// activation slice x[kRows x kKSlice] (reused by every n tile) and the weight
// tile w[kNTile x kKSlice] (read once per round: a stream). `mode` says how
// the weight tiles are loaded:
//   0 TLOAD: allocating in L2 (the twin)
//   1 TLOAD<TLoadL2Hint::NotAllocKeep>: around the L2
//   2 TLOAD<TLoadL2Hint::NormalFirstVictim>: a2a3's no-op hint, as 0
//   3 TLOAD from the weights' pointer moved up by get_l2_cache_offset(args)
// The kernel runs `rounds` rounds, as a benchmark loop does; the last is the
// timed pass. Tiles as the field's kernel blocks them (16 rows, 512-column k
// slices, 256-row n tiles); weights stored tile by tile.
// args: 0 x [experts, 16, d] int8, 1 w [experts, n / 256, d / 512, 256 x 512]
//       int8, 2 experts, 3 d, 4 n, 5 mode, 6 rounds
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pfsim_timed_pass.h"

constexpr int kRows = 16, kKSlice = 512, kNTile = 256;

namespace {

using XTile = Tile<TileType::Mat, int8_t, kRows, kKSlice>;
using WTile = Tile<TileType::Mat, int8_t, kNTile, kKSlice>;
using GX = GlobalTensor<int8_t, Shape<1, 1, 1, kRows, kKSlice>, Stride<1, 1, 1, DYNAMIC, 1>>;
using GW = GlobalTensor<int8_t, Shape<1, 1, 1, kNTile, kKSlice>, Stride<1, 1, 1, kKSlice, 1>>;

void load_weights(WTile& tile, __gm__ int8_t* w, int64_t mode, uint64_t l2_cache_offset) {
    switch (mode) {
        case 1: TLOAD<TLoadL2Hint::NotAllocKeep>(tile, GW(w)); return;
        case 2: TLOAD<TLoadL2Hint::NormalFirstVictim>(tile, GW(w)); return;
        case 3: TLOAD(tile, GW(reinterpret_cast<__gm__ int8_t*>(reinterpret_cast<uint64_t>(w) + l2_cache_offset))); return;
        default: TLOAD(tile, GW(w)); return;
    }
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ int8_t* x = reinterpret_cast<__gm__ int8_t*>(reinterpret_cast<__gm__ ChipTensor*>(args[0])->buffer.addr);
    __gm__ int8_t* w = reinterpret_cast<__gm__ int8_t*>(reinterpret_cast<__gm__ ChipTensor*>(args[1])->buffer.addr);
    const int64_t experts = args[2], d = args[3], n = args[4], mode = args[5], rounds = args[6];
    const uint64_t l2_cache_offset = get_l2_cache_offset(args);  // once at entry, as generated kernels read it
    const int64_t block = get_block_idx(args), blocks = get_block_num(args);
    XTile xt;
    WTile wt;
    TASSIGN(xt, 0);
    TASSIGN(wt, XTile::kBytes);
    uint64_t bytes = 0;
    for (int64_t round = 0; round < rounds; ++round) {
        const bool timed = round == rounds - 1;
        if (timed) pfsim_timed_pass_begin();
        for (int64_t e = block; e < experts; e += blocks) {
            __gm__ int8_t* xe = x + e * kRows * d;
            __gm__ int8_t* we = w + e * n * d;
            for (int64_t nt = 0; nt < n / kNTile; ++nt) {
                for (int64_t ks = 0; ks < d / kKSlice; ++ks) {
                    TLOAD(xt, GX(xe + ks * kKSlice, {}, GX::Stride(d)));
                    load_weights(wt, we + (nt * (d / kKSlice) + ks) * (kNTile * kKSlice), mode, l2_cache_offset);
                    if (timed) bytes += XTile::kBytes + WTile::kBytes;
                }
            }
        }
        pipe_barrier(PIPE_ALL);
        if (timed) pfsim_timed_pass_end(bytes);
    }
}
