// One online-softmax step over a row block of scores S (M x N, float):
// m = rowmax(S * scale), P = exp(S * scale - m), l = rowsum(P), P stored as
// bf16 for the P V matmul. args: S, P, m, l, then scale (float bits).
#include <cstdint>
#include <cstring>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "../attention_shape.h"
#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    using GS = GlobalTensor<float, Shape<1, 1, 1, kM, kN>, Stride<1, 1, 1, kN, 1>>;
    using GP = GlobalTensor<bfloat16_t, Shape<1, 1, 1, kM, kN>, Stride<1, 1, 1, kN, 1>>;
    using GRow = GlobalTensor<float, Shape<1, 1, 1, 1, kM>, Stride<1, 1, 1, 1, 1>>;
    using Scores = Tile<TileType::Vec, float, kM, kN>;
    using Probs = Tile<TileType::Vec, bfloat16_t, kM, kN>;
    using PerRow = Tile<TileType::Vec, float, kM, 1, BLayout::ColMajor>;
    Scores s, p;
    Probs pb;
    PerRow m, l;
    TASSIGN(s, 0);
    TASSIGN(p, Scores::kBytes);
    TASSIGN(pb, 2 * Scores::kBytes);
    TASSIGN(m, 2 * Scores::kBytes + Probs::kBytes);
    TASSIGN(l, 2 * Scores::kBytes + Probs::kBytes + 256);
    float scale;
    const uint32_t bits = static_cast<uint32_t>(args[4]);
    std::memcpy(&scale, &bits, 4);

    TLOAD(s, GS(tensor_data<float>(args, 0)));
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TMULS(s, s, scale);
    TROWMAX(m, s, p);
    TROWEXPANDSUB(p, s, m);
    TEXP(p, p);
    TROWSUM(l, p, s);
    TCVT(pb, p, RoundMode::CAST_RINT);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(GP(tensor_data<bfloat16_t>(args, 1)), pb);
    TSTORE(GRow(tensor_data<float>(args, 2)), m);
    TSTORE(GRow(tensor_data<float>(args, 3)), l);
    pipe_sync();
}
