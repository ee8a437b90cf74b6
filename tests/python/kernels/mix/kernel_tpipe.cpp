// The cube<->vector FIFO (TPUSH / TPOP) as a mixed kernel: one source, built
// for the cube core and for the two vector cores of a cluster.
//   C2V: the cube computes C_t = A_t B (half operands, float accumulator) for
//        each of `tiles` row blocks and pushes it; each vector core pops its
//        part, adds 1 and stores it as Y_t.
//   V2C: each vector core loads its half of A_t's rows and pushes it; the
//        cube pops all of A_t into L1, computes A_t B and stores it as Y_t.
// args: A [tiles*M, K] half, B [K, N] half, Y [tiles*M, N] float, the FIFO's
// GM (bytes), then the scenario and the tile count (scalars).
// A vector core's lane is read as on the board: from the runtime
// (get_sub_block_id(args)), with its part of a slot as the pipe's entry offset,
// for the no-argument get_subblockid() that TPUSH/TPOP add reads 0 there
// (core.subblock_register = zero). The *A2a3sim scenarios read the lane from
// get_subblockid() instead, as kernels written against a2a3sim do (= lane).
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/common/fifo.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

namespace {

constexpr int M = 32, K = 32, N = 32, kHalf = M / 2;
constexpr uint32_t kSlot = M * N * sizeof(float);

enum Scenario {
    kC2vUpDown = 0,
    kC2vLeftRight = 1,
    kV2cUpDown = 2,
    kC2vOneSlot = 3,
    kC2vNoAllocate = 4,   // the producer never waits for a free slot: slots are overwritten
    kPopOneMore = 5,      // the consumers pop a tile nobody pushes: deadlock
    kCubePops = 6,        // the cube pops a C2V pipe: an error
    kSlotTooSmall = 7,    // the tile does not fit the slot: an error
    kNeverPopped = 8,     // sets nobody waits for: the flag counter overflows
    kSetNotWaited = 9,    // both vector cores set a flag the cube never waits for: a warning
    kOneVectorSets = 10,  // only vector core 0 sets, the cube waits: deadlock
    kC2vUpDownA2a3sim = 11,
    kV2cUpDownA2a3sim = 12,
    kWorkThenWait = 13,   // the vector cores wait at once, the cube after its tiles: deadlock when the cube blocks
    kWorkOnly = 14,       // kWorkThenWait's work without the waits
};

// Where a vector core's lane comes from: the runtime (the board's contract) or
// the sub-block register (a2a3sim's).
enum class Lane { kRuntime, kRegister };

int lane_of(__gm__ int64_t* args, Lane source) {
    return source == Lane::kRuntime ? get_sub_block_id(args) : static_cast<int>(get_subblockid());
}

template <typename T>
__gm__ T* data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

using GA = GlobalTensor<half, Shape<1, 1, 1, M, K>, Stride<1, 1, 1, K, 1>>;
using GB = GlobalTensor<half, Shape<1, 1, 1, K, N>, Stride<1, 1, 1, N, 1>>;
using MatA = Tile<TileType::Mat, half, M, K>;
using MatB = Tile<TileType::Mat, half, K, N>;
using Acc = TileAcc<float, M, N>;
constexpr uint64_t kMatB = 64 * 1024;  // L1 offset of B; A's pop slots lie below

// C_t = A_t B on the cube into `acc`; A_t is in L1 at `a1`.
void cube_matmul(MatA& a1, MatB& b1, Acc& acc) {
    TileLeft<half, M, K> a0;
    TileRight<half, K, N> b0;
    TASSIGN(a0, 0);
    TASSIGN(b0, 0);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(a0, a1);
    TMOV(b0, b1);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    TMATMUL(acc, a0, b0);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
}

// C_t = A_t B on the cube for each tile, A_t loaded from GM; then done(t, C_t).
template <typename Done>
void cube_tiles(__gm__ int64_t* args, int tiles, Done done) {
    MatA a1;
    MatB b1;
    Acc acc;
    TASSIGN(a1, 0);
    TASSIGN(b1, kMatB);
    TASSIGN(acc, 0);
    TLOAD(b1, GB(data<half>(args, 1)));
    for (int t = 0; t < tiles; ++t) {
        TLOAD(a1, GA(data<half>(args, 0) + t * M * K));
        cube_matmul(a1, b1, acc);
        done(t, acc);
    }
}

template <typename Pipe, TileSplitAxis Split>
void c2v(__gm__ int64_t* args, Pipe& pipe, int tiles, int pops, Lane source = Lane::kRuntime) {
    if (pfsim::current_core().core_kind() == pfsim::CoreKind::Aic) {
        cube_tiles(args, tiles, [&](int, Acc& acc) { TPUSH<Pipe, Acc, Split>(pipe, acc); });
        return;
    }
    constexpr bool kRows = Split == TILE_UP_DOWN;
    using Part = Tile<TileType::Vec, float, kRows ? kHalf : M, kRows ? N : N / 2>;
    using GY = GlobalTensor<float, Shape<1, 1, 1, Part::rows, Part::cols>, Stride<1, 1, 1, N, 1>>;
    const int sub = lane_of(args, source);
    const int64_t part_offset = kRows ? sub * kHalf * N : sub * (N / 2);  // in the slot and in Y_t
    if (source == Lane::kRuntime) pipe.cons.setEntryOffset(static_cast<int>(part_offset * sizeof(float)));
    Part part, out;
    TASSIGN(out, 96 * 1024);
    for (int t = 0; t < pops; ++t) {
        TPOP<Pipe, Part, Split>(pipe, part);
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TADDS(out, part, 1.0f);
        TFREE<Pipe, Split>(pipe);  // a no-op on a2a3 (TPOP freed the slot): it must compile and change nothing
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        __gm__ float* y = data<float>(args, 2) + t * M * N + part_offset;
        TSTORE(GY(y), out);
        set_flag(PIPE_MTE3, PIPE_V, EVENT_ID0);  // out is free again
        wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID0);
    }
}

void v2c(__gm__ int64_t* args, int tiles, Lane source = Lane::kRuntime) {
    using Pipe = TPipe<0, DIR_V2C, M * K * sizeof(half), 2>;
    Pipe pipe(data<uint8_t>(args, 3), 0, 0);
    if (pfsim::current_core().core_kind() == pfsim::CoreKind::Aic) {
        MatA a1;
        MatB b1;
        Acc acc;
        TASSIGN(acc, 0);
        TASSIGN(b1, kMatB);
        TLOAD(b1, GB(data<half>(args, 1)));
        using GY = GlobalTensor<float, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, N, 1>>;
        for (int t = 0; t < tiles; ++t) {
            TPOP<Pipe, MatA, TILE_NO_SPLIT>(pipe, a1);
            cube_matmul(a1, b1, acc);
            TSTORE(GY(data<float>(args, 2) + t * M * N), acc);
        }
        return;
    }
    using HalfA = Tile<TileType::Vec, half, kHalf, K>;
    using GHalf = GlobalTensor<half, Shape<1, 1, 1, kHalf, K>, Stride<1, 1, 1, K, 1>>;
    HalfA part;
    TASSIGN(part, 0);
    const int sub = lane_of(args, source);
    if (source == Lane::kRuntime) pipe.prod.setEntryOffset(static_cast<int>(sub * kHalf * K * sizeof(half)));
    for (int t = 0; t < tiles; ++t) {
        TLOAD(part, GHalf(data<half>(args, 0) + t * M * K + sub * kHalf * K));
        set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
        TPUSH<Pipe, HalfA, TILE_UP_DOWN>(pipe, part);
        set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);  // part is free again
        wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID0);
    }
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    const int scenario = static_cast<int>(args[4]);
    const int tiles = static_cast<int>(args[5]);
    __gm__ uint8_t* fifo = data<uint8_t>(args, 3);
    const bool cube = pfsim::current_core().core_kind() == pfsim::CoreKind::Aic;
    using TwoSlots = TPipe<0, DIR_C2V, kSlot, 2>;
    switch (scenario) {
        case kC2vUpDown: {
            TwoSlots pipe(fifo, 0, 0);
            c2v<TwoSlots, TILE_UP_DOWN>(args, pipe, tiles, tiles);
            break;
        }
        case kC2vLeftRight: {
            TwoSlots pipe(fifo, 0, 0);
            c2v<TwoSlots, TILE_LEFT_RIGHT>(args, pipe, tiles, tiles);
            break;
        }
        case kV2cUpDown: v2c(args, tiles); break;
        case kC2vOneSlot: {
            TPipe<0, DIR_C2V, kSlot, 1> pipe(fifo, 0, 0);
            c2v<decltype(pipe), TILE_UP_DOWN>(args, pipe, tiles, tiles);
            break;
        }
        case kC2vNoAllocate: {
            TwoSlots pipe(fifo, 0, 0);
            pipe.prod.setAllocateStatus(false);
            c2v<TwoSlots, TILE_UP_DOWN>(args, pipe, tiles, tiles);
            pipe.prod.tileIndex = 0;  // nothing to drain: it never waited
            break;
        }
        case kPopOneMore: {
            TwoSlots pipe(fifo, 0, 0);
            c2v<TwoSlots, TILE_UP_DOWN>(args, pipe, tiles, tiles + 1);
            break;
        }
        case kCubePops: {
            TwoSlots pipe(fifo, 0, 0);
            if (cube) {
                Tile<TileType::Mat, float, M, N> t;
                TPOP<TwoSlots, decltype(t), TILE_NO_SPLIT>(pipe, t);
            }
            break;
        }
        case kSlotTooSmall: {
            TPipe<0, DIR_C2V, kSlot / 2, 2> pipe(fifo, 0, 0);
            c2v<decltype(pipe), TILE_UP_DOWN>(args, pipe, tiles, tiles);
            break;
        }
        case kNeverPopped: {
            TwoSlots pipe(fifo, 0, 0);
            pipe.prod.setAllocateStatus(false);
            if (cube) c2v<TwoSlots, TILE_UP_DOWN>(args, pipe, tiles, 0);
            pipe.prod.tileIndex = 0;
            break;
        }
        case kSetNotWaited:
            if (!cube) ffts_cross_core_sync(PIPE_MTE3, 0x1 | (CV_CORES_SYNC << 4) | (9 << 8));
            break;
        case kOneVectorSets:
            if (cube) {
                wait_flag_dev(9);
            } else if (get_sub_block_id(args) == 0) {
                ffts_cross_core_sync(PIPE_MTE3, 0x1 | (CV_CORES_SYNC << 4) | (9 << 8));
            }
            break;
        case kC2vUpDownA2a3sim: {
            TwoSlots pipe(fifo, 0, 0);
            c2v<TwoSlots, TILE_UP_DOWN>(args, pipe, tiles, tiles, Lane::kRegister);
            break;
        }
        case kV2cUpDownA2a3sim: v2c(args, tiles, Lane::kRegister); break;
        case kWorkThenWait:
        case kWorkOnly:
            if (cube) {
                using GY = GlobalTensor<float, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, N, 1>>;
                cube_tiles(args, tiles, [&](int t, Acc& acc) { TSTORE(GY(data<float>(args, 2) + t * M * N), acc); });
            }
            if (scenario == kWorkThenWait) wait_flag_dev(cube ? 9 : 0);
            break;
    }
    pipe_sync();
}
