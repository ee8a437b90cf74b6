// S = Q K^T on the cube: Q (M x D, bf16) and K^T (D x N, bf16) from GM into
// L1, to L0A / L0B, one TMATMUL into L0C (float), stored to S (M x N, float).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "../attention_shape.h"
#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    using GQ = GlobalTensor<bfloat16_t, Shape<1, 1, 1, kM, kD>, Stride<1, 1, 1, kD, 1>>;
    using GKt = GlobalTensor<bfloat16_t, Shape<1, 1, 1, kD, kN>, Stride<1, 1, 1, kN, 1>>;
    using GS = GlobalTensor<float, Shape<1, 1, 1, kM, kN>, Stride<1, 1, 1, kN, 1>>;
    Tile<TileType::Mat, bfloat16_t, kM, kD, BLayout::ColMajor, kM, kD, SLayout::RowMajor, 512> q1;
    Tile<TileType::Mat, bfloat16_t, kD, kN, BLayout::RowMajor, kD, kN, SLayout::ColMajor, 512> kt1;
    TileLeft<bfloat16_t, kM, kD> q0;
    TileRight<bfloat16_t, kD, kN> kt0;
    TileAcc<float, kM, kN> s0;
    TASSIGN(q1, 0);
    TASSIGN(kt1, 4096);
    TASSIGN(q0, 0);
    TASSIGN(kt0, 0);
    TASSIGN(s0, 0);
    TLOAD(q1, GQ(tensor_data<bfloat16_t>(args, 0)));
    TLOAD(kt1, GKt(tensor_data<bfloat16_t>(args, 1)));
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(q0, q1);
    TMOV(kt0, kt1);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    TMATMUL(s0, q0, kt0);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(GS(tensor_data<float>(args, 2)), s0);
    pipe_sync();
}
