// Y = relu(X W + bias) in one cluster, the cube and the vector cores in a
// pipeline through a C2V TPipe (one source, built for both core types):
//   cube:   X into L1 once; per column block j of W: W[:, j] into L1, K slices
//           TEXTRACTed into L0A/L0B, TMATMUL / TMATMUL_ACC into L0C, TPUSH of
//           the block (TILE_UP_DOWN);
//   vector: TPOP of its half of the block's rows, + bias[j], ReLU, TSTORE
//           into Y[:, j] -- while the cube works on block j + 1.
// Written for the board's contract: a vector core's lane is the runtime's
// (get_sub_block_id(args)); the no-argument get_subblockid() register, which
// TPUSH/TPOP add to the slot, reads 0 there, so the lane's half of the slot
// is the pipe's entry offset.
// Float operands (the cube's fp32 rate). args: X [kM, kK], W [kK, kN],
// bias [1, kN], Y [kM, kN] (float), the FIFO's GM (two slots).
#include <cstdint>
#include <pto/pto-inst.hpp>
#include <pto/common/fifo.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

namespace {

constexpr int kM = 32, kK = 256, kN = 256, kBlock = 64, kSlice = 64, kHalf = kM / 2;
using Block = TileAcc<float, kM, kBlock>;
using Pipe = TPipe<0, DIR_C2V, Block::kBytes, 2>;

template <typename T>
__gm__ T* tensor_data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

constexpr uint64_t aligned(uint64_t bytes) { return (bytes + 511) / 512 * 512; }

void cube(__gm__ int64_t* args, Pipe& pipe) {
    using MatX = Tile<TileType::Mat, float, kM, kK, BLayout::ColMajor, kM, kK, SLayout::RowMajor, 512>;
    using MatW = Tile<TileType::Mat, float, kK, kBlock, BLayout::RowMajor, kK, kBlock, SLayout::ColMajor, 512>;
    using Left = TileLeft<float, kM, kSlice>;
    using Right = TileRight<float, kSlice, kBlock>;
    using GX = GlobalTensor<float, Shape<1, 1, 1, kM, kK>, Stride<1, 1, 1, kK, 1>>;
    using GW = GlobalTensor<float, Shape<1, 1, 1, kK, kBlock>, Stride<1, 1, 1, kN, 1>>;
    MatX x1;
    MatW w1;
    Left a0;
    Right b0;
    Block acc[2];
    TASSIGN(x1, 0);
    TASSIGN(w1, aligned(MatX::kBytes));
    TASSIGN(a0, 0);
    TASSIGN(b0, 0);
    for (int i = 0; i < 2; ++i) TASSIGN(acc[i], i * aligned(Block::kBytes));
    TLOAD(x1, GX(tensor_data<float>(args, 0)));
    for (int j = 0; j < kN / kBlock; ++j) {
        TLOAD(w1, GW(tensor_data<float>(args, 1) + j * kBlock));
        set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
        if (j >= 2) wait_flag(PIPE_FIX, PIPE_M, j % 2);  // acc[j % 2] has been pushed
        for (int k = 0; k < kK / kSlice; ++k) {
            TEXTRACT(a0, x1, 0, k * kSlice);
            TEXTRACT(b0, w1, k * kSlice, 0);
            set_flag(PIPE_MTE1, PIPE_M, EVENT_ID1);
            wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID1);
            if (k == 0) {
                TMATMUL(acc[j % 2], a0, b0);
            } else {
                TMATMUL_ACC(acc[j % 2], a0, b0);
            }
            set_flag(PIPE_M, PIPE_MTE1, EVENT_ID1);  // a0 and b0 may be refilled
            wait_flag(PIPE_M, PIPE_MTE1, EVENT_ID1);
        }
        set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
        wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
        TPUSH<Pipe, Block, TILE_UP_DOWN>(pipe, acc[j % 2]);
        set_flag(PIPE_FIX, PIPE_M, j % 2);
    }
    for (int j = kN / kBlock - 2; j < kN / kBlock; ++j) wait_flag(PIPE_FIX, PIPE_M, j % 2);
}

void vector(__gm__ int64_t* args, Pipe& pipe) {
    using Part = Tile<TileType::Vec, float, kHalf, kBlock>;
    using Bias = Tile<TileType::Vec, float, 1, kBlock>;
    using GBias = GlobalTensor<float, Shape<1, 1, 1, 1, kBlock>, Stride<1, 1, 1, kBlock, 1>>;
    using GY = GlobalTensor<float, Shape<1, 1, 1, kHalf, kBlock>, Stride<1, 1, 1, kN, 1>>;
    constexpr uint64_t kWork = 2 * Pipe::kSlotSize;  // below: the pipe's two local slots
    Part part, out;
    Bias bias;
    TASSIGN(out, kWork);
    TASSIGN(bias, kWork + Part::kBytes);
    const int32_t lane = get_sub_block_id(args);
    const int64_t rows = int64_t{lane} * kHalf;
    pipe.cons.setEntryOffset(static_cast<int>(rows * kBlock * sizeof(float)));
    for (int j = 0; j < kN / kBlock; ++j) {
        TLOAD(bias, GBias(tensor_data<float>(args, 2) + j * kBlock));
        TPOP<Pipe, Part, TILE_UP_DOWN>(pipe, part);
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        if (j > 0) wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID1);  // out has been stored
        TCOLEXPANDADD(out, part, bias);
        TRELU(out, out);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(GY(tensor_data<float>(args, 3) + rows * kN + j * kBlock), out);
        set_flag(PIPE_MTE3, PIPE_V, EVENT_ID1);
    }
    wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID1);
}

}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    Pipe pipe(tensor_data<uint8_t>(args, 4), 0, 0);
#if defined(__DAV_CUBE__)
    cube(args, pipe);
#else
    vector(args, pipe);
#endif
    pipe_sync();
}
