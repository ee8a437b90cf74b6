// The layer between the two matmuls, on a vector core: H = the first
// layer's accumulator in the second layer's operand type. args: C (M x N),
// H (M x N), then the type pair (0: float -> bf16; 1: int32 -> int8 through
// half, scaled by args[3], a float's bits, rounded to nearest even, saturated).
#include <cstdint>
#include <cstring>
#include <pto/pto-inst.hpp>

#include "../gemm_staged.h"

using namespace pto;

#include "pipe_sync.h"

template <typename T>
using GM = GlobalTensor<T, Shape<1, 1, 1, kM, kN>, Stride<1, 1, 1, kN, 1>>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    if (args[2] == 0) {
        Tile<TileType::Vec, float, kM, kN> c;
        Tile<TileType::Vec, bfloat16_t, kM, kN> h;
        TASSIGN(c, 0);
        TASSIGN(h, decltype(c)::kBytes);
        TLOAD(c, (GM<float>(tensor_data<float>(args, 0))));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TCVT(h, c, RoundMode::CAST_RINT);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE((GM<bfloat16_t>(tensor_data<bfloat16_t>(args, 1))), h);
    } else {
        float scale;
        const uint32_t bits = static_cast<uint32_t>(args[3]);
        std::memcpy(&scale, &bits, 4);
        Tile<TileType::Vec, int32_t, kM, kN> c;
        Tile<TileType::Vec, half, kM, kN> wide;
        Tile<TileType::Vec, int8_t, kM, kN> h;
        TASSIGN(c, 0);
        TASSIGN(wide, decltype(c)::kBytes);
        TASSIGN(h, decltype(c)::kBytes + decltype(wide)::kBytes);
        TLOAD(c, (GM<int32_t>(tensor_data<int32_t>(args, 0))));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TCVT(wide, c, RoundMode::CAST_RINT);
        TMULS(wide, wide, half(scale));
        TCVT(h, wide, RoundMode::CAST_RINT);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE((GM<int8_t>(tensor_data<int8_t>(args, 1))), h);
    }
    pipe_sync();
}
