// A compute-bound cube task: C = sum over `iters` of A x B for one 128 x 128
// tile pair (fp16 in, fp32 accumulated in L0C). Its operands are loaded
// once; the cube then runs for iters x 512 cycles.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pipe_sync.h"

constexpr int kT = 128;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* a = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* b = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* c = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    const int64_t iters = args[3];

    using In = GlobalTensor<half, Shape<1, 1, 1, kT, kT>, Stride<1, 1, 1, kT, 1>>;
    using Out = GlobalTensor<float, Shape<1, 1, 1, kT, kT>, Stride<1, 1, 1, kT, 1>>;
    TileLeft<half, kT, kT> left;
    TileRight<half, kT, kT> right;
    TileAcc<float, kT, kT> acc;
    TASSIGN(left, 0);
    TASSIGN(right, 0);
    TASSIGN(acc, 0);
    TLOAD(left, In(reinterpret_cast<__gm__ half*>(a->buffer.addr)));
    TLOAD(right, In(reinterpret_cast<__gm__ half*>(b->buffer.addr)));
    set_flag(PIPE_MTE2, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_M, EVENT_ID0);
    TMATMUL(acc, left, right);
    for (int64_t i = 1; i < iters; ++i) TMATMUL_ACC(acc, acc, left, right);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(Out(reinterpret_cast<__gm__ float*>(c->buffer.addr)), acc);
    pipe_sync();
}
