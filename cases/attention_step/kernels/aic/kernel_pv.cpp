// O = P V on the cube: P (M x N, bf16) and V (N x D, bf16) through L1 and L0,
// O (M x D, float). V is the operand the warm task prefetches.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "../attention_shape.h"
#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    using GP = GlobalTensor<bfloat16_t, Shape<1, 1, 1, kM, kN>, Stride<1, 1, 1, kN, 1>>;
    using GV = GlobalTensor<bfloat16_t, Shape<1, 1, 1, kN, kD>, Stride<1, 1, 1, kD, 1>>;
    using GO = GlobalTensor<float, Shape<1, 1, 1, kM, kD>, Stride<1, 1, 1, kD, 1>>;
    Tile<TileType::Mat, bfloat16_t, kM, kN, BLayout::ColMajor, kM, kN, SLayout::RowMajor, 512> p1;
    Tile<TileType::Mat, bfloat16_t, kN, kD, BLayout::RowMajor, kN, kD, SLayout::ColMajor, 512> v1;
    TileLeft<bfloat16_t, kM, kN> p0;
    TileRight<bfloat16_t, kN, kD> v0;
    TileAcc<float, kM, kD> o0;
    TASSIGN(p1, 0);
    TASSIGN(v1, 65536);
    TASSIGN(p0, 0);
    TASSIGN(v0, 0);
    TASSIGN(o0, 0);
    TLOAD(p1, GP(tensor_data<bfloat16_t>(args, 0)));
    TLOAD(v1, GV(tensor_data<bfloat16_t>(args, 1)));
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(p0, p1);
    TEXTRACT(v0, v1, 0, 0);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    TMATMUL(o0, p0, v0);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(GO(tensor_data<float>(args, 2)), o0);
    pipe_sync();
}
