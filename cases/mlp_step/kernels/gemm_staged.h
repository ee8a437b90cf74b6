// C (M x N) = A (M x K) B (K x N) on the cube, staged as board kernels do:
// A and B whole into L1, then per K slice of kSlice, TEXTRACT of A's columns
// into L0A and of B's rows into L0B and one TMATMUL / TMATMUL_ACC into L0C;
// C stored from L0C. TA is the operand type, TC the accumulator's. The
// kernel calls pipe_sync() after it.
#pragma once

#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

constexpr int kM = 32, kK = 256, kN = 256, kSlice = 64;

template <typename T>
inline __gm__ T* tensor_data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

template <typename TA, typename TC>
inline void gemm_staged(__gm__ TA* a, __gm__ TA* b, __gm__ TC* c) {
    using namespace pto;
    using GA = GlobalTensor<TA, Shape<1, 1, 1, kM, kK>, Stride<1, 1, 1, kK, 1>>;
    using GB = GlobalTensor<TA, Shape<1, 1, 1, kK, kN>, Stride<1, 1, 1, kN, 1>>;
    using GC = GlobalTensor<TC, Shape<1, 1, 1, kM, kN>, Stride<1, 1, 1, kN, 1>>;
    using MatA = Tile<TileType::Mat, TA, kM, kK, BLayout::ColMajor, kM, kK, SLayout::RowMajor, 512>;
    using MatB = Tile<TileType::Mat, TA, kK, kN, BLayout::RowMajor, kK, kN, SLayout::ColMajor, 512>;
    MatA a1;
    MatB b1;
    using Left = TileLeft<TA, kM, kSlice>;
    using Right = TileRight<TA, kSlice, kN>;
    Left a0[2];
    Right b0[2];
    TileAcc<TC, kM, kN> c0;
    TASSIGN(a1, 0);
    TASSIGN(b1, (MatA::kBytes + 511) / 512 * 512);
    for (int i = 0; i < 2; ++i) {
        TASSIGN(a0[i], i * ((Left::kBytes + 511) / 512 * 512));
        TASSIGN(b0[i], i * ((Right::kBytes + 511) / 512 * 512));
    }
    TASSIGN(c0, 0);
    TLOAD(a1, GA(a));
    TLOAD(b1, GB(b));
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    for (int k = 0; k < kK / kSlice; ++k) {
        const int buf = k % 2;
        if (k >= 2) wait_flag(PIPE_M, PIPE_MTE1, buf);  // the slice two back is multiplied
        TEXTRACT(a0[buf], a1, 0, k * kSlice);
        TEXTRACT(b0[buf], b1, k * kSlice, 0);
        set_flag(PIPE_MTE1, PIPE_M, buf);
        wait_flag(PIPE_MTE1, PIPE_M, buf);
        if (k == 0) {
            TMATMUL(c0, a0[buf], b0[buf]);
        } else {
            TMATMUL_ACC(c0, a0[buf], b0[buf]);
        }
        set_flag(PIPE_M, PIPE_MTE1, buf);
    }
    for (int k = kK / kSlice > 2 ? kK / kSlice - 2 : 0; k < kK / kSlice; ++k) wait_flag(PIPE_M, PIPE_MTE1, k % 2);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(GC(c), c0);
}
