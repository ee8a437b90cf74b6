// The cube path of a matmul as board kernels write it: A and B from GM into
// L1 (A column-major, B row-major, fractal as on the board), TMOV / TEXTRACT
// into L0A and L0B, TMATMUL into L0C, TSTORE from L0C. "cube_types.h" (written
// by the test) defines K and CUBE_VARIANTS(X), one X(index, TA, TC, M, N) a
// matmul of M x K TA by K x N TA into M x N TC, so that one build serves them all.
// args[4] picks the form: 0 TMATMUL, 1 TMATMUL then TMATMUL_ACC (C = 2 A B),
// 2 TMATMUL_BIAS, 3 TMATMUL_ACC(c, c_in, a, b) with c_in from C's initial values;
// args[5] the variant's index.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "cube_types.h"
#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

template <typename T>
__gm__ T* data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

template <typename TA, typename TC, int M, int N>
void matmul(__gm__ int64_t* args) {
    using MatA = Tile<TileType::Mat, TA, M, K, BLayout::ColMajor, M, K, SLayout::RowMajor, 512>;
    using MatB = Tile<TileType::Mat, TA, K, N, BLayout::RowMajor, K, N, SLayout::ColMajor, 512>;
    using MatBias = Tile<TileType::Mat, TC, 1, N>;
    using GA = GlobalTensor<TA, Shape<1, 1, 1, M, K>, Stride<1, 1, 1, K, 1>>;
    using GB = GlobalTensor<TA, Shape<1, 1, 1, K, N>, Stride<1, 1, 1, N, 1>>;
    using GC = GlobalTensor<TC, Shape<1, 1, 1, M, N>, Stride<1, 1, 1, N, 1>>;
    using GBias = GlobalTensor<TC, Shape<1, 1, 1, 1, N>, Stride<1, 1, 1, 1, 1>>;
    MatA a1;
    MatB b1;
    MatBias bias;
    TileLeft<TA, M, K> a0;
    TileRight<TA, K, N> b0;
    TileAcc<TC, M, N> c0, cin;
    TASSIGN(a1, 0);
    TASSIGN(b1, (MatA::kBytes + 511) / 512 * 512);
    TASSIGN(bias, (MatA::kBytes + 511) / 512 * 512 + (MatB::kBytes + 511) / 512 * 512);
    TASSIGN(a0, 0);
    TASSIGN(b0, 0);
    TASSIGN(c0, 0);
    TASSIGN(cin, (decltype(c0)::kBytes + 511) / 512 * 512);
    TLOAD(a1, GA(data<TA>(args, 0)));
    TLOAD(b1, GB(data<TA>(args, 1)));
    TLOAD(bias, GBias(data<TC>(args, 2)));
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(a0, a1);
    TEXTRACT(b0, b1, 0, 0);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    switch (args[4]) {
        case 1:
            TMATMUL(c0, a0, b0);
            TMATMUL_ACC(c0, a0, b0);
            break;
        case 2: TMATMUL_BIAS(c0, a0, b0, bias); break;
        case 3:
            TLOAD(cin, GC(data<TC>(args, 3)));
            TMATMUL_ACC(c0, cin, a0, b0);
            break;
        default: TMATMUL(c0, a0, b0); break;
    }
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(GC(data<TC>(args, 3)), c0);
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    switch (args[5]) {
#define CUBE_CASE(index, TA, TC, M, N) \
    case index:                        \
        matmul<TA, TC, M, N>(args);    \
        break;
        CUBE_VARIANTS(CUBE_CASE)
#undef CUBE_CASE
        default: return;  // no variant of that index: C stays as it was
    }
    pipe_sync();
}
